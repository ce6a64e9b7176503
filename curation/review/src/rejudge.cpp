// rejudge (`winnow rejudge`): redo, against today's dataset, what ingest
// decided against the dataset as it was when each sample arrived (the samples
// before it, the embedder of the day). In one write transaction:
//
//   1. embedder (RejudgeOptions::embedder): re-embed every stored accepted and
//      label_issue sample from curation_vectors and rebuild the index.
//   2. labels (RejudgeOptions::labels, implied by 1; 2a, the Dawid-Skene
//      consensus, first when RejudgeOptions::consensus): judge those labels
//      again by ingest's rule; confident learning's flags are kept.
//   3. gains: recompute every accepted sample's gain against the final index.
//
// An error changes nothing. The index file is removed before the commit and
// written after it, so a crash leaves no stale file. Details: docs/curation.md,
// "Redoing ingest's judgements (`rejudge`)".
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <set>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "winnow/curation/review/training_feedback.h"
#include "winnow/curation/review/consensus_estimates.h"
#include "winnow/curation/review/consensus_labels.h"
#include "winnow/curation/judge/information_gain.h"
#include "winnow/curation/review/label_judgement_log.h"
#include "winnow/curation/review/rejudge.h"
#include "winnow/curation/review/verdicts.h"

#include "winnow/store/metadata_store.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/store/transaction.h"
#include "winnow/store/vector_table.h"

#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "winnow/curation/labels/label_evidence.h"
#include "confident_learning_reason.h"
#include "winnow/curation/judge/label_verdict.h"
#include "winnow/curation/dataset/lookup/stored_record.h"

namespace winnow::curation::review {

namespace {

constexpr std::size_t kSearchChunk = 1024;
// Shares of the neighbours' weight that split the neighbour vote of
// --consensus into three voters (chosen on the main job's data, docs/demo.md).
constexpr std::array<double, 2> kNeighbourAgreementTiers = {0.6, 0.9};

// A stored sample rejudge may re-judge: accepted or label_issue, with a row in
// curation_vectors.
struct StoredSample {
  std::int64_t id = 0;
  bool accepted = false;
  std::optional<std::int64_t> label;
  bool reviewed = false;  // a person decided it (verdicts.h): its status and label stay
};

// The stored samples rejudge works on, in id order, with their vectors in the
// embedding rejudge uses: vector(n) is the one of samples[n].
struct StoredSamples {
  std::vector<StoredSample> samples;
  std::vector<float> vectors;  // samples.size() x dim
  std::size_t dim = 0;

