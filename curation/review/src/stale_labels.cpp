// rejudge_stale_labels: after a batch, judge again the labels
// judged when the dataset was much smaller (LabelJudgementLog: the doubtful
// ones after each growth step, the unsure after every third, all of them
// after every sixth), so that what the store says about a label does not
// depend on when the sample arrived.
//
// The judgement is ingest's: label quality over the label_k nearest labelled
// samples (accepted and label_issue, itself excluded), flagged below
// label_flag_below with min_label_neighbours neighbours and label_k other
// accepted samples of the label, where the dataset's evidence lets the vote
// judge the label's class (LabelEvidence, read from the store). Labels only: gains are not touched,
// and a label issue confident learning decided stays one (as in `rejudge`). It runs inside the
// batch's transaction, so a failure rolls the batch back with it.
#include <algorithm>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/review/stale_labels.h"
#include "winnow/curation/review/training_feedback.h"
#include "winnow/curation/review/verdicts.h"
#include "winnow/store/metadata_store.h"
#include "winnow/curation/review/label_judgement_log.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/store/vector_table.h"

#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "confident_learning_reason.h"
#include "winnow/curation/judge/label_verdict.h"
#include "winnow/curation/dataset/pool_search.h"

namespace winnow::curation::review {

namespace {

// Samples judged per search call: an IVF index scans a call's queries cell by
// cell, so a large call costs less a query (bench_hnsw_recall --query-batch
// compares call sizes); 2 MB of 128-d vectors.
constexpr std::size_t kSearchChunk = 4096;
// A label with less than this share of its neighbours' weight is doubtful:
// re-judged at every growth step (LabelJudgementLog). On Fashion-MNIST
// streams the doubtful alone gave the same flags as re-judging everyone, for
// much less work (docs/curation.md, "Label quality", its part "Re-judging as
// the dataset grows").
constexpr double kDoubtfulBelow = 0.5;
// ... and below this share unsure: re-judged at every third step; the
// confident rest at every sixth. A label nine in ten of its neighbours agree
// with needs its neighbourhood overturned to fall below label_flag_below.
constexpr double kUnsureBelow = 0.9;

// The stored label quality below which an accepted sample is in `tier`
// (label issues are in every tier).
std::optional<double> accepted_quality_below(DueTier tier) {
  switch (tier) {
    case DueTier::doubtful:
      return kDoubtfulBelow;
    case DueTier::unsure:
      return kUnsureBelow;
    case DueTier::all:
      break;
  }
  return std::nullopt;
}
// Ranges judged against fewer than this many labelled samples per label_k
// neighbour are re-judged whole: such a verdict says little either way.
constexpr std::int64_t kWholeBelowVotersPerK = 10;

// A stored labelled sample due for re-judging.
struct StaleSample {
  std::int64_t id = 0;
  bool accepted = false;
  int label = 0;
  std::int64_t judged_against = 0;  // labelled samples when it was last judged
};

// Writes the changed verdicts. Both kinds of sample stay in the index (a
// label issue keeps its vote and stays a near-duplicate candidate); only the
// label cache learns which is which.
void write_verdicts(store::MetadataStore& store, AcceptedLabelCache& accepted,
                    const std::vector<StaleSample>& changed,
                    const std::vector<store::Decision>& decisions, std::int64_t batch_id,
                    LabelRejudgeCounts& counts) {
  for (std::size_t c = 0; c < changed.size(); ++c) {
    const std::int64_t id = changed[c].id;
    store.update_status(id, decisions[c], batch_id);
    if (decisions[c].status == store::SampleStatus::label_issue) {
      accepted.flag(id);
      ++counts.newly_flagged;
    } else {
      accepted.clear_flag(id);
      ++counts.cleared;
    }
  }
}

// The store's judgement log with the batch's ranges added.
LabelJudgementLog judgement_log(store::MetadataStore& store,
                                const std::vector<JudgedRange>& batch) {
  LabelJudgementLog log;
  if (const std::optional<std::string> text = store.get_meta(LabelJudgementLog::kMetaKey)) {
    log = LabelJudgementLog::from_json(*text);
  }
  for (const JudgedRange& r : batch) log.add(r.first_id, r.last_id, r.voters);
  return log;
}

}  // namespace

LabelRejudgeCounts rejudge_stale_labels(Dataset& dataset, std::int64_t batch_id,
                                        const std::vector<JudgedRange>& batch) {
  const CurationConfig& config = dataset.config();
  store::MetadataStore& store = dataset.store();
  AcceptedLabelCache& accepted = dataset.accepted_labels();
  LabelRejudgeCounts counts;
  const double growth = config.label_rejudge_growth;
  if (growth <= 0.0) return counts;
  LabelJudgementLog log = judgement_log(store, batch);
  const auto voters = static_cast<std::int64_t>(accepted.voters());
  const std::set<std::int64_t> reviewed = reviewed_samples(store);  // a person decided: left alone

  // The stale samples are read in id order and judged a chunk at a time
  // against the index (every labelled sample); the verdicts are applied once
  // all are made, so none depends on another's.
  const std::size_t dim = dataset.embedder().dim();
  const labels::LabelQuality quality({config.label_k, config.label_flag_below});
  const labels::LabelEvidence evidence = stored_label_evidence(store, config);
  const TrainingVerdicts training(store);
  const auto k = static_cast<std::size_t>(config.label_k) + 1;  // itself, excluded
  const labels::LabelLookup label_of = [&accepted](std::int64_t id) {
    return accepted.voter_label(id);
  };
  std::vector<StaleSample> chunk;
  std::vector<float> chunk_vectors;
  std::vector<StaleSample> changed;
  std::vector<store::Decision> decisions;  // of `changed`
  std::vector<store::SampleScore> qualities;
  auto judge_chunk = [&] {
    if (chunk.empty()) return;
    const float* queries = chunk_vectors.data();
    index::SearchResults found;
    if (dataset.index().size() > 0)
      found = search_on_pool(dataset.pool(), dataset.index(), chunk.size(), queries, k);
    for (std::size_t row = 0; row < chunk.size(); ++row) {
      const StaleSample& s = chunk[row];
      ++counts.rejudged;
      const labels::LabelQualityResult q = found.k > 0
                                               ? quality.score(found, row, s.label, label_of, s.id)
                                               : labels::LabelQualityResult{};
      const std::int64_t support = accepted.counts[s.label] - (s.accepted ? 1 : 0);
      const bool vote =
          judge::knn_flags_label(q, support, config.min_label_neighbours, config.label_k);
      // A trained model's statistics, where there are some, decide instead.
      const std::optional<bool> trained = training.flags(s.id, s.label);
      const bool flag = trained ? *trained : vote && evidence.judges(s.label);
      if (vote && !flag && !trained) ++counts.abstained;
      qualities.push_back({s.id, q.quality});
      if (flag == !s.accepted) continue;  // verdict unchanged
      if (!s.accepted && decided_by_confident_learning(store, s.id)) continue;
      const std::string suggested =
          q.suggested_label ? dataset.label_names().name_of(*q.suggested_label) : "-";
      changed.push_back(s);
      const nlohmann::json details = {
          {"label_quality",
           judge::label_quality_details(q, support, config.min_label_neighbours, suggested)},
          {"rejudged", {{"voters", voters}, {"judged_against", s.judged_against}}}};
      const std::string why = trained ? training.why(s.id)
                              : vote && !flag
                                  ? judge::abstained_label_why(q, evidence.of(s.label).lift,
                                                               evidence.options().min_lift)
                                  : judge::label_quality_why(q, flag);
      decisions.push_back(judge::changed_label_decision(
          flag, why, suggested,
          fmt::format("(re-judged against {} labelled samples, was {})", voters, s.judged_against),
          details));
    }
    chunk.clear();
    chunk_vectors.clear();
  };
  store::VectorTable table(store.database());
  const std::int64_t whole_below = kWholeBelowVotersPerK * config.label_k;
  for (const DueRange& due : log.due(voters, growth, whole_below)) {
    const JudgedRange& r = due.range;
    table.for_each_judged_row_between(
        r.first_id, r.last_id, dim,
        [&](const store::JudgedVectorRow& row) {
          if (!row.label || reviewed.count(row.sample_id) > 0) return;
          chunk.push_back({row.sample_id, row.status == store::SampleStatus::accepted,
                           static_cast<int>(*row.label), due.judged_against()});
          chunk_vectors.insert(chunk_vectors.end(), row.embedding.begin(), row.embedding.end());
          if (chunk.size() == kSearchChunk) judge_chunk();
        },
        accepted_quality_below(due.tier));
  }
  judge_chunk();

  write_verdicts(store, accepted, changed, decisions, batch_id, counts);
  if (!qualities.empty()) store.set_label_qualities(qualities);
  log.rejudged(voters, growth, whole_below);
  store.set_meta(LabelJudgementLog::kMetaKey, log.to_json());
  return counts;
}

std::size_t clear_abstained_label_issues(Dataset& dataset, std::int64_t batch_id,
                                         const labels::LabelEvidence& evidence) {
  store::MetadataStore& store = dataset.store();
  if (evidence.abstained().empty()) return 0;
  std::vector<std::pair<std::int64_t, labels::ClassEvidence>> flagged;  // read, then written
  store.for_each_sample(
      [&](const store::SampleRecord& s) {
        if (s.label && !evidence.judges(*s.label))
          flagged.emplace_back(s.id, evidence.of(*s.label));
      },
      store::SampleStatus::label_issue);
  const std::set<std::int64_t> reviewed = reviewed_samples(store);
  std::size_t cleared = 0;
  const double min_lift = evidence.options().min_lift;
  for (const auto& [id, c] : flagged) {
    if (reviewed.count(id) > 0 || decided_by_confident_learning(store, id)) continue;
    const nlohmann::json details = {
        {"label_check", {{"class_lift", c.lift}, {"min_lift", min_lift}, {"samples", c.samples}}}};
    store.update_status(id,
                        {store::SampleStatus::accepted, std::nullopt,
                         fmt::format("label issue cleared: the label check abstains on this "
                                     "class now (lift {:.3f} < {}, {} samples)",
                                     c.lift, min_lift, c.samples),
                         details.dump()},
                        batch_id);
    dataset.accepted_labels().clear_flag(id);
    ++cleared;
  }
  return cleared;
}

}  // namespace winnow::curation::review
