#include "winnow/curation/report/quality_report.h"

#include "winnow/curation/core/reviews_json.h"

#include <algorithm>
#include <limits>
#include <charconv>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <numeric>
#include <optional>
#include <ostream>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/core/status_counts_json.h"
#include "winnow/curation/labels/agreement.h"
#include "winnow/curation/labels/label_health.h"
#include "winnow/curation/review/consensus_estimates.h"
#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/version.h"

#include "image_quality_section.h"
#include "training_section.h"

namespace winnow::curation::report {

namespace {

// The most classes an annotator's Dawid-Skene confusion matrix is reported
// for (K² numbers per annotator).
constexpr std::size_t kMaxConfusionClasses = 30;

using nlohmann::json;

constexpr const char* kUnknownName = "(unknown)";
constexpr double kWilsonZ = 1.959964;  // two-sided 95%

// A read transaction, so every query of the report sees the same data.
class ReadSnapshot {
 public:
  explicit ReadSnapshot(store::Database& db) : db_(db), owned_(!db.in_transaction()) {
    if (owned_) db_.exec("BEGIN DEFERRED");
  }
  ~ReadSnapshot() {
    if (!owned_) return;
    try {
      db_.exec("COMMIT");  // nothing was written: this only ends the snapshot
    } catch (const Error&) {
    }
  }
  ReadSnapshot(const ReadSnapshot&) = delete;
  ReadSnapshot& operator=(const ReadSnapshot&) = delete;

 private:
  store::Database& db_;
  bool owned_;
};

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

double ratio(std::int64_t part, std::int64_t whole) {
  return static_cast<double>(part) / static_cast<double>(whole);
}

// key = value, or key = null plus key_note = why.
void put(json& j, const std::string& key, const std::optional<double>& value,
         const std::string& note) {
  if (value) {
    j[key] = *value;
  } else {
    j[key] = nullptr;
    j[key + "_note"] = note.empty() ? std::string("not computed") : note;
  }
}

void put_share(json& j, const std::string& key, std::int64_t part, std::int64_t whole,
               const std::string& note_if_empty) {
  put(j, key, whole > 0 ? std::optional<double>(ratio(part, whole)) : std::nullopt, note_if_empty);
}

// 95% Wilson score interval of a proportion estimated from n observations.
std::pair<double, double> wilson_interval(double p, double n) {
  const double z2 = kWilsonZ * kWilsonZ;
  const double denominator = 1.0 + z2 / n;
  const double centre = (p + z2 / (2.0 * n)) / denominator;
  const double half =
      kWilsonZ / denominator * std::sqrt(std::max(0.0, p * (1.0 - p) / n + z2 / (4.0 * n * n)));
  return {std::max(0.0, centre - half), std::min(1.0, centre + half)};
}

bool is_judged(store::SampleStatus status) {
  return status == store::SampleStatus::accepted || status == store::SampleStatus::label_issue;
}

// A source or an annotator (or both, when a name is used as both): one row of
// the report's `sources` list.
struct Party {
  std::string name;
  bool submits = false;    // a `source` contributor (or the unknown source)
  bool annotates = false;  // an `annotator` contributor (or the unknown annotator)
  int annotator = -1;      // Dawid-Skene annotator index once it gave an annotation
  // Its `annotator` contributor id (-1: the unknown annotator, or none).
  std::int64_t annotator_contributor = -1;

  // As a source: its submitted samples.
  std::int64_t submitted = 0;
  std::int64_t duplicates = 0;
  std::int64_t judged_records = 0;  // submitted, labelled, judged
  std::int64_t record_issues = 0;   // ... of which label_issue
  std::vector<int> record_labels;   // given label of each judged record
  std::vector<int> record_truth;    // its estimated true label

  // As an annotator: its annotations.
  std::int64_t labels = 0;
  std::int64_t agreeing = 0;       // labels equal to the sample's consensus
  std::int64_t decisive = 0;       // labels without which the sample's consensus would differ
  std::int64_t judged_labels = 0;  // labels of judged samples
  std::int64_t judged_issues = 0;  // ... whose sample is a label_issue
  std::vector<int> given;          // its labels, for Cohen's kappa
  std::vector<int> consensus;      // the samples' consensus labels
};

class ReportBuilder {
 public:
  ReportBuilder(store::MetadataStore& store, const QualityReportOptions& options)
      : store_(store), options_(options) {}

