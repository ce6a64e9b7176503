#include "precomputed_verifier.h"

#include <optional>

namespace winnow::curation::ingest {

double PrecomputedVerifier::similarity(const ManifestRecord& a, const ManifestRecord& b) const {
  const auto it = known_.find({&a, &b});
  return it != known_.end() ? it->second : base_.similarity(a, b);
}

void PrecomputedVerifier::precompute(const std::vector<Pair>& pairs, const ThreadPool& pool) {
  std::vector<std::optional<double>> values(pairs.size());
  pool.for_each(pairs.size(), [&](std::size_t i) {
    try {
      values[i] = base_.similarity(*pairs[i].first, *pairs[i].second);
    } catch (const std::exception&) {
      // Left to the decision, which reports it as it would on one thread.
    }
  });
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (values[i]) known_.emplace(pairs[i], *values[i]);
  }
}

}  // namespace winnow::curation::ingest
