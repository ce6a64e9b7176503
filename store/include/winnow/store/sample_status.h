// SampleStatus: the curation decision recorded for every sample, and
// StatusCounts, how many samples carry each one.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace winnow::store {

// Stored as text in samples.status; the schema's CHECK lists the same names.
enum class SampleStatus {
  accepted,
  duplicate_exact,  // same content hash as an earlier sample (duplicate_of)
  duplicate_near,   // embedding too close to an earlier sample (duplicate_of)
  label_issue,      // label judged wrong or too uncertain
  rejected,         // anything else the pipeline refuses
};

inline constexpr std::size_t kSampleStatusCount = 5;
inline constexpr std::array<SampleStatus, kSampleStatusCount> kAllSampleStatuses = {
    SampleStatus::accepted, SampleStatus::duplicate_exact, SampleStatus::duplicate_near,
    SampleStatus::label_issue, SampleStatus::rejected};

// The stored name: "accepted", "duplicate_exact", ...
std::string_view to_string(SampleStatus status);

// Inverse of to_string; throws winnow::Error naming `name` when it is unknown.
SampleStatus parse_sample_status(std::string_view name);

// True for the two statuses that must point at an original (duplicate_of).
bool is_duplicate(SampleStatus status);

struct StatusCounts {
  std::array<std::int64_t, kSampleStatusCount> by_status{};

  std::int64_t& operator[](SampleStatus status) {
    return by_status[static_cast<std::size_t>(status)];
  }
  std::int64_t operator[](SampleStatus status) const {
    return by_status[static_cast<std::size_t>(status)];
  }
  std::int64_t total() const;
};

}  // namespace winnow::store