  json build() {
    {
      ReadSnapshot snapshot(store_.database());
      step("reading samples", 0);
      label_names_ = LabelNames::read(store_);
      read_contributors();
      batches_ = store_.all_batches();
      read_samples();
      read_suggested_labels();
      step("reading annotations", 1);
      read_annotations();
      image_quality_ = image_quality_json(store_, label_names_);
      read_label_check();
      label_conflicts_ = store_.count_label_conflicts();
      reviews_ = store_.reviews();
    }
    order_classes();
    step("Dawid-Skene and agreement", 2);
    estimate();
    step("writing the report", 3);
    json report = {
        {"schema_version", kReportSchemaVersion},
        {"generated_at", options_.generated_at.empty() ? utc_now() : options_.generated_at},
        {"winnow_version", kVersion},
        {"database", store_.database().path()}};
    // Which winnow made and last wrote the database; null (with a note) when the
    // database predates that record.
    const auto put_version = [&](const char* key, const std::optional<std::string>& version) {
      report[key] = version ? json(*version) : json(nullptr);
      if (!version)
        report[std::string(key) + "_note"] =
            "not recorded: written before winnow recorded its version";
    };
    put_version("database_created_by", store_.created_by());
    put_version("database_written_by", store_.written_by());
    report["dataset"] = dataset_json();
    report["sources"] = sources_json();
    report["classes"] = classes_json();
    report["confused_pairs"] = confused_pairs_json();
    report["batches"] = batches_json();
    report["image_quality"] = image_quality_;
    report["training"] = training_json(store_, label_names_);
    if (report["training"].is_null()) {
      report["training_note"] =
          "no training statistics: winnow import-training takes a run's per-sample losses";
    }
    if (options_.sample_export != nullptr) {
      step("per-sample export", 4);
      write_sample_export(*options_.sample_export);
    }
    step("report built", kSteps);
    return report;
  }

 private:
  static constexpr std::size_t kSteps = 5;
  void step(const char* name, std::size_t done) const {
    if (options_.progress) options_.progress(name, done, kSteps);
  }

  // --- reading the store ---------------------------------------------------

  std::string label_name(std::int64_t label) const { return label_names_.name_of(label); }

  // Class index of a stored label, registering it on first sight. Indices are
  // provisional until order_classes() sorts the classes.
  int class_of(std::int64_t label) {
    const auto [it, added] = class_of_label_.emplace(label, static_cast<int>(class_labels_.size()));
    if (added) class_labels_.push_back(label);
    return it->second;
  }

  int party(const std::string& name) {
    const auto [it, added] = party_of_name_.emplace(name, static_cast<int>(parties_.size()));
    if (added) {
      parties_.emplace_back();
      parties_.back().name = name;
    }
    return it->second;
  }

  void read_contributors() {
    for (const store::MetadataStore::Contributor& c : store_.contributors()) {
      Party& p = parties_[static_cast<std::size_t>(party(c.name))];
      if (c.kind == "annotator") {
        p.annotates = true;
        annotator_party_of_contributor_[c.id] = party_of_name_[c.name];
        p.annotator_contributor = c.id;
      } else {
        p.submits = true;
      }
    }
  }

  void read_samples() {
    std::unordered_map<std::int64_t, std::size_t> batch_index;
    for (std::size_t b = 0; b < batches_.size(); ++b) batch_index[batches_[b].id] = b;
    batch_counts_.assign(batches_.size(), store::StatusCounts{});
    const bool keep_keys = options_.sample_export != nullptr;
    store_.for_each_sample([&](const store::SampleRecord& s) {
      ids_.push_back(s.id);
      status_.push_back(s.status);
      given_.push_back(s.label ? class_of(*s.label) : -1);
      quality_.push_back(s.label_quality);
      const int source = party(s.source.empty() ? kUnknownName : s.source);
      parties_[static_cast<std::size_t>(source)].submits = true;
      source_.push_back(source);
      ++status_counts_[s.status];
      if (s.batch_id) {
        const auto b = batch_index.find(*s.batch_id);
        if (b != batch_index.end()) ++batch_counts_[b->second][s.status];
      }
      if (keep_keys) keys_.push_back(s.external_key);
    });
  }

  std::optional<std::size_t> sample_index(std::int64_t id) const {
    const auto it = std::lower_bound(ids_.begin(), ids_.end(), id);
    if (it == ids_.end() || *it != id) return std::nullopt;
    return static_cast<std::size_t>(it - ids_.begin());
  }

  // The label the neighbour vote suggested for each sample still flagged as a
  // label issue (the latest such decision's details, label_quality.suggested_label).
  void read_suggested_labels() {
    store_.for_each_sample_event(
        [&](const store::EventRecord& event) {
          if (event.details_json.empty()) return;
          const std::optional<std::size_t> s = sample_index(*event.sample_id);
          if (!s || status_[*s] != store::SampleStatus::label_issue) return;
          const json details = json::parse(event.details_json, nullptr, false);
          if (!details.is_object()) return;
          const auto quality = details.find("label_quality");
          if (quality == details.end() || !quality->is_object()) return;
          const auto suggested = quality->find("suggested_label");
          if (suggested == quality->end() || !suggested->is_string()) return;
          const std::string name = suggested->get<std::string>();
          const std::optional<std::int64_t> label = label_names_.find(name);
          if (!label) return;  // a name the store never recorded
          suggested_[*s] = class_of(*label);
        },
        store::SampleStatus::label_issue);
  }

