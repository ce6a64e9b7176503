#include "winnow/curation/dataset/label_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "winnow/store/metadata_store.h"

namespace winnow::curation {

namespace {

constexpr std::size_t kMaxListedClasses = 20;

// The classes abstained on, lowest lift first.
std::vector<labels::ClassEvidence> abstained_by_lift(const labels::LabelEvidence& evidence) {
  std::vector<labels::ClassEvidence> out = evidence.abstained();
  std::stable_sort(out.begin(), out.end(),
                   [](const auto& a, const auto& b) { return a.lift < b.lift; });
  return out;
}

std::string judges_word(const labels::LabelEvidence& evidence, std::size_t abstained) {
  if (evidence.samples() == 0) return "not yet";
  if (abstained == 0) return "every class";
  if (abstained == evidence.classes().size()) return "no class";
  return "some classes";
}

}  // namespace

labels::LabelEvidenceOptions label_evidence_options(const CurationConfig& config) {
  return {config.label_min_lift, config.label_k};
}

labels::LabelEvidence stored_label_evidence(store::MetadataStore& store,
                                            const CurationConfig& config) {
  labels::LabelEvidence evidence(label_evidence_options(config));
  for (const auto& sum : store.label_quality_by_label()) {
    evidence.add(sum.label, sum.samples, sum.quality_sum);
  }
  return evidence;
}

nlohmann::json label_check_json(const labels::LabelEvidence& evidence, const LabelNames& names) {
  const std::vector<labels::ClassEvidence> abstained = abstained_by_lift(evidence);
  nlohmann::json listed = nlohmann::json::array();
  for (std::size_t i = 0; i < abstained.size() && i < kMaxListedClasses; ++i) {
    listed.push_back({{"label", names.name_of(abstained[i].label)},
                      {"samples", abstained[i].samples},
                      {"lift", abstained[i].lift}});
  }
  return {{"judges", judges_word(evidence, abstained.size())},
          {"lift", evidence.lift()},
          {"min_lift", evidence.options().min_lift},
          {"samples", evidence.samples()},
          {"classes", evidence.classes().size()},
          {"abstained", abstained.size()},
          {"abstained_classes", listed},
          {"line", label_check_line(evidence, names)}};
}

std::string label_check_line(const labels::LabelEvidence& evidence, const LabelNames& names) {
  const double min_lift = evidence.options().min_lift;
  if (evidence.samples() == 0) return "label check: no labelled sample judged yet";
  const std::size_t classes = evidence.classes().size();
  const std::vector<labels::ClassEvidence> abstained = abstained_by_lift(evidence);
  if (abstained.empty()) {
    return fmt::format(
        "label check: judges all {} classes (neighbours beat chance by lift {:.2f} "
        ">= {})",
        classes, evidence.lift(), min_lift);
  }
  std::int64_t largest = 0;
  for (const labels::ClassEvidence& c : evidence.classes()) largest = std::max(largest, c.samples);
  if (largest < evidence.options().min_samples) {
    return fmt::format(
        "label check: not enough samples to judge yet (a class needs {} judged samples; the "
        "largest has {}), so it flags no label issue",
        evidence.options().min_samples, largest);
  }
  const std::string help =
      "a semantic embedder (winnow init --embedder torchscript:PATH) would let it judge";
  if (evidence.lift() < min_lift) {
    return fmt::format(
        "label check: abstains on every class: the embedder's neighbours agree with the given "
        "labels little more than chance (lift {:.2f} < {}), so it flags no label issue; {}",
        evidence.lift(), min_lift, help);
  }
  std::string worst;
  for (std::size_t i = 0; i < abstained.size() && i < 3; ++i) {
    const labels::ClassEvidence& c = abstained[i];
    worst += fmt::format("{}{} ", i ? ", " : "", names.name_of(c.label));
    worst += c.samples < evidence.options().min_samples ? fmt::format("({} samples)", c.samples)
                                                        : fmt::format("(lift {:.2f})", c.lift);
  }
  return fmt::format(
      "label check: abstains on {} of {} classes, too small or whose neighbours beat chance by "
      "less than lift {}: {}{}; it flags none of their samples; more samples of them, or {}",
      abstained.size(), classes, min_lift, worst, abstained.size() > 3 ? ", ..." : "", help);
}

}  // namespace winnow::curation
