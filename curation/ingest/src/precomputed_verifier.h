// PrecomputedVerifier: a near-duplicate verifier that answers from
// similarities computed beforehand on the ingest's threads, and asks the
// verifier it wraps otherwise. IngestBatch computes, for every record of a
// chunk, the similarity to each stored candidate its finder will verify, in
// parallel; the decisions then run one record at a time, in order, and find
// those similarities here, so they are exactly those of one thread.
#pragma once

#include <cstddef>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/core/thread_pool.h"

namespace winnow::curation::ingest {

class PrecomputedVerifier final : public dedup::NearDuplicateVerifier {
 public:
  // Keeps a reference to `base`, which must outlive this verifier.
  explicit PrecomputedVerifier(const dedup::NearDuplicateVerifier& base) : base_(base) {}

  std::string name() const override { return base_.name(); }
  double threshold() const override { return base_.threshold(); }
  double threshold_for(const ManifestRecord& a, const ManifestRecord& b) const override {
    return base_.threshold_for(a, b);
  }
  double similarity(const ManifestRecord& a, const ManifestRecord& b) const override;

  using Pair = std::pair<const ManifestRecord*, const ManifestRecord*>;
  // Computes base.similarity of every pair on `pool` and remembers each by
  // the records' addresses (which must stay valid until clear()). A pair
  // whose similarity throws is not remembered: asked later, it throws then.
  void precompute(const std::vector<Pair>& pairs, const ThreadPool& pool);
  void clear() { known_.clear(); }

 private:
  struct PairHash {
    std::size_t operator()(const Pair& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  const dedup::NearDuplicateVerifier& base_;
  std::unordered_map<Pair, double, PairHash> known_;
};

}  // namespace winnow::curation::ingest