  int annotator_of(const std::optional<std::int64_t>& contributor_id) {
    int p = -1;
    if (contributor_id) {
      const auto known = annotator_party_of_contributor_.find(*contributor_id);
      WINNOW_THROW_IF_NOT(known != annotator_party_of_contributor_.end(),
                          "{}: an annotation names contributor {}, which is not an annotator",
                          store_.database().path(), *contributor_id);
      p = known->second;
    } else {
      p = party(kUnknownName);
    }
    Party& who = parties_[static_cast<std::size_t>(p)];
    who.annotates = true;
    if (who.annotator < 0) {
      who.annotator = static_cast<int>(annotator_party_.size());
      annotator_party_.push_back(p);
    }
    return who.annotator;
  }

  // Annotations arrive in sample-id order, so the Dawid-Skene items (the
  // annotated samples) are built in one pass with a moving cursor.
  void read_annotations() {
    item_of_sample_.assign(ids_.size(), -1);
    std::size_t cursor = 0;
    store_.for_each_annotation([&](const store::MetadataStore::AnnotationRow& row) {
      while (cursor < ids_.size() && ids_[cursor] < row.sample_id) ++cursor;
      WINNOW_THROW_IF_NOT(cursor < ids_.size() && ids_[cursor] == row.sample_id,
                          "{}: an annotation refers to sample {}, which is not in the store "
                          "(or annotations are not in sample order)",
                          store_.database().path(), row.sample_id);
      if (item_of_sample_[cursor] < 0) {
        if (!item_sample_.empty()) crowd_.offsets.push_back(crowd_.label.size());
        item_of_sample_[cursor] = static_cast<int>(item_sample_.size());
        item_sample_.push_back(cursor);
      }
      crowd_.annotator.push_back(annotator_of(row.annotator_id));
      crowd_.label.push_back(class_of(row.label));
      answer_id_.push_back(row.id);
      annotations_now_.add(row);
    });
    if (!item_sample_.empty()) crowd_.offsets.push_back(crowd_.label.size());
    crowd_.annotators = annotator_party_.size();
  }

  // Classes in display order: integer labels ascending, then named labels
  // alphabetically; every stored class index is renumbered to that order.
  void order_classes() {
    const std::size_t K = class_labels_.size();
    std::vector<std::size_t> order(K);
    std::iota(order.begin(), order.end(), 0);
    const auto named = [&](std::int64_t label) { return label_names_.is_named(label); };
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      const std::int64_t a = class_labels_[x];
      const std::int64_t b = class_labels_[y];
      if (named(a) != named(b)) return !named(a);
      return named(a) ? label_name(a) < label_name(b) : a < b;
    });
    std::vector<int> renumber(K);
    std::vector<std::int64_t> sorted_labels(K);
    for (std::size_t rank = 0; rank < K; ++rank) {
      renumber[order[rank]] = static_cast<int>(rank);
      sorted_labels[rank] = class_labels_[order[rank]];
    }
    class_labels_ = std::move(sorted_labels);
    for (int& c : given_) {
      if (c >= 0) c = renumber[static_cast<std::size_t>(c)];
    }
    for (auto& [sample, c] : suggested_) c = renumber[static_cast<std::size_t>(c)];
    for (int& c : crowd_.label) c = renumber[static_cast<std::size_t>(c)];
    crowd_.classes = K;
    for (std::int64_t label : class_labels_) class_names_.push_back(label_name(label));
  }

  // --- statistics ----------------------------------------------------------

  // The annotators' accuracies as the last `rejudge --consensus` estimated
  // them, while the annotations are what it read (consensus_estimates.h).
  void take_consensus_estimates() {
    const std::optional<review::ConsensusEstimates> stored =
        review::stored_consensus_estimates(store_);
    if (!stored) {
      annotator_accuracy_ = {{"estimated_by", "annotations only"},
                             {"line",
                              "annotators rated by Dawid-Skene over their annotations alone "
                              "(winnow rejudge --consensus rates them with the neighbours' "
                              "votes, and an imported training run's, too)"}};
    } else if (!(annotations_now_ == stored->read)) {
      annotator_accuracy_ = {
          {"estimated_by", "annotations only"},
          {"line", fmt::format("annotators rated by Dawid-Skene over their annotations alone: "
                               "the annotations changed since the last rejudge --consensus "
                               "(revision {}); run it again to rate them with the "
                               "neighbours' votes",
                               stored->revision)}};
    } else {
      consensus_estimates_ = stored;
      annotator_accuracy_ = {
          {"estimated_by", "consensus"},
          {"revision", stored->revision},
          {"line", fmt::format("annotators rated as the consensus of revision {} estimated them "
                               "(rejudge --consensus: their annotations with the neighbours' "
                               "votes, and an imported training run's); "
                               "annotations_only_accuracy is Dawid-Skene over the annotations "
                               "alone",
                               stored->revision)}};
    }
  }

  // The consensus's estimate of party `p`'s accuracy, if it made one.
  std::optional<double> consensus_accuracy(const Party& p) const {
    if (!consensus_estimates_) return std::nullopt;
    const auto found = consensus_estimates_->accuracy.find(p.annotator_contributor);
    if (found == consensus_estimates_->accuracy.end()) return std::nullopt;
    return found->second;
  }

