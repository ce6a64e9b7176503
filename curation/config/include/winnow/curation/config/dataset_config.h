// CurationConfig: a dataset's configuration, written by `winnow init` into the
// store's meta and read back by every process that opens the dataset. The
// fields are the parameters of the embedder, the index and the decision rules
// (docs/cli.md, "What `winnow init` records"; the options: docs/cli.md,
// "Subcommands").
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "winnow/curation/config/image_issue_policy.h"
#include "winnow/image/image_decoder.h"

namespace winnow::curation {

namespace dedup {
class ColourImageNearDuplicateVerifier;
class TextNearDuplicateVerifier;
}  // namespace dedup

// The dataset's configuration, recorded in meta by init and read back on open.
struct CurationConfig {
  static constexpr const char* kMetaKey = "curation.config";  // its key in the store's meta

  std::string embedder = "pixels(width=28,height=28,fourier=6)";
  // Chosen by winnow (init without --embedder): the first content given picks
  // the default for its kind while no sample holds an embedding
  // (embedder_choice.h). A stored config without it keeps its embedder.
  bool embedder_auto = false;
  // Exact search until 65,536 vectors, then IVF (index/auto_vector_index.h).
  std::string index = "auto";
  int candidates = 10;                     // near-dup candidates from the index
  double min_candidate_similarity = 0.98;  // index cosine below this: not verified
  double candidate_margin = 2.0;           // verify only within this of the best cosine (2: all)
  double image_threshold = 0.99;           // shifted Pearson
  int image_max_shift = 1;
  // Decoded image files are compared on colour working images
  // (dedup::ColourImageNearDuplicateVerifier; docs/images.md).
  double image_colour_threshold = 0.96;
  // The candidate gate of decoded image files (index cosine of the grey
  // working image's embedding): lower than min_candidate_similarity, since a
  // crop of a few percent moves the embedding more than a pixels record's
  // shift or noise does. 0.85 finds nearly every near copy at the target
  // speed on one core, where a higher gate missed some (docs/images.md).
  double image_file_min_candidate_similarity = 0.85;
  // Text near duplicates: shingle overlap >= text_threshold with a Jaccard
  // of at least text_min_jaccard (dedup::TextVerifierOptions). A stored
  // config without text_min_jaccard gets text_threshold: the Jaccard-only
  // rule such a database was curated with.
  double text_threshold = 0.8;
  double text_min_jaccard = 0.5;
  int text_shingle = 5;
  // The index cosine below which a text record's candidates are not
  // verified: min_candidate_similarity is the gate of pixels records, tuned
  // for the pixels embedder. 0.7 measured for hashed-ngrams(n=3,dim=256) on
  // man-page prose with the overlap rule above (docs/curation.md, "Text near
  // duplicates"). A stored config without it (written before text had its
  // own gate, and so with the Jaccard-only rule) gets
  // min(min_candidate_similarity, 0.85), 0.85 being the gate measured for
  // that rule: never stricter than the gate such a database used until then.
  static constexpr double kDefaultTextMinCandidateSimilarity = 0.7;
  static constexpr double kJaccardOnlyTextMinCandidateSimilarity = 0.85;
  double text_min_candidate_similarity = kDefaultTextMinCandidateSimilarity;
  // kNN label vote: k labelled neighbours (accepted and label_issue samples),
  // flagged below this share of agreeing weight. 30 and 0.08 (at most about 2
  // of 30 agree): the best measured on Fashion-MNIST streams (docs/curation.md,
  // "Label quality"). A stored config keeps its own values.
  int label_k = 50;
  double label_flag_below = 0.08;
  int min_label_neighbours = 5;  // fewer labelled neighbours: never a label issue
  // The vote judges a class only where its neighbours beat chance by this
  // lift, and the dataset's by as much (labels::LabelEvidence); elsewhere it
  // abstains. A stored config without it gets 0: it abstains only on classes
  // whose neighbours agree less often than chance.
  double label_min_lift = 0.25;
  // After each batch, the doubtful labels judged when the dataset had fewer
  // than labelled / (1 + label_rejudge_growth) labelled samples are judged
  // again against today's, the unsure ones judged below labelled / (1 +
  // label_rejudge_growth)^3, and every label judged below labelled / (1 +
  // label_rejudge_growth)^6 (LabelJudgementLog; 0: never). A stored config
  // without it gets 0: the online-only rule such a database was curated with.
  double label_rejudge_growth = 0.5;
  // Which copy of an image file a near-duplicate pair keeps: "largest" (the
  // larger decoded size; equal sizes keep the earlier: a larger copy arriving
  // later makes the earlier one its duplicate) or "first" (arrival order). A
  // stored config without it keeps "first".
  std::string keep = "largest";
  int micro_batch = 256;  // records embedded, searched and indexed together
  // Image files with more pixels are rejected before decoding (docs/images.md).
  std::uint64_t max_image_pixels = image::DecodeOptions::kDefaultMaxPixels;
  // Image-quality issues of decoded image files: thresholds, flag or reject
  // (image_issues.h). A stored config without it gets the defaults (flag).
  ImageIssuePolicy image_issues;

  std::string to_json() const;
  // Throws winnow::Error naming the bad field.
  static CurationConfig from_json(const std::string& json);
  void validate() const;
};

// The near-duplicate verifiers of a dataset with `config`: images (colour,
// else grey) and text.
std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> make_image_verifier(
    const CurationConfig& config);
std::unique_ptr<dedup::TextNearDuplicateVerifier> make_text_verifier(const CurationConfig& config);

}  // namespace winnow::curation
