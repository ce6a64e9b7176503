#include "training_section.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "winnow/curation/review/training_feedback.h"
#include "winnow/store/training_stats_table.h"

namespace winnow::curation::report {

namespace {

struct Hard {
  double mean_loss;
  std::string key;
};

struct ClassTraining {
  std::int64_t samples = 0;
  double loss_sum = 0.0;
  std::int64_t above_threshold = 0;
  std::vector<Hard> hardest;  // kept sorted, hardest first, at most kHardestPerClass
};

}  // namespace

nlohmann::json training_json(store::MetadataStore& store, const LabelNames& names) {
  std::vector<store::TrainingStats> rows;
  store::TrainingStatsTable(store.database()).for_each([&](const store::TrainingStats& s) {
    rows.push_back(s);
  });
  std::map<std::int64_t, ClassTraining> by_label;
  std::set<std::string> runs;
  const double threshold = review::TrainingVerdicts(store).threshold();
  for (const store::TrainingStats& s : rows) {
    const std::optional<store::SampleRecord> sample = store.find_sample(s.sample_id);
    if (!sample || !sample->label || sample->label != s.label) continue;
    if (sample->status != store::SampleStatus::accepted &&
        sample->status != store::SampleStatus::label_issue) {
      continue;
    }
    runs.insert(s.run);
    ClassTraining& c = by_label[*sample->label];
    ++c.samples;
    c.loss_sum += s.mean_loss;
    c.above_threshold += s.mean_loss > threshold;
    c.hardest.push_back({s.mean_loss, sample->external_key});
    std::sort(c.hardest.begin(), c.hardest.end(),
              [](const Hard& a, const Hard& b) { return a.mean_loss > b.mean_loss; });
    if (c.hardest.size() > kHardestPerClass) c.hardest.pop_back();
  }
  if (by_label.empty()) return nullptr;
  nlohmann::json classes = nlohmann::json::array();
  std::int64_t samples = 0;
  for (const auto& [label, c] : by_label) {
    samples += c.samples;
    nlohmann::json hardest = nlohmann::json::array();
    for (const Hard& h : c.hardest) hardest.push_back({{"key", h.key}, {"mean_loss", h.mean_loss}});
    classes.push_back({{"class", names.name_of(label)},
                       {"samples", c.samples},
                       {"mean_loss", c.loss_sum / static_cast<double>(c.samples)},
                       {"above_threshold", c.above_threshold},
                       {"hardest", hardest}});
  }
  std::sort(classes.begin(), classes.end(), [](const nlohmann::json& a, const nlohmann::json& b) {
    return a["mean_loss"].get<double>() > b["mean_loss"].get<double>();
  });
  return {{"runs", runs}, {"samples", samples}, {"threshold", threshold}, {"classes", classes}};
}

}  // namespace winnow::curation::report