  void estimate() {
    const std::size_t K = class_labels_.size();
    for (std::size_t i = 0; i < crowd_.items(); ++i) {
      if (crowd_.offsets[i + 1] - crowd_.offsets[i] >= 2) ++multiply_annotated_;
    }
    if (crowd_.annotations() > 0) {
      ds_ = labels::dawid_skene(crowd_, options_.dawid_skene);
    }
    take_consensus_estimates();
    // Why per-annotator accuracy cannot be estimated, if it cannot.
    if (crowd_.annotations() == 0) {
      accuracy_note_ = "no annotations";
    } else if (multiply_annotated_ == 0) {
      accuracy_note_ =
          "no sample has two or more annotations, so annotators cannot be checked "
          "against each other";
    } else if (crowd_.annotators == 1) {
      accuracy_note_ = "only one annotator: its accuracy cannot be estimated without a second";
    } else if (K == 1) {
      accuracy_note_ = "only one class is in use, so accuracy is trivially 1";
    }

    // Agreement over the multiply-annotated samples, and the majority vote.
    labels::LabelledUnits units;
    if (ds_) {
      const std::vector<int> majority = labels::majority_vote(crowd_);
      for (std::size_t i = 0; i < crowd_.items(); ++i) {
        const std::size_t first = crowd_.offsets[i];
        const std::size_t last = crowd_.offsets[i + 1];
        if (last - first < 2) continue;
        units.add_unit(crowd_.label.data() + first, crowd_.label.data() + last);
        if (majority[i] != ds_->consensus[i]) ++consensus_differs_;
      }
    }
    alpha_ = labels::krippendorff_alpha_nominal(units);
    if (units.size() == 0) {
      alpha_.note = "no sample has two or more annotations";
      fleiss_ = labels::AgreementResult{std::nullopt, 0, alpha_.note};
    } else {
      fleiss_ = labels::fleiss_kappa(units);
      if (fleiss_.value) fleiss_raters_ = static_cast<std::int64_t>(units.ratings(0));
    }

    // The estimated true label of every judged labelled sample, class health
    // and the sources' record-label figures.
    labels::LabelHealthCounter health(K);
    for (std::size_t s = 0; s < ids_.size(); ++s) {
      Party& source = parties_[static_cast<std::size_t>(source_[s])];
      ++source.submitted;
      if (store::is_duplicate(status_[s])) ++source.duplicates;
      if (given_[s] < 0 || !is_judged(status_[s])) continue;
      ++labelled_judged_;
      const int truth = estimated_true_label(s);
      health.add(static_cast<std::size_t>(given_[s]), static_cast<std::size_t>(truth), quality_[s]);
      ++source.judged_records;
      if (status_[s] == store::SampleStatus::label_issue) ++source.record_issues;
      source.record_labels.push_back(given_[s]);
      source.record_truth.push_back(truth);
    }
    health_ = health.finish(options_.max_confused_pairs);

    // Annotators against the consensus.
    std::vector<double> log_posterior(K);
    for (std::size_t i = 0; i < crowd_.items(); ++i) {
      const std::size_t s = item_sample_[i];
      labels::item_log_posterior(*ds_, crowd_, i, log_posterior);
      for (std::size_t a = crowd_.offsets[i]; a < crowd_.offsets[i + 1]; ++a) {
        Party& who = parties_[static_cast<std::size_t>(
            annotator_party_[static_cast<std::size_t>(crowd_.annotator[a])])];
        ++who.labels;
        if (crowd_.label[a] == ds_->consensus[i]) ++who.agreeing;
        if (decides(log_posterior, a, ds_->consensus[i])) ++who.decisive;
        who.given.push_back(crowd_.label[a]);
        who.consensus.push_back(ds_->consensus[i]);
        if (is_judged(status_[s])) {
          ++who.judged_labels;
          if (status_[s] == store::SampleStatus::label_issue) ++who.judged_issues;
        }
      }
    }
  }

