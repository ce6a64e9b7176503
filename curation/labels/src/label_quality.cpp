#include "winnow/curation/labels/label_quality.h"

#include <cmath>
#include <unordered_map>

#include "winnow/error.h"

namespace winnow::curation::labels {

LabelQuality::LabelQuality(LabelQualityOptions options) : options_(options) {
  WINNOW_THROW_IF_NOT(options_.k >= 1 && options_.k <= 4096,
                      "label quality: k={} must be in [1, 4096]", options_.k);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.power) && options_.power >= 0.0,
                      "label quality: power={} must be finite and >= 0", options_.power);
  WINNOW_THROW_IF_NOT(std::isfinite(options_.flag_below) && options_.flag_below >= 0.0 &&
                          options_.flag_below <= 1.0,
                      "label quality: flag_below={} must be in [0, 1]", options_.flag_below);
}

LabelQualityResult LabelQuality::score(const index::SearchResults& results, std::size_t query,
                                       int label, const LabelLookup& labels,
                                       std::int64_t exclude) const {
  LabelQualityResult out;
  out.k = options_.k;
  out.flag_below = options_.flag_below;
  double agree = 0.0;
  double total = 0.0;
  std::unordered_map<int, double> by_label;
  for (std::size_t r = 0; r < results.k && out.neighbours < static_cast<std::size_t>(options_.k);
       ++r) {
    const std::int64_t id = results.id(query, r);
    if (id < 0) {
      break;
    }
    if (id == exclude) {
      continue;
    }
    const std::optional<int> other = labels ? labels(id) : std::nullopt;
    if (!other) {
      continue;
    }
    const double sim = std::max(0.0, static_cast<double>(results.similarity(query, r)));
    const double w = (options_.power == 1.0 ? sim : std::pow(sim, options_.power)) + 1e-6;
    total += w;
    by_label[*other] += w;
    if (*other == label) {
      agree += w;
    }
    ++out.neighbours;
  }
  if (out.neighbours == 0) {
    return out;  // quality 1, not flagged
  }
  out.quality = agree / total;
  out.flagged = out.quality < options_.flag_below;
  double best = -1.0;
  for (const auto& [l, w] : by_label) {
    if (w > best || (w == best && out.suggested_label && l < *out.suggested_label)) {
      best = w;
      out.suggested_label = l;
    }
  }
  out.suggested_share = best / total;
  return out;
}

LabelQualityResult LabelQuality::score(const index::VectorIndex& index, const float* embedding,
                                       int label, const LabelLookup& labels,
                                       std::int64_t exclude) const {
  if (index.size() == 0) {
    return score(index::SearchResults::padded(1, 0), 0, label, labels, exclude);
  }
  const int k = options_.k + (exclude >= 0 ? 1 : 0);
  return score(index.search(1, embedding, k), 0, label, labels, exclude);
}

}  // namespace winnow::curation::labels
