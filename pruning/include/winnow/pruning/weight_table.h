// WeightTable: each sample's loss weight for the current plan.
//
// Policies use a handful of distinct weights (1, 1/(1-r), one per quantile
// bucket), so a weight is stored as a 1-byte code into a small palette: 1 byte
// per sample instead of 4, and nothing at all while every weight is 1.
#pragma once

#include <cstdint>
#include <vector>

namespace winnow {

struct EpochPlan;

class WeightTable {
 public:
  explicit WeightTable(std::uint64_t num_samples) : num_samples_(num_samples) {}

  float operator[](std::uint64_t id) const { return codes_.empty() ? 1.0f : palette_[codes_[id]]; }

  // Takes the weights of `plan`; samples the plan skips get weight 1.
  void assign(const EpochPlan& plan);
  // As assign(), but swaps plan.codes_by_id in when the plan has it (the
  // table's old codes stay in the plan, as a buffer to reuse).
  void take(EpochPlan& plan);
  void reset_to_one();

  bool all_one() const { return codes_.empty(); }
  std::uint64_t size() const { return num_samples_; }
  std::uint64_t bytes() const { return codes_.size() + palette_.size() * sizeof(float); }

 private:
  std::uint64_t num_samples_;
  std::vector<std::uint8_t> codes_;  // empty while every weight is 1
  std::vector<float> palette_{1.0f};
};

}  // namespace winnow