  // Whether answer a decides its item: without it (the estimated model
  // fixed), the most probable class would not be `consensus`.
  bool decides(const std::vector<double>& log_posterior, std::size_t a, int consensus) const {
    std::size_t best = 0;
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t c = 0; c < log_posterior.size(); ++c) {
      const double without = log_posterior[c] - labels::answer_log_likelihood(*ds_, crowd_, a, c);
      if (without > top) top = without, best = c;
    }
    return static_cast<int>(best) != consensus;
  }

  // Consensus when annotated, else the suggested label of a flagged sample,
  // else the given label.
  int estimated_true_label(std::size_t s) const {
    if (item_of_sample_[s] >= 0) {
      return ds_->consensus[static_cast<std::size_t>(item_of_sample_[s])];
    }
    const auto suggested = suggested_.find(s);
    if (suggested != suggested_.end()) return suggested->second;
    return given_[s];
  }

  // --- JSON ----------------------------------------------------------------

  const std::string& class_name(int c) const { return class_names_[static_cast<std::size_t>(c)]; }

  // Where the label vote judges, with the dataset's own thresholds; null
  // without a labelled judged sample or a recorded config.
  void read_label_check() {
    const std::optional<std::string> config_text = store_.get_meta(CurationConfig::kMetaKey);
    if (!config_text) return;
    const labels::LabelEvidence evidence =
        stored_label_evidence(store_, CurationConfig::from_json(*config_text));
    if (evidence.samples() > 0) label_check_ = label_check_json(evidence, label_names_);
  }

  json dataset_json() const {
    const std::int64_t samples = static_cast<std::int64_t>(ids_.size());
    const std::int64_t rejected = status_counts_[store::SampleStatus::rejected];
    const std::int64_t duplicates = status_counts_[store::SampleStatus::duplicate_exact] +
                                    status_counts_[store::SampleStatus::duplicate_near];
    json d = {{"samples", samples}, {"by_status", counts_json(status_counts_)}};
    d["by_status"].erase("total");
    put_share(d, "duplicate_rate", duplicates, samples - rejected,
              "no samples other than rejected ones");
    put_share(d, "label_issue_rate", status_counts_[store::SampleStatus::label_issue],
              labelled_judged_,
              "no labelled sample was judged (all are rejected, duplicates or unlabelled)");
    d["labelled_samples"] = labelled_judged_;
    d["annotations"] = static_cast<std::int64_t>(crowd_.annotations());
    d["annotated_samples"] = static_cast<std::int64_t>(crowd_.items());
    d["multiply_annotated_samples"] = multiply_annotated_;
    json distribution = json::object();
    for (const labels::ClassHealth& c : health_.classes)
      distribution[class_names_[c.label]] = c.given;
    d["class_distribution"] = distribution;
    d["class_confusion"] = class_confusion_json();
    put(d, "health_score", health_.health_score, health_.health_score_note);
    d["label_check"] = label_check_;
    if (crowd_.annotations() > 0) d["annotator_accuracy"] = annotator_accuracy_;
    d["label_conflicts"] = label_conflicts_;
    d["reviews"] = reviews_json(reviews_);
    if (label_check_.is_null()) {
      d["label_check_note"] = "no labelled sample judged by the kNN vote yet";
    }
    put(d, "krippendorff_alpha", alpha_.value, alpha_.note);
    d["krippendorff_alpha_samples"] = static_cast<std::int64_t>(alpha_.units);
    put(d, "fleiss_kappa", fleiss_.value, fleiss_.note);
    d["fleiss_kappa_samples"] = fleiss_.value ? static_cast<std::int64_t>(fleiss_.units) : 0;
    d["fleiss_kappa_raters"] = fleiss_raters_ ? json(*fleiss_raters_) : json(nullptr);
    if (ds_) {
      json run = {{"iterations", ds_->iterations},
                  {"converged", ds_->converged},
                  {"final_change", ds_->final_change},
                  {"tolerance", options_.dawid_skene.tolerance},
                  {"max_iterations", options_.dawid_skene.max_iterations},
                  {"smoothing", options_.dawid_skene.smoothing},
                  {"items", static_cast<std::int64_t>(crowd_.items())},
                  {"classes", static_cast<std::int64_t>(crowd_.classes)},
                  {"annotators", static_cast<std::int64_t>(crowd_.annotators)},
                  {"model", ds_->one_coin ? "one-coin" : "confusion matrices"}};
      d["dawid_skene"] = run;
    } else {
      d["dawid_skene"] = nullptr;
      d["dawid_skene_note"] = "no annotations";
    }
    put_share(d, "consensus_vs_majority", consensus_differs_, multiply_annotated_,
              "no sample has two or more annotations");
    return d;
  }

  // The dataset's class confusion: K x K up to kMaxConfusionClasses; past
  // that the kMaxConfusionClasses - 1 classes given most often, and one
  // "other" row and column that sums the rest, so the report's size does not
  // grow with the square of the classes.
  json class_confusion_json() const {
    const std::size_t K = class_labels_.size();
    if (K <= kMaxConfusionClasses) {
      return {{"class_names", class_names_}, {"counts", matrix_json(health_.counts)}};
    }
    std::vector<std::int64_t> given(K, 0);
    for (std::size_t r = 0; r < K; ++r) {
      for (std::size_t c = 0; c < K; ++c) given[r] += health_.counts[r * K + c];
    }
    std::vector<std::size_t> order(K);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return given[a] > given[b]; });
    const std::size_t kept = kMaxConfusionClasses - 1;
    std::vector<std::size_t> slot(K, kept);  // the folded row of each class
    std::vector<std::string> names;
    for (std::size_t i = 0; i < kept; ++i) {
      slot[order[i]] = i;
      names.push_back(class_names_[order[i]]);
    }
    names.push_back(fmt::format("(other {} classes)", K - kept));
    const std::size_t F = kept + 1;
    std::vector<std::int64_t> folded(F * F, 0);
    for (std::size_t r = 0; r < K; ++r) {
      for (std::size_t c = 0; c < K; ++c)
        folded[slot[r] * F + slot[c]] += health_.counts[r * K + c];
    }
    json rows = json::array();
    for (std::size_t r = 0; r < F; ++r) {
      rows.push_back(std::vector<std::int64_t>(folded.begin() + static_cast<long>(r * F),
                                               folded.begin() + static_cast<long>((r + 1) * F)));
    }
    return {{"class_names", names},
            {"counts", rows},
            {"note", fmt::format("{} classes: the {} given most often, the rest summed in one row "
                                 "and column",
                                 K, kept)}};
  }

  json matrix_json(const std::vector<std::int64_t>& counts) const {
    const std::size_t K = class_labels_.size();
    json rows = json::array();
    for (std::size_t r = 0; r < K; ++r) {
      rows.push_back(std::vector<std::int64_t>(counts.begin() + static_cast<long>(r * K),
                                               counts.begin() + static_cast<long>((r + 1) * K)));
    }
    return rows;
  }

  json source_json(const Party& p) const {
    const char* kind = p.submits && p.annotates ? "both" : p.annotates ? "annotator" : "source";
    json j = {{"name", p.name}, {"kind", kind}, {"submitted", p.submitted}};
    j["class_names"] = json::array();  // filled when the source's matrix is given
    if (p.annotator >= 0) {
      const auto w = static_cast<std::size_t>(p.annotator);
      j["labels"] = p.labels;
      // The consensus's estimate where it made one, else the annotations'.
      const std::optional<double> by_consensus = consensus_accuracy(p);
      std::optional<double> by_annotations;
      if (accuracy_note_.empty()) by_annotations = ds_->expected_accuracy[w];
      if (const std::optional<double> rated = by_consensus ? by_consensus : by_annotations) {
        j["estimated_accuracy"] = *rated;
        j["accuracy_estimated_by"] = by_consensus ? "consensus" : "annotations only";
        const auto [low, high] = wilson_interval(*rated, static_cast<double>(p.labels));
        j["accuracy_interval"] = {low, high};
        if (by_consensus && by_annotations) j["annotations_only_accuracy"] = *by_annotations;
      } else {
        put(j, "estimated_accuracy", std::nullopt, accuracy_note_);
        put(j, "accuracy_interval", std::nullopt, accuracy_note_);
      }
      if (accuracy_note_.empty()) {
        const std::size_t K = class_labels_.size();
        if (K > kMaxConfusionClasses) {
          // K² cells for every annotator: unreadable, and what made reports of
          // hundreds of classes and annotators gigabytes.
          put(j, "confusion", std::nullopt,
              fmt::format("{} classes: a matrix per annotator is given up to {} classes; "
                          "estimated_accuracy sums it up",
                          K, kMaxConfusionClasses));
        } else if (ds_->one_coin) {
          put(j, "confusion", std::nullopt,
              fmt::format("{} annotators x {} classes squared is past the {} cells of the full "
                          "model: each annotator has one accuracy (the one-coin model)",
                          crowd_.annotators, K, options_.dawid_skene.max_confusion_cells));
        } else {
          json confusion = json::array();
          for (std::size_t c = 0; c < K; ++c) {
            json row = json::array();
            for (std::size_t k = 0; k < K; ++k) row.push_back(ds_->confusion_at(w, c, k));
            confusion.push_back(row);
          }
          j["confusion"] = confusion;
          j["class_names"] = class_names_;
        }
      } else {
        put(j, "confusion", std::nullopt, accuracy_note_);
      }
      put_share(j, "agreement_with_consensus", p.agreeing, p.labels, "no labels");
      j["decisive_labels"] = p.decisive;
      if (const auto cost = options_.annotator_costs.find(p.name);
          cost != options_.annotator_costs.end()) {
        j["cost_per_label"] = cost->second;
        j["cost_spent"] = cost->second * static_cast<double>(p.labels);
      }
      const labels::AgreementResult kappa = labels::cohen_kappa(p.given, p.consensus);
      put(j, "cohen_kappa", kappa.value, kappa.note);
      put_share(j, "label_issue_share", p.judged_issues, p.judged_labels,
                "none of its labelled samples was judged (rejected or duplicates)");
    } else {
      // A submitter without annotations: its record labels against the
      // estimated true labels.
      const std::string note = "no annotations from this source; Dawid-Skene rates annotators only";
      j["labels"] = p.judged_records;
      put(j, "estimated_accuracy", std::nullopt, note);
      put(j, "accuracy_interval", std::nullopt, note);
      put(j, "confusion", std::nullopt, note);
      std::int64_t agreeing = 0;
      for (std::size_t r = 0; r < p.record_labels.size(); ++r) {
        if (p.record_labels[r] == p.record_truth[r]) ++agreeing;
      }
      put_share(j, "agreement_with_consensus", agreeing, p.judged_records,
                "none of its labelled samples was judged");
      const labels::AgreementResult kappa = labels::cohen_kappa(p.record_labels, p.record_truth);
      put(j, "cohen_kappa", kappa.value, kappa.note);
      put_share(j, "label_issue_share", p.record_issues, p.judged_records,
                "none of its labelled samples was judged");
    }
    put_share(j, "duplicate_share", p.duplicates, p.submitted, "submitted no samples");
    return j;
  }

  json sources_json() const {
    std::vector<json> rows;
    for (const Party& p : parties_) {
      if (p.submitted == 0 && p.annotator < 0) continue;  // a name with no rows
      rows.push_back(source_json(p));
    }
    // Worst first: ascending estimated accuracy, unrated last, then by name.
    std::stable_sort(rows.begin(), rows.end(), [](const json& x, const json& y) {
      const bool rated_x = x["estimated_accuracy"].is_number();
      const bool rated_y = y["estimated_accuracy"].is_number();
      if (rated_x != rated_y) return rated_x;
      if (rated_x && x["estimated_accuracy"] != y["estimated_accuracy"]) {
        return x["estimated_accuracy"].get<double>() < y["estimated_accuracy"].get<double>();
      }
      return x["name"].get<std::string>() < y["name"].get<std::string>();
    });
    return rows;
  }

  json classes_json() const {
    json rows = json::array();
    for (const labels::ClassHealth& c : health_.classes) {
      json row = {{"class", class_names_[c.label]},
                  {"given", c.given},
                  {"label_issues", c.label_issues},
                  {"inverse_label_issues", c.inverse_label_issues}};
      put(row, "label_noise", c.label_noise, c.label_noise_note);
      put(row, "inverse_label_noise", c.inverse_label_noise, c.inverse_label_noise_note);
      put(row, "label_quality_score", c.label_quality_score, c.label_noise_note);
      put(row, "mean_label_quality", c.mean_label_quality, c.mean_label_quality_note);
      rows.push_back(row);
    }
    return rows;
  }

  json confused_pairs_json() const {
    json rows = json::array();
    for (const labels::ConfusedPair& pair : health_.confused_pairs) {
      rows.push_back({{"a", class_names_[pair.a]},
                      {"b", class_names_[pair.b]},
                      {"count", pair.count},
                      {"joint_probability", pair.joint_probability}});
    }
    return rows;
  }

  // The consensus as each batch left it, under the final estimated model:
  // per batch, the annotations written by its end, the samples they cover,
  // and the mean posterior of those samples' most probable class (the
  // expected share of right consensus labels). Answers are replayed in the
  // order they were written; each moves its own sample's posterior only.
  std::vector<json> consensus_by_batch() {
    std::vector<json> out(batches_.size(), nullptr);
    if (!ds_ || crowd_.annotations() == 0) return out;
    const std::size_t K = ds_->classes;
    std::vector<std::size_t> item_of_answer(crowd_.annotations());
    for (std::size_t i = 0; i < crowd_.items(); ++i) {
      for (std::size_t a = crowd_.offsets[i]; a < crowd_.offsets[i + 1]; ++a) item_of_answer[a] = i;
    }
    std::vector<std::size_t> order(crowd_.annotations());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(),
              [&](std::size_t x, std::size_t y) { return answer_id_[x] < answer_id_[y]; });
    std::vector<float> log_post;                     // items x K, filled on an item's first answer
    std::vector<float> best(crowd_.items(), -1.0f);  // its max posterior, once answered
    log_post.assign(crowd_.items() * K, 0.0f);
    double sum = 0.0;
    std::size_t covered = 0, next = 0;
    for (std::size_t b = 0; b < batches_.size(); ++b) {
      if (!batches_[b].finished_at) continue;
      const std::optional<std::int64_t> last = store_.last_annotation_by(*batches_[b].finished_at);
      if (!last) continue;
      for (; next < order.size() && answer_id_[order[next]] <= *last; ++next) {
        const std::size_t a = order[next], i = item_of_answer[a];
        float* row = log_post.data() + i * K;
        if (best[i] < 0) {
          for (std::size_t c = 0; c < K; ++c)
            row[c] = static_cast<float>(labels::class_log_prior(*ds_, c));
          ++covered;
        } else {
          sum -= best[i];
        }
        for (std::size_t c = 0; c < K; ++c)
          row[c] += static_cast<float>(labels::answer_log_likelihood(*ds_, crowd_, a, c));
        const float top = *std::max_element(row, row + K);
        double z = 0.0;
        for (std::size_t c = 0; c < K; ++c) z += std::exp(static_cast<double>(row[c] - top));
        best[i] = static_cast<float>(1.0 / z);
        sum += best[i];
      }
      out[b] = {{"annotations", next},
                {"samples", covered},
                {"expected_accuracy",
                 covered > 0 ? json(sum / static_cast<double>(covered)) : json(nullptr)}};
    }
    return out;
  }

  json batches_json() {
    json rows = json::array();
    store::StatusCounts cumulative;
    const std::vector<json> consensus = consensus_by_batch();
    for (std::size_t b = 0; b < batches_.size(); ++b) {
      const store::BatchRecord& batch = batches_[b];
      for (store::SampleStatus status : store::kAllSampleStatuses) {
        cumulative[status] += batch_counts_[b][status];
      }
      rows.push_back({{"id", batch.id},
                      {"file", batch.file_name},
                      {"state", std::string(to_string(batch.state))},
                      {"attempts", batch.attempts},
                      {"created_at", batch.created_at},
                      {"finished_at", batch.finished_at ? json(*batch.finished_at) : json(nullptr)},
                      {"counts", counts_json(batch_counts_[b])},
                      {"cumulative", counts_json(cumulative)},
                      {"consensus", consensus[b]}});
    }
    return rows;
  }

  void write_sample_export(std::ostream& out) const {
    std::vector<std::string> annotator_names;
    for (int p : annotator_party_) {
      annotator_names.push_back(parties_[static_cast<std::size_t>(p)].name);
    }
    for (std::size_t s = 0; s < ids_.size(); ++s) {
      const int item = item_of_sample_[s];
      if (given_[s] < 0 && item < 0) continue;
      json line = {{"id", ids_[s]},
                   {"key", keys_[s]},
                   {"status", std::string(to_string(status_[s]))},
                   {"given_label", given_[s] >= 0 ? json(class_name(given_[s])) : json(nullptr)}};
      json annotations = json::object();
      if (item >= 0) {
        const auto i = static_cast<std::size_t>(item);
        line["consensus_label"] = class_name(ds_->consensus[i]);
        line["consensus_quality"] = ds_->consensus_posterior[i];
        for (std::size_t a = crowd_.offsets[i]; a < crowd_.offsets[i + 1]; ++a) {
          // A second round by the same annotator overwrites the first.
          annotations[annotator_names[static_cast<std::size_t>(crowd_.annotator[a])]] =
              class_name(crowd_.label[a]);
        }
      } else {
        line["consensus_label"] = nullptr;
        line["consensus_quality"] = nullptr;
      }
      line["annotations"] = annotations;
      out << line.dump() << '\n';
    }
    WINNOW_THROW_IF_NOT(out.good(), "{}: writing the per-sample export failed",
                        store_.database().path());
  }

  store::MetadataStore& store_;
  const QualityReportOptions& options_;

  // Labels and classes.
  LabelNames label_names_;
  std::unordered_map<std::int64_t, int> class_of_label_;  // provisional indices
  std::vector<std::int64_t> class_labels_;                // by class index
  std::vector<std::string> class_names_;

  // Sources and annotators.
  std::vector<Party> parties_;
  std::unordered_map<std::string, int> party_of_name_;
  std::unordered_map<std::int64_t, int> annotator_party_of_contributor_;
  std::vector<int> annotator_party_;  // Dawid-Skene annotator index -> party

  // Samples, in id order (index s).
  std::vector<std::int64_t> ids_;
  std::vector<store::SampleStatus> status_;
  std::vector<int> given_;  // class index, -1 when unlabelled
  std::vector<std::optional<double>> quality_;
  std::vector<int> source_;                         // party
  std::vector<std::string> keys_;                   // only for the per-sample export
  std::unordered_map<std::size_t, int> suggested_;  // sample -> suggested class
  store::StatusCounts status_counts_;
  std::vector<store::BatchRecord> batches_;
  std::vector<std::int64_t> answer_id_;  // annotations.id of each crowd_ answer
  std::vector<store::StatusCounts> batch_counts_;

  // Annotations: Dawid-Skene items are the annotated samples.
  labels::CrowdLabels crowd_;
  std::vector<int> item_of_sample_;       // -1 when not annotated
  std::vector<std::size_t> item_sample_;  // item -> sample

  // Results.
  std::optional<labels::DawidSkeneResult> ds_;
  std::string accuracy_note_;
  review::AnnotationsFingerprint annotations_now_;
  std::optional<review::ConsensusEstimates> consensus_estimates_;
  json annotator_accuracy_;  // dataset.annotator_accuracy
  std::int64_t multiply_annotated_ = 0;
  std::int64_t consensus_differs_ = 0;
  std::int64_t labelled_judged_ = 0;
  labels::AgreementResult alpha_;
  labels::AgreementResult fleiss_;
  std::optional<std::int64_t> fleiss_raters_;
  labels::LabelHealth health_;
  json label_check_;  // null: none
  std::int64_t label_conflicts_ = 0;
  std::vector<store::ReviewRecord> reviews_;  // a person's verdicts
  json image_quality_;                        // image_quality_section.h
};

}  // namespace

json build_quality_report(store::MetadataStore& store, const QualityReportOptions& options) {
  return ReportBuilder(store, options).build();
}

void write_sample_export(store::MetadataStore& store, std::ostream& out,
                         QualityReportOptions options) {
  options.sample_export = &out;
  build_quality_report(store, options);
}

}  // namespace winnow::curation::report
