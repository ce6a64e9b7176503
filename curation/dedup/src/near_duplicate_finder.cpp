#include "winnow/curation/dedup/near_duplicate_finder.h"

#include <cmath>

#include "winnow/error.h"

namespace winnow::curation::dedup {

NearDuplicateFinder::NearDuplicateFinder(const index::VectorIndex& index,
                                         const NearDuplicateVerifier& verifier,
                                         NearDuplicateFinderOptions options)
    : index_(index), verifier_(verifier), options_(options) {
  WINNOW_THROW_IF_NOT(options_.candidates >= 1 && options_.candidates <= 4096,
                      "near-duplicate finder: candidates={} must be in [1, 4096]",
                      options_.candidates);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.min_candidate_similarity),
                      "near-duplicate finder: min_candidate_similarity must be finite");
}

NearDuplicateMatch NearDuplicateFinder::find(const float* embedding, const ManifestRecord& record,
                                             const RecordLookup& lookup) const {
  if (index_.size() == 0) {
    return verify(index::SearchResults::padded(1, 0), 0, record, lookup);
  }
  const index::SearchResults results = index_.search(1, embedding, options_.candidates);
  return verify(results, 0, record, lookup);
}

std::size_t NearDuplicateFinder::candidate_count(const index::SearchResults& results,
                                                 std::size_t query) const {
  const std::size_t n =
      std::min<std::size_t>(results.k, static_cast<std::size_t>(options_.candidates));
  std::size_t count = 0;
  while (count < n && results.id(query, count) >= 0 &&
         results.similarity(query, count) >= options_.min_candidate_similarity) {
    ++count;
  }
  return count;
}

NearDuplicateMatch NearDuplicateFinder::verify(const index::SearchResults& results,
                                               std::size_t query, const ManifestRecord& record,
                                               const RecordLookup& lookup,
                                               const KnownVerification& known,
                                               const RuledOut& ruled_out) const {
  NearDuplicateMatch match;
  match.threshold = verifier_.threshold();
  match.min_candidate_similarity = options_.min_candidate_similarity;
  match.candidates = options_.candidates;
  bool have_best = false;
  const std::size_t n = candidate_count(results, query);
  for (std::size_t r = 0; r < n; ++r) {
    const std::int64_t id = results.id(query, r);
    const float cand_sim = results.similarity(query, r);
    std::optional<Verification> verdict = known ? known(id) : std::nullopt;
    if (verdict) {
      ++match.candidates_known;
    } else if (ruled_out && ruled_out(id)) {
      ++match.candidates_ruled_out;
      continue;
    } else {
      const ManifestRecord* other = lookup ? lookup(id) : nullptr;
      if (other == nullptr) continue;
      // A verifier may compare some pairs by another measure with its own
      // threshold: the best candidate is the one furthest above its threshold.
      verdict = Verification{verifier_.similarity(record, *other),
                             verifier_.threshold_for(record, *other)};
    }
    const double sim = verdict->similarity;
    const double threshold = verdict->threshold;
    ++match.candidates_checked;
    if (!have_best || sim - threshold > match.similarity - match.threshold) {
      have_best = true;
      match.id = id;
      match.similarity = sim;
      match.threshold = threshold;
      match.candidate_similarity = cand_sim;
    }
  }
  match.found = have_best && match.similarity >= match.threshold;
  return match;
}

}  // namespace winnow::curation::dedup
