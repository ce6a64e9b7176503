// winnow ingest --db D [--pred-probs FILE [--filter-by F] [--label-quality M]] MANIFEST...
//
// --pred-probs FILE: JSON Lines of out-of-sample predicted probabilities,
//   {"key": "k1", "pred_probs": [0.1, 0.9]}, one per sample key, optionally
//   preceded by a header line {"classes": ["cat", "dog"]} naming class j of
//   every row (without it, class j is the integer label j); the file is read
//   by readers::read_pred_probs (pred_probs_reader.h). Every row is
//   checked before anything is written: the key must be in the database or
//   in one of the manifests, the row must have K finite, non-negative values
//   summing to 1 (within 1e-3), and the key's label must be one of the
//   classes. After each manifest's batch, confident learning runs over the
//   judged samples with a row (review::revise_label_issues).
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "batch_outcome.h"
#include "batch_summary.h"
#include "embedder_note.h"
#include "cli_json.h"
#include "command.h"
#include "progress_line.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/curation/readers/pred_probs_reader.h"
#include "winnow/curation/review/label_revision.h"
#include "winnow/curation/labels/confident_learning.h"
#include "winnow/curation/labels/label_text.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::cli {

namespace {

// Each summary line is flushed as its batch ends, so a reader of a pipe (a
// script following a long ingest) sees every batch when it is done.
// The exit code of a command of several batches: 1 when one rejected every
// record and none took any (batch_outcome.h), else 0.
class CommandOutcome {
 public:
  void add(const curation::ingest::BatchReport& r, int batch_code) {
    if (batch_code != 0) refused_all_ = true;
    if (!r.skipped && r.counts.total() > r.counts[store::SampleStatus::rejected]) took_ = true;
  }
  int code() const { return refused_all_ && !took_ ? 1 : 0; }

 private:
  bool refused_all_ = false;
  bool took_ = false;
};

void print_report(const curation::ingest::BatchReport& r, const std::string& embedder,
                  const SummaryStyle& style, const std::string& db, CommandOutcome& outcome) {
  print_batch_summary(curation::ingest::to_json(r), style, db);
  if (r.skipped && summary_as_json(style))
    std::cerr << r.name << ": already ingested as batch " << r.batch_id << ", skipped\n";
  outcome.add(r, say_batch_outcome(r, embedder));
}

// Before anything is written: every row's key is a sample (stored, or a
// record of a manifest) whose labels are classes of the file.
void check_pred_probs(const curation::readers::PredProbsFile& file, const std::string& path,
                      curation::Dataset& dataset,
                      const std::vector<std::vector<curation::readers::ManifestEntry>>& manifests) {
  std::unordered_map<std::string, const curation::ManifestRecord*> records;
  for (const auto& entries : manifests) {
    for (const auto& e : entries) {
      if (e.ok()) records.emplace(e.record->key, &*e.record);
    }
  }
  const auto& names = file.table.class_names;
  auto is_class = [&](const std::string& label) {
    return std::find(names.begin(), names.end(), label) != names.end();
  };
  auto fail = [&](const std::string& key, const std::string& label) {
    WINNOW_THROW("{} line {}: key '{}' has label '{}', which is not one of the {} classes{}", path,
                 file.line_of_key.at(key), key, label, names.size(),
                 names.size() > 0 && names[0] == "0"
                     ? " (0..K-1; name others with a {\"classes\": [...]} first line)"
                     : "");
  };
  for (const auto& [key, row] : file.table.rows) {
    if (auto s = dataset.store().find_by_external_key(key)) {
      const bool judged = s->status == store::SampleStatus::accepted ||
                          s->status == store::SampleStatus::label_issue;
      const curation::LabelNames& label_names = dataset.label_names();
      if (judged && s->label && !is_class(label_names.name_of(*s->label))) {
        fail(key, label_names.name_of(*s->label));
      }
      continue;
    }
    auto r = records.find(key);
    WINNOW_THROW_IF_NOT(r != records.end(),
                        "{} line {}: key '{}' is neither in the database nor in a manifest", path,
                        file.line_of_key.at(key), key);
    if (r->second->label) {
      if (!is_class(curation::labels::canonical_label(*r->second->label)))
        fail(key, *r->second->label);
    } else {
      for (const auto& a : r->second->annotations) {
        if (!is_class(curation::labels::canonical_label(a.label))) fail(key, a.label);
      }
    }
  }
}

nlohmann::json revision_json(const curation::review::LabelRevisionReport& rev,
                             const curation::readers::PredProbsTable& table, std::int64_t batch_id,
                             const curation::labels::ConfidentLearningOptions& options) {
  const auto& r = rev.result;
  nlohmann::json thresholds = nlohmann::json::object();
  for (std::size_t j = 0; j < r.thresholds.size(); ++j)
    thresholds[table.class_names[j]] = r.thresholds[j];
  return {{"confident_learning",
           {{"batch", batch_id},
            {"filter_by", curation::labels::to_string(options.filter_by)},
            {"label_quality", curation::labels::to_string(options.quality)},
            {"samples", rev.samples.size()},
            {"classes", table.class_names.size()},
            {"num_label_issues", r.num_label_issues},
            {"num_label_issues_calibrated", r.num_label_issues_calibrated},
            {"flagged", r.num_flagged()},
            {"newly_flagged", rev.newly_flagged},
            {"confirmed", rev.confirmed},
            {"unused_rows", rev.unused_rows},
            {"thresholds", thresholds}}}};
}

struct IngestOptions {
  std::string db;
  std::vector<std::string> manifests;
  std::string pred_probs;
  std::string filter_by = "prune_by_noise_rate";
  std::string label_quality = "self_confidence";
  int min_examples_per_class = 1;
  int threads = 0;
  bool quiet = false;
  bool redo = false;
  SummaryStyle style;
};

// Each manifest streamed into its batch: memory does not grow with the
// manifest. Returns the command's exit code.
int ingest_streamed(const IngestOptions& o, curation::Dataset& dataset,
                    curation::ingest::Ingester& ingester,
                    const curation::readers::ManifestReaderOptions& reading) {
  CommandOutcome outcome;
  for (const std::string& m : o.manifests) {
    curation::readers::ManifestReader reader(m, reading);
    const std::string checksum =
        batch_checksum(dataset, curation::readers::file_checksum(m, true), o.redo);
    std::error_code size_error;
    const auto size = std::filesystem::file_size(m, size_error);
    ProgressLine progress(size_error ? 0 : size, "records", o.quiet, ProgressLine::Unit::Bytes);
    std::size_t records = 0;
    const curation::ingest::BatchReport report = ingester.ingest_batch(
        curation::printable_text(m), checksum, [&](curation::readers::ManifestEntry& entry) {
          const bool more = reader.next_deferred(entry);
          records += more ? 1 : 0;
          progress.update(reader.bytes_read(), records);
          return more;
        });
    progress.finish();
    print_report(report, dataset.embedder().spec(), o.style, o.db, outcome);
  }
  return outcome.code();
}

// With pred-probs every manifest is read first: the rows are checked against
// the store and all manifests before any write; confident learning follows
// each batch. Returns the command's exit code.
int ingest_with_pred_probs(const IngestOptions& o,
                           const curation::labels::ConfidentLearningOptions& cl,
                           curation::Dataset& dataset, curation::ingest::Ingester& ingester,
                           const curation::readers::ManifestReaderOptions& reading) {
  const curation::readers::PredProbsFile probs =
      curation::readers::read_pred_probs(o.pred_probs, curation::labels::kPredProbsSumTolerance);
  std::vector<std::vector<curation::readers::ManifestEntry>> manifests;
  for (const std::string& m : o.manifests)
    manifests.push_back(curation::readers::read_manifest(m, reading));
  check_pred_probs(probs, o.pred_probs, dataset, manifests);
  CommandOutcome outcome;
  for (std::size_t i = 0; i < o.manifests.size(); ++i) {
    const std::string& m = o.manifests[i];
    const curation::ingest::BatchReport report = ingester.ingest_batch(
        curation::printable_text(m),
        batch_checksum(dataset, curation::readers::file_checksum(m, true), o.redo),
        std::move(manifests[i]));
    print_report(report, dataset.embedder().spec(), o.style, o.db, outcome);
    const curation::review::LabelRevisionReport rev =
        curation::review::revise_label_issues(dataset, probs.table, cl, report.batch_id);
    std::cout << json_text(revision_json(rev, probs.table, report.batch_id, cl)) << std::endl;
  }
  return outcome.code();
}

}  // namespace

