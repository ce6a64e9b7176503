#include "winnow/curation/labels/label_quality.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>
#include <vector>

#include "winnow/error.h"

namespace winnow::curation::labels {

double neighbour_weight(double cosine, double median_distance) {
  constexpr double kMaxOverMedian = 4.0;  // no neighbour counts more than 4 median ones
  constexpr double kMinDistance = 1e-6;   // exact copies
  const double distance = 1.0 - cosine;
  return (std::max(cosine, 0.0) + 1e-6) /
         std::max({distance, median_distance / kMaxOverMedian, kMinDistance});
}

LabelQuality::LabelQuality(LabelQualityOptions options) : options_(options) {
  WINNOW_THROW_IF_NOT(options_.k >= 1 && options_.k <= 4096,
                      "label quality: k={} must be in [1, 4096]", options_.k);
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
  // The labelled neighbours first: their weights depend on the median distance.
  struct Voter {
    int label = 0;
    double cosine = 0.0;
  };
  std::vector<Voter> voters;
  for (std::size_t r = 0; r < results.k && voters.size() < static_cast<std::size_t>(options_.k);
       ++r) {
    const std::int64_t id = results.id(query, r);
    if (id < 0) {
      break;
    }
    if (id == exclude) {
      continue;
    }
    const std::optional<int> other = labels ? labels(id) : std::nullopt;
    if (other) {
      voters.push_back({*other, static_cast<double>(results.similarity(query, r))});
    }
  }
  out.neighbours = voters.size();
  if (voters.empty()) {
    return out;  // quality 1, not flagged
  }
  std::vector<double> distances(voters.size());
  std::transform(voters.begin(), voters.end(), distances.begin(),
                 [](const Voter& v) { return 1.0 - v.cosine; });
  const auto middle = distances.begin() + static_cast<std::ptrdiff_t>(distances.size() / 2);
  std::nth_element(distances.begin(), middle, distances.end());
  const double median = *middle;

  double agree = 0.0;
  double total = 0.0;
  std::unordered_map<int, double> by_label;
  for (const Voter& v : voters) {
    const double w = neighbour_weight(v.cosine, median);
    total += w;
    by_label[v.label] += w;
    if (v.label == label) {
      agree += w;
    }
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
