// IngestPipeline::rejudge_stale_labels: after a batch, judge again the labels
// judged when the dataset was much smaller (LabelJudgementLog), so that what
// the store says about a label does not depend on when the sample arrived.
//
// The judgement is ingest's: label quality over the label_k nearest labelled
// samples (accepted and label_issue, itself excluded), flagged below
// label_flag_below with min_label_neighbours neighbours and label_k other
// accepted samples of the label. Labels only: gains are not touched, and a
// label issue confident learning decided stays one (as in `rejudge`). It runs
// inside the batch's transaction, so a failure rolls the batch back with it.
#include <algorithm>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/ingest/ingest_pipeline.h"
#include "winnow/curation/ingest/label_judgement_log.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/store/vector_table.h"

#include "accepted_labels.h"
#include "confident_learning_reason.h"
#include "pool_search.h"

namespace winnow::curation::ingest {

namespace {

constexpr std::size_t kSearchChunk = 1024;

// A stored labelled sample due for re-judging, with its vector.
struct StaleSample {
  std::int64_t id = 0;
  bool accepted = false;
  int label = 0;
};

store::Decision relabelled_decision(bool flagged, const labels::LabelQualityResult& q,
                                    std::int64_t support, int min_neighbours, std::int64_t voters,
                                    std::int64_t judged_against, const std::string& suggested) {
  nlohmann::json details = {{"label_quality",
                             {{"quality", q.quality},
                              {"neighbours", q.neighbours},
                              {"k", q.k},
                              {"flag_below", q.flag_below},
                              {"min_neighbours", min_neighbours},
                              {"label_support", support}}},
                            {"rejudged", {{"voters", voters}, {"judged_against", judged_against}}}};
  if (q.suggested_label) details["label_quality"]["suggested_label"] = suggested;
  const std::string why = fmt::format("label quality {:.3f} {} {} over {} neighbours", q.quality,
                                      flagged ? "<" : ">=", q.flag_below, q.neighbours);
  const std::string when =
      fmt::format("(re-judged against {} labelled samples, was {})", voters, judged_against);
  if (flagged) {
    return {store::SampleStatus::label_issue, std::nullopt,
            fmt::format("{} (suggested {}) {}", why, suggested, when), details.dump()};
  }
  return {store::SampleStatus::accepted, std::nullopt,
          fmt::format("label issue cleared: {} {}", why, when), details.dump()};
}

}  // namespace

LabelRejudgeCounts IngestPipeline::rejudge_stale_labels(std::int64_t batch_id,
                                                        const std::vector<JudgedRange>& batch) {
  LabelRejudgeCounts counts;
  const double growth = config_.label_rejudge_growth;
  if (growth <= 0.0) return counts;
  LabelJudgementLog log;
  if (const std::optional<std::string> text = store_->get_meta(LabelJudgementLog::kMetaKey)) {
    log = LabelJudgementLog::from_json(*text);
  }
  for (const JudgedRange& r : batch) log.add(r.first_id, r.last_id, r.voters);
  const auto voters = static_cast<std::int64_t>(accepted_labels_->voters());

  // The stale samples and their vectors, in id order.
  std::vector<StaleSample> samples;
  std::vector<std::int64_t> judged_against;
  std::vector<float> vectors;
  const std::size_t dim = embedder_->dim();
  store::VectorTable table(store_->database());
  for (const JudgedRange& r : log.stale(voters, growth)) {
    table.for_each_judged_row_between(
        r.first_id, r.last_id, dim, [&](const store::JudgedVectorRow& row) {
          if (!row.label) return;
          samples.push_back({row.sample_id, row.status == store::SampleStatus::accepted,
                             static_cast<int>(*row.label)});
          judged_against.push_back(r.voters);
          vectors.insert(vectors.end(), row.embedding.begin(), row.embedding.end());
        });
  }

  // Judged against both indexes (every labelled sample), in chunks; the
  // verdicts are applied once all are made, so none depends on another's.
  const labels::LabelQuality quality({config_.label_k, 1.0, config_.label_flag_below});
  const auto k = static_cast<std::size_t>(config_.label_k) + 1;  // itself, excluded
  index::VectorIndex& flagged = flagged_index();
  const labels::LabelLookup label_of = [this](std::int64_t id) {
    return accepted_labels_->voter_label(id);
  };
  std::vector<std::pair<std::size_t, store::Decision>> changes;  // position -> decision
  std::vector<store::SampleScore> qualities;
  for (std::size_t begin = 0; begin < samples.size(); begin += kSearchChunk) {
    const std::size_t end = std::min(samples.size(), begin + kSearchChunk);
    const float* queries = vectors.data() + begin * dim;
    index::SearchResults found;
    if (index_->size() > 0) found = search_on_pool(*pool_, *index_, end - begin, queries, k);
    if (flagged.size() > 0) {
      found = index::SearchResults::merged(
          found, search_on_pool(*pool_, flagged, end - begin, queries, k), k);
    }
    for (std::size_t n = begin; n < end; ++n) {
      const StaleSample& s = samples[n];
      ++counts.rejudged;
      const labels::LabelQualityResult q =
          found.k > 0 ? quality.score(found, n - begin, s.label, label_of, s.id)
                      : labels::LabelQualityResult{};
      std::int64_t support = accepted_labels_->counts[s.label] - (s.accepted ? 1 : 0);
      const bool flag = q.flagged &&
                        q.neighbours >= static_cast<std::size_t>(config_.min_label_neighbours) &&
                        support >= config_.label_k;
      qualities.push_back({s.id, q.quality});
      if (flag == !s.accepted) continue;  // verdict unchanged
      if (!s.accepted && decided_by_confident_learning(*store_, s.id)) continue;
      const std::string suggested =
          q.suggested_label ? label_names_.name_of(*q.suggested_label) : "-";
      changes.emplace_back(n, relabelled_decision(flag, q, support, config_.min_label_neighbours,
                                                  voters, judged_against[n], suggested));
    }
  }

  // Write the verdicts; a flagged sample leaves the index for the flagged
  // one (it keeps its vote), a cleared one comes back.
  std::vector<std::int64_t> leaving, joining;
  std::vector<float> leaving_vectors, joining_vectors;
  for (const auto& [n, decision] : changes) {
    store_->update_status(samples[n].id, decision, batch_id);
    const float* v = vectors.data() + n * dim;
    if (decision.status == store::SampleStatus::label_issue) {
      leaving.push_back(samples[n].id);
      leaving_vectors.insert(leaving_vectors.end(), v, v + dim);
      accepted_labels_->flag(samples[n].id);
    } else {
      joining.push_back(samples[n].id);
      joining_vectors.insert(joining_vectors.end(), v, v + dim);
      accepted_labels_->clear_flag(samples[n].id);
    }
  }
  if (!qualities.empty()) store_->set_label_qualities(qualities);
  if (!leaving.empty()) {
    index_->remove(leaving);
    flagged.add(leaving, leaving_vectors);
  }
  if (!joining.empty()) {
    flagged.remove(joining);
    index_->add(joining, joining_vectors);
  }
  counts.newly_flagged = leaving.size();
  counts.cleared = joining.size();
  log.rejudged(voters, growth);
  store_->set_meta(LabelJudgementLog::kMetaKey, log.to_json());
  return counts;
}

}  // namespace winnow::curation::ingest