Command add_ingest_command(CLI::App& parent) {
  auto o = std::make_shared<IngestOptions>();
  auto* cmd = parent.add_subcommand("ingest", "ingest JSON Lines manifests, one batch each");
  cmd->footer("Example: winnow ingest --db data.db batch-1.jsonl batch-2.jsonl");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--pred-probs", o->pred_probs,
                  "JSON Lines {\"key\":..,\"pred_probs\":[..]} of out-of-sample probabilities: "
                  "confident learning after each batch");
  cmd->add_option("--filter-by", o->filter_by,
                  "prune_by_noise_rate|prune_by_class|both|confident_learning|predicted_neq_given")
      ->capture_default_str();
  cmd->add_option("--label-quality", o->label_quality, "self_confidence|normalized_margin")
      ->capture_default_str();
  cmd->add_option("--min-examples-per-class", o->min_examples_per_class,
                  "samples of each given class confident learning never flags")
      ->capture_default_str();
  add_redo_option(*cmd, o->redo);
  add_summary_options(*cmd, o->style);
  add_threads_option(*cmd, o->threads);
  add_quiet_option(*cmd, o->quiet);
  cmd->add_option("manifests", o->manifests, "manifest files")->required();
  return {cmd, [o] {
            for (const std::string& m : o->manifests) {
              WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(m),
                                  "manifest '{}' does not exist", m);
            }
            curation::labels::ConfidentLearningOptions cl;
            cl.filter_by = curation::labels::parse_label_issue_filter(o->filter_by);
            cl.quality = curation::labels::parse_label_quality_method(o->label_quality);
            cl.min_examples_per_class = o->min_examples_per_class;
            WINNOW_THROW_IF_NOT(cl.min_examples_per_class >= 0,
                                "--min-examples-per-class={} must be >= 0",
                                cl.min_examples_per_class);
            if (o->pred_probs.empty()) {
              for (const std::string& m : o->manifests) {
                if (const auto content = curation::manifest_content(m)) {
                  choose_embedder_for(o->db, *content, o->quiet);
                  break;
                }
              }
            }
            curation::Dataset dataset(o->db);
            curation::ingest::Ingester ingester(dataset);
            dataset.set_threads(o->threads);
            curation::readers::ManifestReaderOptions reading;
            reading.image = dataset.image_reading();
            // The user's own files: symbolic links are followed, as every tool does.
            reading.follow_manifest_link = true;
            reading.content.follow_links = true;
            const int code = o->pred_probs.empty()
                                 ? ingest_streamed(*o, dataset, ingester, reading)
                                 : ingest_with_pred_probs(*o, cl, dataset, ingester, reading);
            save_index_at_end(dataset);
            return code;
          }};
}

}  // namespace winnow::cli