  const float* vector(std::size_t n) const { return vectors.data() + n * dim; }
};

// The stored content of a sample as a record an embedder takes; throws for
// path records, whose content is not kept.
ManifestRecord record_to_reembed(const store::JudgedVectorRow& row, const std::string& db) {
  std::optional<ManifestRecord> record = stored_record(row.sample_id, row.content);
  if (!record) {
    WINNOW_THROW(
        "{}: sample {} is a '{}' record; its content is not stored, so it cannot be "
        "re-embedded",
        db, row.sample_id, row.content.kind);
  }
  return std::move(*record);
}

// Where a search reports its progress (RejudgeOptions::progress), if anywhere.
struct SearchProgress {
  const RejudgeOptions::Progress* report = nullptr;
  std::string stage;
  void operator()(std::size_t done, std::size_t total) const {
    if (report != nullptr && *report) (*report)(stage, done, total);
  }
};

// Searches `index` for the vectors at positions `rows` of `vectors`,
// kSearchChunk queries at a time, and calls visit(found, begin, end) per
// chunk: row q of `found` is rows[begin + q], then reports progress. An
// empty index finds nothing (found.k == 0).
template <typename Visit>
void search_rows(const index::VectorIndex& index, const std::vector<float>& vectors,
                 std::size_t dim, const std::vector<std::size_t>& rows, std::size_t k, Visit visit,
                 const SearchProgress& progress = {}) {
  std::vector<float> queries;
  for (std::size_t begin = 0; begin < rows.size(); begin += kSearchChunk) {
    const std::size_t end = std::min(rows.size(), begin + kSearchChunk);
    queries.clear();
    for (std::size_t j = begin; j < end; ++j) {
      const float* v = vectors.data() + rows[j] * dim;
      queries.insert(queries.end(), v, v + dim);
    }
    index::SearchResults found;
    if (index.size() > 0) found = index.search(end - begin, queries.data(), k);
    visit(found, begin, end);
    progress(end, rows.size());
  }
}

// search_rows gathered into one result, row j for rows[j] (k == 0 when the
// index is empty).
index::SearchResults search_all_rows(const index::VectorIndex& index,
                                     const std::vector<float>& vectors, std::size_t dim,
                                     const std::vector<std::size_t>& rows, std::size_t k,
                                     const SearchProgress& progress = {}) {
  index::SearchResults all;
  all.num_queries = rows.size();
  search_rows(
      index, vectors, dim, rows, k,
      [&](const index::SearchResults& found, std::size_t, std::size_t) {
        all.k = found.k;
        all.ids.insert(all.ids.end(), found.ids.begin(), found.ids.end());
        all.similarities.insert(all.similarities.end(), found.similarities.begin(),
                                found.similarities.end());
      },
      progress);
  if (all.k == 0) all.ids.clear(), all.similarities.clear();
  return all;
}

// Neighbours searched per sample when its gain cannot be taken from the
// labels' search: enough that kGainNeighbours of them are accepted nearly
// always (label issues are a few percent of the index); where fewer are,
// the gain is over those.
constexpr std::size_t kGainSearch = 32;

// The gains of the samples accepted after rejudge (today's accepted less
// `newly_flagged`, plus `cleared`) against `index`, which holds every judged
// sample: a gain is over a sample's nearest accepted samples, itself
// excluded. Where the labels were judged (row j of `neighbours`, the nearest
// judged samples of judged[j]), those of them accepted after rejudge, exact
// when at least kGainNeighbours are (every other sample is further away);
// otherwise the index is searched again for kGainSearch neighbours.
std::vector<store::SampleScore> gains_against_final_index(
    const std::vector<StoredSample>& samples, const std::vector<float>& vectors, std::size_t dim,
    const index::VectorIndex& index, const std::vector<std::size_t>& judged,
    const index::SearchResults& neighbours, const std::vector<std::int64_t>& newly_flagged,
    const std::vector<std::int64_t>& cleared, const SearchProgress& progress) {
  std::vector<store::SampleScore> gains;
  std::unordered_set<std::int64_t> flagged_set(newly_flagged.begin(), newly_flagged.end());
  std::unordered_set<std::int64_t> cleared_set(cleared.begin(), cleared.end());
  // Whether samples[n] is accepted after rejudge; and by id, for neighbours
  // (`samples` is in id order and holds every sample of the index).
  auto accepted_after = [&](std::size_t n) {
    return samples[n].accepted ? !flagged_set.count(samples[n].id)
                               : cleared_set.count(samples[n].id) > 0;
  };
  auto accepted_id_after = [&](std::int64_t id) {
    const auto it =
        std::lower_bound(samples.begin(), samples.end(), id,
                         [](const StoredSample& s, std::int64_t v) { return s.id < v; });
    return it != samples.end() && it->id == id &&
           accepted_after(static_cast<std::size_t>(it - samples.begin()));
  };
  std::unordered_map<std::int64_t, std::size_t> judged_row;  // sample id -> row of `neighbours`
  if (neighbours.k > 0) {
    for (std::size_t j = 0; j < judged.size(); ++j) judged_row.emplace(samples[judged[j]].id, j);
  }
  const auto k = static_cast<std::size_t>(judge::kGainNeighbours);
  using Neighbour = std::pair<float, std::int64_t>;  // similarity, id
  // Row q of a search's results that are accepted after rejudge, other than
  // the sample `id` itself.
  auto accepted_found = [&](const index::SearchResults& r, std::size_t q, std::int64_t id) {
    std::vector<Neighbour> out;
    for (std::size_t c = 0; c < r.k; ++c) {
      const std::int64_t other = r.id(q, c);
      if (other >= 0 && other != id && accepted_id_after(other)) {
        out.emplace_back(r.similarity(q, c), other);
      }
    }
    return out;
  };
  auto gain_of = [&](std::int64_t id, const std::vector<Neighbour>& found) {
    // Search results are best first already; ties keep the index's order.
    index::SearchResults own = index::SearchResults::padded(1, k);
    for (std::size_t r = 0; r < std::min(k, found.size()); ++r) {
      own.ids[r] = found[r].second;
      own.similarities[r] = found[r].first;
    }
    gains.push_back({id, judge::information_gain(own, 0)});
  };
  std::vector<std::size_t> searched;  // positions in `samples`
  for (std::size_t n = 0; n < samples.size(); ++n) {
    if (!accepted_after(n)) continue;
    const auto row = judged_row.find(samples[n].id);
    if (row != judged_row.end()) {
      const std::vector<Neighbour> still = accepted_found(neighbours, row->second, samples[n].id);
      if (still.size() >= k) {
        gain_of(samples[n].id, still);
        continue;
      }
    }
    searched.push_back(n);
  }
  search_rows(
      index, vectors, dim, searched, kGainSearch,
      [&](const index::SearchResults& r, std::size_t begin, std::size_t end) {
        for (std::size_t q = 0; q < end - begin; ++q) {
          const std::int64_t id = samples[searched[begin + q]].id;
          gain_of(id, accepted_found(r, q, id));
        }
      },
      progress);
  return gains;
}

// 1. The stored accepted and label_issue samples with their vectors: the
// stored embeddings, or with `reembed` the stored contents embedded again
// with `embedder` (a sample it cannot embed aborts rejudge).
StoredSamples read_stored_samples(store::Database& db, const std::string& db_path,
                                  const embed::Embedder& embedder, bool reembed) {
  StoredSamples stored;
  stored.dim = embedder.dim();
  const std::size_t dim = stored.dim;
  store::VectorTable table(db);
  const std::optional<std::size_t> stored_dim =
      reembed ? std::nullopt : std::optional<std::size_t>(dim);
  table.for_each_judged_row(stored_dim, [&](const store::JudgedVectorRow& row) {
    StoredSample s;
    s.id = row.sample_id;
    s.accepted = row.status == store::SampleStatus::accepted;
    s.label = row.label;
    stored.vectors.resize(stored.vectors.size() + dim);
    float* out = stored.vectors.data() + stored.vectors.size() - dim;
    if (reembed) {
      ManifestRecord record = record_to_reembed(row, db_path);
      try {
        embedder.embed(record, out);
      } catch (const winnow::Error& e) {
        WINNOW_THROW("{}: sample {} cannot be re-embedded with {}: {}", db_path, s.id,
                     embedder.spec(), e.what());
      }
    } else {
      std::copy(row.embedding.begin(), row.embedding.end(), out);
    }
    stored.samples.push_back(s);
  });
  return stored;
}

// An index of type `index_type` over the vectors of the stored samples
// (accepted and label_issue, as at ingest).
std::unique_ptr<index::VectorIndex> index_of(const StoredSamples& stored,
                                             const std::string& index_type) {
  std::unique_ptr<index::VectorIndex> index = index::make_vector_index(index_type, stored.dim);
  std::vector<std::int64_t> ids;
  for (const StoredSample& s : stored.samples) ids.push_back(s.id);
  if (!ids.empty()) index->add(ids, stored.vectors);
  return index;
}

// The labels of the accepted samples and their counts per label as they will
// be once the consensus relabels are written (label quality and the label
// support read these, not the store).
using LabelsAfterRelabels = AcceptedLabelCache;

// 2a. Gives every sample with a consensus its consensus label, keeping
// `labels` in step for the accepted ones.
void take_consensus(const review::ConsensusLabels& consensus, std::vector<StoredSample>& samples,
                    LabelsAfterRelabels& labels) {
  for (StoredSample& s : samples) {
    auto it = consensus.by_sample.find(s.id);
    if (it == consensus.by_sample.end() || s.label == it->second.label || s.reviewed) continue;
    if (s.accepted) {
      if (s.label) --labels.counts[*s.label];
      ++labels.counts[it->second.label];
      labels.accepted.set(s.id, static_cast<int>(it->second.label));
    } else {
      labels.flagged.set(s.id, static_cast<int>(it->second.label));
    }
    s.label = it->second.label;
  }
}

// What every label re-judgement of one rejudge goes by.
struct JudgementRules {
  int label_k = 0;               // accepted samples of the label needed to flag it, as at ingest
  int min_label_neighbours = 0;  // fewer labelled neighbours: kNN never flags
  double flag_below = 0.0;       // label quality
  double consensus_flag_below = 0.0;      // consensus posterior, for annotated samples
  std::string embedder;                   // named in every reason and details
  labels::LabelEvidenceOptions evidence;  // where the kNN vote abstains
};

// The rules of `options` over the dataset's `config`; throws for a threshold
// outside [0, 1].
JudgementRules judgement_rules(const RejudgeOptions& options, const CurationConfig& config,
                               const std::string& embedder) {
  const double flag_below = options.flag_below.value_or(config.label_flag_below);
  WINNOW_THROW_IF_NOT(std::isfinite(flag_below) && flag_below >= 0.0 && flag_below <= 1.0,
                      "regain: flag_below={} must be in [0, 1]", flag_below);
  const double consensus_flag_below = options.consensus_flag_below;
  WINNOW_THROW_IF_NOT(std::isfinite(consensus_flag_below) && consensus_flag_below >= 0.0 &&
                          consensus_flag_below <= 1.0,
                      "regain: consensus_flag_below={} must be in [0, 1]", consensus_flag_below);
  return {config.label_k, config.min_label_neighbours,   flag_below, consensus_flag_below,
          embedder,       label_evidence_options(config)};
}

// Positions in `samples` of those whose label is re-judged: every labelled
// sample but the label issues confident learning flagged (kNN cannot overrule
// a model's out-of-sample evidence), counted in `kept_confident_learning`.
std::vector<std::size_t> samples_to_judge(store::MetadataStore& store,
                                          const std::vector<StoredSample>& samples,
                                          std::size_t& kept_confident_learning,
                                          std::size_t& kept_reviewed) {
  std::vector<std::size_t> judged;
  for (std::size_t n = 0; n < samples.size(); ++n) {
    if (!samples[n].label) continue;
    if (samples[n].reviewed) {
      ++kept_reviewed;
      continue;
    }
    if (!samples[n].accepted && decided_by_confident_learning(store, samples[n].id)) {
      ++kept_confident_learning;
      continue;
    }
    judged.push_back(n);
  }
  return judged;
}

// Label issues rejudge cannot re-judge: stores written before label_issue
// samples kept their vectors.
std::size_t label_issues_without_vector(store::Database& db) {
  return static_cast<std::size_t>(store::VectorTable(db).count_label_issues_without_row());
}

// Label quality of the j-th judged sample against its neighbours, with the
// labels as they are when it is called.
using JudgedScore = std::function<labels::LabelQualityResult(std::size_t j)>;

// The label each annotated sample's annotations give by majority, by id;
// reviewed samples are left out (they vote with the label a person gave).
// The neighbours vote in the consensus with these, not with the labels a
// consensus gave: those would carry one consensus's mistakes into the next,
// and a class the consensus once drifted into would vote for its own drift
// (docs/cli.md, rejudge --consensus).
std::unordered_map<std::int64_t, int> annotators_labels(const std::vector<StoredSample>& samples,
                                                        const review::ConsensusLabels& consensus) {
  std::unordered_map<std::int64_t, int> out;
  for (const StoredSample& s : samples) {
    if (s.reviewed) continue;
    const auto it = consensus.by_sample.find(s.id);
    if (it != consensus.by_sample.end()) out[s.id] = static_cast<int>(it->second.majority);
  }
  return out;
}

// 2c. The label each annotated judged sample's neighbours suggest (from at
// least min_label_neighbours of them), as the vote of one of three voters by
// how strongly the neighbours agree on it (kNeighbourAgreementTiers), so that
// Dawid-Skene weighs a unanimous neighbourhood above a split one.
std::vector<review::ExtraVoter> neighbour_voters(const std::vector<StoredSample>& samples,
                                                 const std::vector<std::size_t>& judged,
                                                 const review::ConsensusLabels& consensus,
                                                 const JudgedScore& score,
                                                 int min_label_neighbours) {
  std::vector<review::ExtraVoter> voters;
  for (std::size_t t = 0; t <= kNeighbourAgreementTiers.size(); ++t) {
    const double low = t == 0 ? 0.0 : kNeighbourAgreementTiers[t - 1];
    const double high = t == kNeighbourAgreementTiers.size() ? 1.0 : kNeighbourAgreementTiers[t];
    voters.push_back({fmt::format("neighbours (agreement {} to {})", low, high), {}});
  }
  for (std::size_t j = 0; j < judged.size(); ++j) {
    const StoredSample& s = samples[judged[j]];
    if (!consensus.by_sample.count(s.id)) continue;
    const labels::LabelQualityResult q = score(j);
    if (!q.suggested_label || q.neighbours < static_cast<std::size_t>(min_label_neighbours))
      continue;
    const auto tier = static_cast<std::size_t>(std::upper_bound(kNeighbourAgreementTiers.begin(),
                                                                kNeighbourAgreementTiers.end(),
                                                                q.suggested_share) -
                                               kNeighbourAgreementTiers.begin());
    voters[tier].votes.emplace(s.id, *q.suggested_label);
  }
  return voters;
}

// The details of a sample's consensus shared by its decision and its relabel
// event (each adds its own keys).
nlohmann::json consensus_details(const review::SampleConsensus& c) {
  return {{"method", "dawid-skene"},
          {"posterior", c.posterior},
          {"annotations", c.annotations},
          {"duplicate_annotations", c.duplicate_annotations},
          {"neighbour_votes", c.extra_votes}};
}

// Ends "... over N annotations" in a reason when the neighbours voted too.
const char* neighbours_vote_note(const review::SampleConsensus& c) {
  return c.extra_votes > 0 ? " and the neighbours' vote" : "";
}

// The decision for a sample whose judgement changed: flagged (accepted ->
// label_issue) or cleared (label_issue -> accepted), with the reason and the
// details. `agreed` is the sample's consensus when it was judged by its
// posterior, else null (judged by kNN agreement); `suggested_label` is the
// name of q.suggested_label, "-" when there is none.
store::Decision rejudged_label_decision(bool flagged, const labels::LabelQualityResult& q,
                                        std::int64_t support, const review::SampleConsensus* agreed,
                                        const JudgementRules& rules,
                                        const std::string& suggested_label,
                                        const std::optional<labels::ClassEvidence>& abstained,
                                        const std::string& training_why) {
  nlohmann::json details = {
      {"label_quality",
       judge::label_quality_details(q, support, rules.min_label_neighbours, suggested_label)},
      {"regain", {{"embedder", rules.embedder}}}};
  std::string why;
  if (agreed) {
    const review::SampleConsensus& c = *agreed;
    details["consensus"] = consensus_details(c);
    details["consensus"]["flag_below"] = rules.consensus_flag_below;
    why = fmt::format("consensus posterior {:.3f} {} {} over {} annotations{}", c.posterior,
                      flagged ? "<" : ">=", rules.consensus_flag_below, c.annotations,
                      neighbours_vote_note(c));
  } else if (!training_why.empty()) {
    why = training_why;
  } else if (abstained) {
    why = judge::abstained_label_why(q, abstained->lift, rules.evidence.min_lift);
  } else {
    why = judge::label_quality_why(q, flagged);
  }
  return judge::changed_label_decision(
      flagged, why, suggested_label, fmt::format("(regain, embedder {})", rules.embedder), details);
}

// What re-judging the labels changes.
struct LabelJudgements {
  std::vector<std::pair<std::int64_t, store::Decision>> changes;  // sample id -> its new decision
  std::vector<store::SampleScore> qualities;                      // of every judged sample
  std::vector<std::int64_t> newly_flagged;  // accepted samples now label_issue
  std::vector<std::int64_t> cleared;        // label issues now accepted
};

// 2b. Judges every sample of `judged`: an annotated one (with a consensus)
// by its consensus posterior, any other by kNN agreement with the thresholds
// of ingest (min_label_neighbours labelled neighbours, label_k other
// accepted samples of the label).
LabelJudgements judge_labels(const StoredSamples& stored, const std::vector<std::size_t>& judged,
                             const JudgedScore& score, const LabelsAfterRelabels& labels,
                             const review::ConsensusLabels& consensus, const JudgementRules& rules,
                             const LabelNames& label_names,
                             const review::TrainingVerdicts& training) {
  // Where the vote can judge: the evidence of today's qualities.
  std::vector<labels::LabelQualityResult> qualities;
  labels::LabelEvidence evidence(rules.evidence);
  for (std::size_t j = 0; j < judged.size(); ++j) {
    qualities.push_back(score(j));
    evidence.add(*stored.samples[judged[j]].label, qualities.back().quality);
  }
  LabelJudgements out;
  for (std::size_t j = 0; j < judged.size(); ++j) {
    const std::size_t n = judged[j];
    const StoredSample& s = stored.samples[n];
    const labels::LabelQualityResult& q = qualities[j];
    // Support: accepted samples of the label other than this one, as at ingest.
    std::int64_t support = 0;
    if (auto it = labels.counts.find(*s.label); it != labels.counts.end()) support = it->second;
    if (s.accepted) --support;
    const auto found = consensus.by_sample.find(s.id);
    const review::SampleConsensus* agreed =
        found != consensus.by_sample.end() ? &found->second : nullptr;
    const bool vote = judge::knn_flags_label(q, support, rules.min_label_neighbours, rules.label_k);
    const labels::ClassEvidence class_evidence = evidence.of(*s.label);
    // A trained model's statistics, where there are some, decide instead of the vote.
    const std::optional<bool> trained = training.flags(s.id, *s.label);
    const bool flagged = agreed    ? agreed->posterior < rules.consensus_flag_below
                         : trained ? *trained
                                   : vote && class_evidence.judged;
    const std::optional<labels::ClassEvidence> abstained =
        !agreed && !trained && vote && !class_evidence.judged ? std::optional(class_evidence)
                                                              : std::nullopt;
    out.qualities.push_back({s.id, q.quality});
    if (flagged == !s.accepted) continue;  // decision unchanged
    const std::string suggested = q.suggested_label ? label_names.name_of(*q.suggested_label) : "-";
    out.changes.emplace_back(
        s.id, rejudged_label_decision(flagged, q, support, agreed, rules, suggested, abstained,
                                      !agreed && trained ? training.why(s.id) : std::string()));
    if (flagged) {
      out.newly_flagged.push_back(s.id);
    } else {
      out.cleared.push_back(s.id);
    }
  }
  return out;
}

// What re-judging the labels (2b, 2c) looked at and found.
struct LabelRejudgement {
  std::vector<std::size_t> judged;  // positions in stored.samples
  index::SearchResults neighbours;  // row j: the judged samples nearest judged[j] (and itself)
  LabelJudgements judgements;
};

// 2b. Judges the labels of `stored` against today's judged samples
// (`today`: accepted and label_issue, as at ingest), leave-one-out; 2c. with
// consensus, first takes the consensus again with the neighbours' votes.
// Fills the report's label counts.
LabelRejudgement rejudge_labels(store::MetadataStore& store, StoredSamples& stored,
                                const index::VectorIndex& today, const RejudgeOptions& options,
                                const CurationConfig& config, LabelsAfterRelabels& labels,
                                review::ConsensusLabels& consensus, const LabelNames& label_names,
                                RejudgeReport& report) {
  LabelRejudgement out;
  const std::vector<std::size_t>& judged = out.judged;
  const JudgementRules rules = judgement_rules(options, config, report.embedder);
  const labels::LabelQuality quality({config.label_k, rules.flag_below});
  out.judged =
      samples_to_judge(store, stored.samples, report.kept_confident_learning, report.kept_reviewed);
  report.without_vector = label_issues_without_vector(store.database());
  const auto k = static_cast<std::size_t>(config.label_k) + 1;  // itself, excluded
  out.neighbours = search_all_rows(today, stored.vectors, stored.dim, judged, k,
                                   SearchProgress{&options.progress, "label neighbours"});
  // The label issues vote too (accepted_labels.h): the index holds them.
  const auto score_with = [&](const labels::LabelQuality& q,
                              const labels::LabelLookup& label_of) -> JudgedScore {
    return [&, q, label_of](std::size_t j) {
      const StoredSample& s = stored.samples[judged[j]];
      return out.neighbours.k > 0
                 ? q.score(out.neighbours, j, static_cast<int>(*s.label), label_of, s.id)
                 : labels::LabelQualityResult{};
    };
  };
  const JudgedScore score =
      score_with(quality, [&](std::int64_t id) { return labels.voter_label(id); });

  // 2c. With consensus: the neighbours' suggested labels are more votes,
  // and the consensus is taken again with them. An annotated sample is
  // then judged by its consensus posterior, which weighs the annotators
  // and the neighbours by what each is worth.
  if (options.consensus && !consensus.by_sample.empty()) {
    const labels::LabelQuality nearest(
        {review::consensus_neighbours(config.label_k), rules.flag_below});
    const std::unordered_map<std::int64_t, int> said = annotators_labels(stored.samples, consensus);
    const labels::LabelLookup said_or_stored = [&](std::int64_t id) -> std::optional<int> {
      const std::optional<int> voter = labels.voter_label(id);
      if (!voter) return voter;
      const auto it = said.find(id);
      return it == said.end() ? voter : std::optional<int>(it->second);
    };
    std::vector<review::ExtraVoter> voters =
        neighbour_voters(stored.samples, judged, consensus, score_with(nearest, said_or_stored),
                         config.min_label_neighbours);
    const std::size_t neighbours = voters.size();
    if (review::ExtraVoter model = review::training_voter(store); !model.votes.empty()) {
      voters.push_back(std::move(model));  // a trained model's predictions: one more voter
    }
    consensus = review::consensus_labels(store, review::consensus_options(), voters);
    take_consensus(consensus, stored.samples, labels);
    for (std::size_t t = 0; t < voters.size(); ++t) {
      const RejudgeReport::NeighbourVoter voter{voters[t].name, consensus.extra_votes[t],
                                                consensus.extra_accuracy[t]};
      if (t < neighbours) {
        report.neighbour_voters.push_back(voter);
      } else {
        report.training_voter = voter;
      }
    }
  }

  const review::TrainingVerdicts training(store);
  out.judgements =
      judge_labels(stored, judged, score, labels, consensus, rules, label_names, training);
  report.judged = judged.size();
  report.newly_flagged = out.judgements.newly_flagged.size();
  report.cleared = out.judgements.cleared.size();
  return out;
}

// Replaces every sample's stored embedding with its vector in `stored` (the
// re-embedded one).
void write_vectors(store::Database& db, const StoredSamples& stored) {
  store::VectorTable table(db);
  for (std::size_t n = 0; n < stored.samples.size(); ++n) {
    table.set_embedding(stored.samples[n].id, stored.vector(n), stored.dim);
  }
}

// `config` with the new embedder (and, when given, its candidate gates);
// throws when the result is not a valid config.
CurationConfig config_with_embedder(CurationConfig config, const std::string& embedder,
                                    const RejudgeOptions& options) {
  config.embedder = embedder;
  if (options.min_candidate_similarity) {
    config.min_candidate_similarity = *options.min_candidate_similarity;
  }
  if (options.text_min_candidate_similarity) {
    config.text_min_candidate_similarity = *options.text_min_candidate_similarity;
  }
  config.validate();
  return config;
}

// Writes a relabel event for every sample whose label the consensus changed
// (samples[n] against stored_labels[n]), naming the label it replaces;
// returns how many.
std::size_t write_relabels(store::MetadataStore& store, const std::vector<StoredSample>& samples,
                           const std::vector<std::optional<std::int64_t>>& stored_labels,
                           const review::ConsensusLabels& consensus,
                           const LabelNames& label_names) {
  std::size_t relabelled = 0;
  for (std::size_t n = 0; n < samples.size(); ++n) {
    if (samples[n].label == stored_labels[n]) continue;
    const review::SampleConsensus& c = consensus.by_sample.at(samples[n].id);
    const std::string before = stored_labels[n] ? label_names.name_of(*stored_labels[n]) : "none";
    nlohmann::json details = {{"consensus", consensus_details(c)}};
    details["consensus"]["label"] = label_names.name_of(c.label);
    details["consensus"]["replaces"] = before;
    store.relabel(samples[n].id, c.label,
                  fmt::format("consensus label {} (Dawid-Skene posterior {:.3f} over {} "
                              "annotations{}) replaces {}",
                              label_names.name_of(c.label), c.posterior, c.annotations,
                              neighbours_vote_note(c), before),
                  details.dump());
    ++relabelled;
  }
  return relabelled;
}

// The samples without content (annotations only: no vector, so not among
// `stored`) take their consensus too: the consensus label, and label_issue
// below consensus_flag_below (accepted at or above it). The `reviewed`
// samples stay as the person left them; the report counts what changed.
void judge_annotations_only(store::MetadataStore& store, const ConsensusLabels& consensus,
                            const StoredSamples& stored, const std::set<std::int64_t>& reviewed,
                            const RejudgeOptions& options, const LabelNames& label_names,
                            RejudgeReport& report) {
  std::unordered_set<std::int64_t> with_vector;
  for (const StoredSample& s : stored.samples) with_vector.insert(s.id);
  std::vector<std::int64_t> ids;
  for (const auto& [id, c] : consensus.by_sample) {
    if (with_vector.count(id) == 0 && reviewed.count(id) == 0) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  for (const std::int64_t id : ids) {
    const std::optional<store::SampleRecord> s = store.find_sample(id);
    if (!s || s->content_hash.rfind("annotations:", 0) != 0) continue;
    const review::SampleConsensus& c = consensus.by_sample.at(id);
    ++report.annotations_only;
    nlohmann::json details = {{"consensus", consensus_details(c)}};
    details["consensus"]["label"] = label_names.name_of(c.label);
    if (s->label != c.label) {
      const std::string before = s->label ? label_names.name_of(*s->label) : "none";
      details["consensus"]["replaces"] = before;
      store.relabel(id, c.label,
                    fmt::format("consensus label {} (Dawid-Skene posterior {:.3f} over {} "
                                "annotations) replaces {}",
                                label_names.name_of(c.label), c.posterior, c.annotations, before),
                    details.dump());
      ++report.relabelled;
    }
    const bool flagged = c.posterior < options.consensus_flag_below;
    const bool is_issue = s->status == store::SampleStatus::label_issue;
    if (flagged == is_issue || (s->status != store::SampleStatus::accepted && !is_issue)) continue;
    details["consensus"]["flag_below"] = options.consensus_flag_below;
    store.update_status(
        id,
        {flagged ? store::SampleStatus::label_issue : store::SampleStatus::accepted, std::nullopt,
         fmt::format("annotations only: consensus posterior {:.3f} {} {} over {} annotations",
                     c.posterior, flagged ? "<" : ">=", options.consensus_flag_below,
                     c.annotations),
         details.dump()});
    ++(flagged ? report.newly_flagged : report.cleared);
  }
}

// Every label was judged against today's dataset: ingest's re-judging
// (stale_labels.cpp) starts over from here.
void restart_judgement_log(store::MetadataStore& store, const StoredSamples& stored,
                           const LabelsAfterRelabels& labels) {
  if (stored.samples.empty()) return;
  LabelJudgementLog log;
  log.add(stored.samples.front().id, stored.samples.back().id,
          static_cast<std::int64_t>(labels.voters()));
  store.set_meta(LabelJudgementLog::kMetaKey, log.to_json());
}

}  // namespace

RejudgeReport rejudge(Dataset& dataset, const RejudgeOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RejudgeReport report;
  const bool reembed = options.embedder.has_value();
  const bool relabel = options.labels || options.consensus || reembed;
  WINNOW_THROW_IF_NOT(
      reembed || (!options.min_candidate_similarity && !options.text_min_candidate_similarity),
      "regain: a new min_candidate_similarity or text_min_candidate_similarity goes with a new "
      "embedder (--embedder)");

  try {
    store::MetadataStore& store = dataset.store();
    store::Transaction tx(store.database());
    dataset.sync_with_store();
    report.previous_embedder = dataset.embedder().spec();

    std::unique_ptr<embed::Embedder> new_embedder;
    if (reembed) new_embedder = embed::make_embedder(*options.embedder);
    const embed::Embedder& embedder = reembed ? *new_embedder : dataset.embedder();
    report.embedder = embedder.spec();

    // 1. The stored samples and their vectors (re-embedded when asked), and
    // the index of today's judged samples in the embedding rejudge uses.
    StoredSamples stored = read_stored_samples(store.database(), dataset.path(), embedder, reembed);
    const std::set<std::int64_t> reviewed =
        options.override_reviews ? std::set<std::int64_t>() : reviewed_samples(store);
    for (StoredSample& s : stored.samples) s.reviewed = reviewed.count(s.id) > 0;
    if (reembed) report.re_embedded = stored.samples.size();
    std::unique_ptr<index::VectorIndex> rebuilt;
    if (reembed) rebuilt = index_of(stored, dataset.config().index);
    index::VectorIndex& today = reembed ? *rebuilt : dataset.index();

    // 2a. Consensus labels replace the stored ones before they are judged.
    std::vector<std::optional<std::int64_t>> stored_labels;  // before any relabel
    for (const StoredSample& s : stored.samples) stored_labels.push_back(s.label);
    LabelsAfterRelabels labels = dataset.accepted_labels();
    ConsensusLabels consensus;  // stays empty without options.consensus
    if (options.consensus) {
      consensus = consensus_labels(store);
      take_consensus(consensus, stored.samples, labels);
      report.duplicate_annotations = consensus.duplicate_annotations;
    }

    // 2b, 2c. Labels, judged against today's judged samples, leave-one-out.
    LabelRejudgement rejudged;
    if (relabel) {
      rejudged = rejudge_labels(store, stored, today, options, dataset.config(), labels, consensus,
                                dataset.label_names(), report);
    }
    const std::vector<std::size_t>& judged = rejudged.judged;
    const index::SearchResults& neighbours = rejudged.neighbours;
    const LabelJudgements& judgements = rejudged.judgements;

    // 3. Gains of the accepted samples against the final dataset (the index
    // is unchanged: it holds label issues too).
    const std::vector<store::SampleScore> gains =
        gains_against_final_index(stored.samples, stored.vectors, stored.dim, today, judged,
                                  neighbours, judgements.newly_flagged, judgements.cleared,
                                  SearchProgress{&options.progress, "gain neighbours"});

    // Write it all.
    CurationConfig new_config = dataset.config();
    if (reembed) {
      write_vectors(store.database(), stored);
      new_config = config_with_embedder(dataset.config(), report.embedder, options);
      store.set_meta(CurationConfig::kMetaKey, new_config.to_json());
    }
    report.relabelled =
        write_relabels(store, stored.samples, stored_labels, consensus, dataset.label_names());
    for (const auto& [id, decision] : judgements.changes) store.update_status(id, decision);
    if (options.consensus) {
      judge_annotations_only(store, consensus, stored, reviewed, options, dataset.label_names(),
                             report);
      report.annotator_accuracy = consensus.annotator_accuracy;
    }
    if (relabel) restart_judgement_log(store, stored, labels);
    if (!judgements.qualities.empty()) store.set_label_qualities(judgements.qualities);
    store.set_gains(gains);
    report.gains_updated = gains.size();
    const std::int64_t revision = dataset.next_revision();
    if (options.consensus) {
      store_consensus_estimates(store,
                                {revision, consensus.annotations_read, report.annotator_accuracy});
    }
    std::filesystem::remove(dataset.index_path());
    store.record_writer();
    tx.commit();

    dataset.committed(revision);
    if (reembed) dataset.replace_embedding(new_config, std::move(new_embedder), std::move(rebuilt));
    dataset.save_index_snapshot();
    dataset.reload_accepted_labels();  // the index in memory is today's already
  } catch (const std::exception&) {
    // Rolled back: the caches may hold changes that were not committed.
    dataset.reopen_index();
    throw;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace winnow::curation::review
