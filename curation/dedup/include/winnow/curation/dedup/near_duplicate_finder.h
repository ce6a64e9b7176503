// Finding a new sample's near duplicate among the accepted ones: candidates
// from the vector index (top `candidates` by cosine of the embeddings, those
// at or above `min_candidate_similarity`), then the verifier on each; the
// best verified candidate at or above the verifier's threshold is the match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/index/vector_index.h"

namespace winnow::curation::dedup {

struct NearDuplicateFinderOptions {
  int candidates = 10;                    // k of the index search
  double min_candidate_similarity = 0.0;  // index cosine below this: not verified
};

struct NearDuplicateMatch {
  bool found = false;
  std::int64_t id = -1;               // best verified candidate (even when !found), -1 if none
  double similarity = 0.0;            // its verifier similarity
  double candidate_similarity = 0.0;  // its index cosine
  int candidates_checked = 0;         // candidates the verifier ran on, or known
  int candidates_known = 0;           // of those, verdicts given (KnownVerification)
  int candidates_ruled_out = 0;       // candidates not verified: RuledOut said they cannot match
  // Thresholds used, reported with the decision.
  double threshold = 0.0;  // verifier threshold
  double min_candidate_similarity = 0.0;
  int candidates = 0;
};

// The content of an accepted sample by its index id, or nullptr when unknown
// (such candidates are skipped).
using RecordLookup = std::function<const ManifestRecord*(std::int64_t id)>;

// The verifier's verdict on a (record, candidate) pair made elsewhere before
// (winnow.dask's workers verify the candidates of their neighbour lists), or
// nothing: the candidate is then looked up and verified here.
struct Verification {
  double similarity = 0.0;
  double threshold = 0.0;  // the verifier's threshold_for the pair
};
using KnownVerification = std::function<std::optional<Verification>(std::int64_t id)>;

// Whether a candidate surely falls below the verifier's threshold, known
// without its content (a TextSketch's bound): such a candidate is neither
// looked up nor verified, and cannot be the match.
using RuledOut = std::function<bool(std::int64_t id)>;

class NearDuplicateFinder {
 public:
  // Keeps references to both; they must outlive the finder.
  NearDuplicateFinder(const index::VectorIndex& index, const NearDuplicateVerifier& verifier,
                      NearDuplicateFinderOptions options = {});

  // Searches the index for `embedding` (index.dim() floats) and verifies.
  NearDuplicateMatch find(const float* embedding, const ManifestRecord& record,
                          const RecordLookup& lookup) const;

  // Verifies the candidates of row `query` of a search already made (its k
  // may differ from options.candidates; at most that many are used); a
  // candidate whose verdict `known` gives is taken as it is, and one that
  // `ruled_out` rules out is skipped (the best verified candidate is then
  // among the others).
  NearDuplicateMatch verify(const index::SearchResults& results, std::size_t query,
                            const ManifestRecord& record, const RecordLookup& lookup,
                            const KnownVerification& known = {},
                            const RuledOut& ruled_out = {}) const;

  // How many leading candidates of row `query` verify() compares: ranks with
  // a real id and an index cosine >= min_candidate_similarity, at most
  // options.candidates (rows are sorted by decreasing cosine).
  std::size_t candidate_count(const index::SearchResults& results, std::size_t query) const;

  const NearDuplicateFinderOptions& options() const { return options_; }

 private:
  const index::VectorIndex& index_;
  const NearDuplicateVerifier& verifier_;
  NearDuplicateFinderOptions options_;
};

}  // namespace winnow::curation::dedup
