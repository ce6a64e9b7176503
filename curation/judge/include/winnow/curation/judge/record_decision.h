// decide(): what ingest makes of one record, given the facts the batch
// gathered about it (ingest_batch.cpp) and the dataset's thresholds. Pure: no
// store, index or file is touched, so every rule can be tested on its own.
//
// In order, the first that applies decides:
//   1. rejection      the reader refused the record, or its key is taken
//   1a. annotations   a record without content (import-annotations) ->
//       only          accepted, with no further check: there is nothing to
//                     compare (no dedup, neighbours, label quality or gain)
//   2. exact dedup    an earlier sample has the same content hash
//   3. image quality  an image file with an image-quality issue, when the
//                     dataset rejects them (image_issues.h) -> rejected
//   4. embedding      the embedder failed -> rejected
//   5. near dedup     a verified candidate at or above the verifier threshold,
//                     unless the record is the better copy to keep (an image
//                     file of larger decoded size, keep = largest): then it
//                     goes on, and its original becomes its duplicate
//   6. label quality  flagged, over at least min_label_neighbours labelled
//                     neighbours, and the label has at least label_k accepted
//                     samples already (a class arriving late can still get in),
//                     where the vote judges the label's class (it abstains
//                     where the neighbours barely beat chance: accepted, the
//                     abstention in the details)
//   otherwise accepted, with its gain.
// Every decision carries a reason and a details_json object with the
// thresholds, similarities and neighbour counts used.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/store/sample_record.h"

namespace winnow::curation::judge {

// The record and what the store says about it.
struct Candidate {
  std::string key;  // as the manifest (or the reader's rejection) gives it
  std::size_t line = 0;
  // The file read for a path record (in the details: where the gallery finds
  // the picture), "" for inline content.
  std::string file;
  // A text record's text (kept in a near duplicate's details, cut to
  // kTextExcerptBytes: the copy's content is not stored otherwise).
  std::string_view text;
  // A pixels record's grey levels (width x height; kept, base64, in a near
  // duplicate's details when at most kCopyPixelsBytes, so the gallery can
  // show the copy).
  const std::vector<std::uint8_t>* pixels = nullptr;
  std::size_t width = 0, height = 0;
  std::string content_hash;
  // The reader's reason, or that the key is already in the dataset.
  std::optional<std::string> rejection;
  std::optional<std::int64_t> exact_duplicate_of;  // the first sample with its content hash
  std::optional<std::string> embed_error;          // the embedder's message
  // Why the record's image is rejected for its image-quality issues (only
  // when the dataset rejects them).
  std::optional<std::string> image_issues;
  // A record without content (ContentKind::none): nothing to compare.
  bool annotations_only = false;
  // The record's label and its exact original's (names), when it has them:
  // copies with different labels are a label conflict.
  std::optional<std::string> label;
  std::optional<std::string> exact_original_label;
  std::string exact_original_key;  // named in the reason
};

inline constexpr std::size_t kTextExcerptBytes = 2000;
inline constexpr std::size_t kCopyPixelsBytes = 4096;

// What the index says about an embedded record.
struct Neighbourhood {
  double gain = 0.0;
  std::size_t neighbours = 0;  // nearest accepted samples found
  // The verified near-duplicate candidates (match.id a sample id); unset when
  // the record's kind has no verifier or there were no neighbours.
  std::optional<dedup::NearDuplicateMatch> near_duplicate;
  // The label's agreement with the neighbours; unset for an unlabelled record.
  std::optional<labels::LabelQualityResult> label_quality;
  std::int64_t label_support = 0;  // accepted samples of the record's label
  std::string suggested_label;     // the name of label_quality->suggested_label
  // Whether the vote judges the label's class on this dataset, and how far
  // that class's neighbours beat chance (labels::LabelEvidence).
  bool label_judged = true;
  double label_lift = 0.0;
  // The label (name) of the near duplicate's original, when it has one.
  std::optional<std::string> near_original_label;
  std::string near_original_key;  // named in the reason
  // Set when the record is the better copy of its near duplicate's original
  // (the decoded sizes of both): the record is judged on, and the original
  // becomes its duplicate.
  struct BetterCopy {
    std::int64_t original = 0;
    std::int64_t width = 0, height = 0;                    // the record's image file
    std::int64_t original_width = 0, original_height = 0;  // the original's
  };
  std::optional<BetterCopy> better_copy;
};

// Whether an image file of `width` x `height` is the better copy to keep
// than its original's: a larger decoded size (width x height); equal sizes
// keep the original.
inline bool larger_copy(std::int64_t width, std::int64_t height, std::int64_t original_width,
                        std::int64_t original_height) {
  return width * height > original_width * original_height;
}

// Whether a copy labelled `label` of an original labelled `original_label`
// is a label conflict: both labelled, differently.
bool label_conflict(const std::optional<std::string>& label,
                    const std::optional<std::string>& original_label);

// The thresholds of decide() that the facts do not already carry.
struct DecisionRules {
  double candidate_margin = 2.0;  // reported with the near-duplicate details
  int min_label_neighbours = 5;
  int label_k = 15;
  double label_min_lift = 0.0;  // reported with an abstention (labels::LabelEvidence)

  static DecisionRules of(const CurationConfig& config);
};

// The reason of every sample accepted under rule 1a: how export, the events
// and the docs tell an annotations-only sample from a checked one.
inline constexpr const char* kAnnotationsOnlyReason =
    "annotations only: no content, so no duplicate, neighbour or label-quality checks";

// `neighbourhood` is read only when the record got past steps 1 to 4.
// Whether the vote would flag the record's label but abstains on its class.
bool abstained(const Neighbourhood& n, const DecisionRules& rules);

store::Decision decide(const Candidate& candidate, const Neighbourhood& neighbourhood,
                       const DecisionRules& rules);

// The nearest samples an ingest takes per record: enough for the
// near-duplicate candidates, the label vote and the gain.
int neighbours_per_record(const CurationConfig& config);

}  // namespace winnow::curation::judge
