#include "winnow/curation/config/dataset_config.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "winnow/curation/dedup/colour_image_verifier.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

namespace winnow::curation {

using nlohmann::json;

std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> make_image_verifier(
    const CurationConfig& config) {
  dedup::ColourImageVerifierOptions colour;
  colour.threshold = config.image_colour_threshold;
  colour.max_shift = config.image_max_shift;
  return std::make_unique<dedup::ColourImageNearDuplicateVerifier>(
      colour, dedup::ImageVerifierOptions{config.image_max_shift, config.image_threshold});
}

std::unique_ptr<dedup::TextNearDuplicateVerifier> make_text_verifier(const CurationConfig& config) {
  return std::make_unique<dedup::TextNearDuplicateVerifier>(dedup::TextVerifierOptions{
      config.text_shingle, config.text_threshold, config.text_min_jaccard});
}

// --- config ------------------------------------------------------------------

std::string CurationConfig::to_json() const {
  json j = {{"embedder", embedder},
            {"embedder_auto", embedder_auto},
            {"index", index},
            {"candidates", candidates},
            {"min_candidate_similarity", min_candidate_similarity},
            {"candidate_margin", candidate_margin},
            {"image_threshold", image_threshold},
            {"image_max_shift", image_max_shift},
            {"image_colour_threshold", image_colour_threshold},
            {"image_file_min_candidate_similarity", image_file_min_candidate_similarity},
            {"text_threshold", text_threshold},
            {"text_min_jaccard", text_min_jaccard},
            {"text_shingle", text_shingle},
            {"text_min_candidate_similarity", text_min_candidate_similarity},
            {"label_k", label_k},
            {"label_flag_below", label_flag_below},
            {"min_label_neighbours", min_label_neighbours},
            {"label_min_lift", label_min_lift},
            {"label_rejudge_growth", label_rejudge_growth},
            {"keep", keep},
            {"micro_batch", micro_batch},
            {"max_image_pixels", max_image_pixels},
            {"image_issues", image_issues.to_json()}};
  return j.dump();
}

CurationConfig CurationConfig::from_json(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_object(), "curation config is not a JSON object: {}", text);
  CurationConfig c;
  auto get = [&](const char* key, auto& field) {
    if (!j.contains(key)) return;
    try {
      j.at(key).get_to(field);
    } catch (const std::exception& e) {
      WINNOW_THROW("curation config: field '{}' has the wrong type: {}", key, e.what());
    }
  };
  get("embedder", c.embedder);
  get("embedder_auto", c.embedder_auto);
  get("index", c.index);
  get("candidates", c.candidates);
  get("min_candidate_similarity", c.min_candidate_similarity);
  get("candidate_margin", c.candidate_margin);
  get("image_threshold", c.image_threshold);
  get("image_max_shift", c.image_max_shift);
  get("image_colour_threshold", c.image_colour_threshold);
  get("image_file_min_candidate_similarity", c.image_file_min_candidate_similarity);
  get("text_threshold", c.text_threshold);
  c.text_min_jaccard = c.text_threshold;
  get("text_min_jaccard", c.text_min_jaccard);
  get("text_shingle", c.text_shingle);
  c.text_min_candidate_similarity =
      std::min(c.min_candidate_similarity, kJaccardOnlyTextMinCandidateSimilarity);
  get("text_min_candidate_similarity", c.text_min_candidate_similarity);
  get("label_k", c.label_k);
  get("label_flag_below", c.label_flag_below);
  get("min_label_neighbours", c.min_label_neighbours);
  c.label_min_lift = 0.0;
  get("label_min_lift", c.label_min_lift);
  c.label_rejudge_growth = 0.0;
  get("label_rejudge_growth", c.label_rejudge_growth);
  c.keep = "first";
  get("keep", c.keep);
  get("micro_batch", c.micro_batch);
  get("max_image_pixels", c.max_image_pixels);
  if (j.contains("image_issues"))
    c.image_issues = ImageIssuePolicy::from_json(j.at("image_issues"));
  c.validate();
  return c;
}

void CurationConfig::validate() const {
  WINNOW_THROW_IF_NOT(candidates >= 1 && candidates <= 1000, "candidates={} must be in [1, 1000]",
                      candidates);
  WINNOW_THROW_IF_NOT(std::isfinite(min_candidate_similarity) && min_candidate_similarity <= 1.0,
                      "min_candidate_similarity={} must be finite and <= 1",
                      min_candidate_similarity);
  WINNOW_THROW_IF_NOT(std::isfinite(image_file_min_candidate_similarity) &&
                          image_file_min_candidate_similarity <= 1.0,
                      "image_file_min_candidate_similarity={} must be finite and <= 1",
                      image_file_min_candidate_similarity);
  WINNOW_THROW_IF_NOT(
      std::isfinite(text_min_candidate_similarity) && text_min_candidate_similarity <= 1.0,
      "text_min_candidate_similarity={} must be finite and <= 1", text_min_candidate_similarity);
  WINNOW_THROW_IF_NOT(std::isfinite(candidate_margin) && candidate_margin >= 0.0,
                      "candidate_margin={} must be finite and >= 0", candidate_margin);
  WINNOW_THROW_IF_NOT(label_k >= 1 && label_k <= 1000, "label_k={} must be in [1, 1000]", label_k);
  WINNOW_THROW_IF_NOT(
      std::isfinite(label_flag_below) && label_flag_below >= 0.0 && label_flag_below <= 1.0,
      "label_flag_below={} must be in [0, 1]", label_flag_below);
  WINNOW_THROW_IF_NOT(min_label_neighbours >= 0, "min_label_neighbours={} must be >= 0",
                      min_label_neighbours);
  WINNOW_THROW_IF_NOT(
      std::isfinite(label_min_lift) && label_min_lift >= 0.0 && label_min_lift <= 1.0,
      "label_min_lift={} must be in [0, 1]", label_min_lift);
  WINNOW_THROW_IF_NOT(std::isfinite(label_rejudge_growth) && label_rejudge_growth >= 0.0 &&
                          label_rejudge_growth <= 1000.0,
                      "label_rejudge_growth={} must be in [0, 1000] (0: never re-judge)",
                      label_rejudge_growth);
  WINNOW_THROW_IF_NOT(keep == "largest" || keep == "first", "keep='{}' must be largest or first",
                      keep);
  WINNOW_THROW_IF_NOT(micro_batch >= 1 && micro_batch <= 65536,
                      "micro_batch={} must be in [1, 65536]", micro_batch);
  WINNOW_THROW_IF_NOT(max_image_pixels >= 1, "max_image_pixels={} must be >= 1", max_image_pixels);
  image_issues.validate();
  // The verifiers, embedder and index validate their own parameters.
  make_image_verifier(*this);
  make_text_verifier(*this);
  auto e = embed::make_embedder(embedder);
  index::make_vector_index(index, e->dim());
}

}  // namespace winnow::curation
