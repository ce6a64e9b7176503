// winnow ingest     --db D [--pred-probs FILE [--filter-by F] [--label-quality M]] MANIFEST...
// winnow import-idx --db D IMAGES LABELS [--limit N] [--prefix train]
//
// --pred-probs FILE: JSON Lines of out-of-sample predicted probabilities,
//   {"key": "k1", "pred_probs": [0.1, 0.9]}, one per sample key, optionally
//   preceded by a header line {"classes": ["cat", "dog"]} naming class j of
//   every row (without it, class j is the integer label j). Every row is
//   checked before anything is written: the key must be in the database or
//   in one of the manifests, the row must have K finite, non-negative values
//   summing to 1 (within 1e-3), and the key's label must be one of the
//   classes. After each manifest's batch, confident learning runs over the
//   judged samples with a row (IngestPipeline::revise_label_issues).
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "cli_json.h"
#include "command.h"
#include "progress_line.h"
#include "winnow/curation/ingest/idx_importer.h"
#include "winnow/curation/ingest/ingest_pipeline.h"
#include "winnow/curation/labels/label_text.h"
#include "winnow/curation/printable_text.h"
#include "winnow/error.h"

namespace winnow::cli {

namespace {

// Each summary line is flushed as its batch ends, so a reader of a pipe (a
// script following a long ingest) sees every batch when it is done.
void print_report(const curation::ingest::BatchReport& r) {
  std::cout << json_text(batch_report_json(r)) << std::endl;
  if (r.skipped)
    std::cerr << r.name << ": already ingested as batch " << r.batch_id << ", skipped\n";
}

// A pred-probs file: the table, and the line of every key (for messages).
struct PredProbsFile {
  curation::ingest::PredProbsTable table;
  std::unordered_map<std::string, std::size_t> line_of_key;
};

PredProbsFile read_pred_probs(const std::string& path) {
  using nlohmann::json;
  std::ifstream in(path);
  WINNOW_THROW_IF_NOT(in.good(), "pred-probs file '{}' cannot be read", path);
  PredProbsFile file;
  std::optional<std::size_t> num_classes;
  std::string text;
  std::size_t line = 0;
  bool first = true;
  while (std::getline(in, text)) {
    ++line;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const json j = json::parse(text, nullptr, false);
    WINNOW_THROW_IF_NOT(!j.is_discarded(),
                        "{} line {}: not valid JSON (NaN, Infinity and out-of-range numbers are "
                        "not finite probabilities)",
                        path, line);
    WINNOW_THROW_IF_NOT(j.is_object(), "{} line {}: not a JSON object", path, line);
    if (first && j.contains("classes")) {
      first = false;
      const json& names = j["classes"];
      WINNOW_THROW_IF_NOT(names.is_array() && names.size() >= 2,
                          "{} line {}: \"classes\" must be an array of at least 2 names", path,
                          line);
      for (const json& n : names) {
        WINNOW_THROW_IF_NOT(n.is_string(), "{} line {}: class name {} is not a string", path, line,
                            n.dump());
        file.table.class_names.push_back(n.get<std::string>());
      }
      num_classes = file.table.class_names.size();
      continue;
    }
    first = false;
    WINNOW_THROW_IF_NOT(
        j.contains("key") && j["key"].is_string() && !j["key"].get<std::string>().empty(),
        "{} line {}: missing string \"key\"", path, line);
    const std::string key = j["key"].get<std::string>();
    WINNOW_THROW_IF_NOT(j.contains("pred_probs") && j["pred_probs"].is_array(),
                        "{} line {}: key '{}' has no \"pred_probs\" array", path, line, key);
    const json& values = j["pred_probs"];
    if (!num_classes) num_classes = values.size();
    WINNOW_THROW_IF_NOT(values.size() == *num_classes,
                        "{} line {}: key '{}' has {} probabilities, expected K = {}", path, line,
                        key, values.size(), *num_classes);
    std::vector<float> row;
    double sum = 0.0;
    for (std::size_t c = 0; c < values.size(); ++c) {
      WINNOW_THROW_IF_NOT(values[c].is_number(), "{} line {}: key '{}' class {} is not a number",
                          path, line, key, c);
      const double v = values[c].get<double>();
      WINNOW_THROW_IF_NOT(std::isfinite(v) && v >= 0.0,
                          "{} line {}: key '{}' class {} is {}, not a finite probability >= 0",
                          path, line, key, c, v);
      row.push_back(static_cast<float>(v));
      sum += v;
    }
    WINNOW_THROW_IF_NOT(std::abs(sum - 1.0) <= curation::labels::kPredProbsSumTolerance,
                        "{} line {}: key '{}' probabilities sum to {}, not 1 (within {})", path,
                        line, key, sum, curation::labels::kPredProbsSumTolerance);
    auto [it, fresh] = file.line_of_key.emplace(key, line);
    WINNOW_THROW_IF_NOT(fresh, "{} line {}: key '{}' already had a row on line {}", path, line, key,
                        it->second);
    file.table.rows.emplace(key, std::move(row));
  }
  WINNOW_THROW_IF_NOT(num_classes && *num_classes >= 2,
                      "pred-probs file '{}' has no rows with at least 2 classes", path);
  if (file.table.class_names.empty()) {
    for (std::size_t c = 0; c < *num_classes; ++c)
      file.table.class_names.push_back(std::to_string(c));
  }
  return file;
}

// Before anything is written: every row's key is a sample (stored, or a
// record of a manifest) whose labels are classes of the file.
void check_pred_probs(const PredProbsFile& file, const std::string& path,
                      curation::ingest::IngestPipeline& pipeline,
                      const std::vector<std::vector<curation::ingest::ManifestEntry>>& manifests) {
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
    if (auto s = pipeline.store().find_by_external_key(key)) {
      const bool judged = s->status == store::SampleStatus::accepted ||
                          s->status == store::SampleStatus::label_issue;
      const curation::labels::LabelNames& label_names = pipeline.label_names();
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

nlohmann::json revision_json(const curation::ingest::LabelRevisionReport& rev,
                             const curation::ingest::PredProbsTable& table, std::int64_t batch_id,
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

}  // namespace

Command add_ingest_command(CLI::App& parent) {
  struct Options {
    std::string db;
    std::vector<std::string> manifests;
    std::string pred_probs;
    std::string filter_by = "prune_by_noise_rate";
    std::string label_quality = "self_confidence";
    int min_examples_per_class = 1;
    int threads = 0;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
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
  add_threads_option(*cmd, o->threads);
  add_quiet_option(*cmd, o->quiet);
  cmd->add_option("manifests", o->manifests, "manifest files")->required();
  return {
      cmd, [o] {
        for (const std::string& m : o->manifests) {
          WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(m), "manifest '{}' does not exist",
                              m);
        }
        curation::labels::ConfidentLearningOptions cl;
        cl.filter_by = curation::labels::parse_label_issue_filter(o->filter_by);
        cl.quality = curation::labels::parse_label_quality_method(o->label_quality);
        cl.min_examples_per_class = o->min_examples_per_class;
        WINNOW_THROW_IF_NOT(cl.min_examples_per_class >= 0,
                            "--min-examples-per-class={} must be >= 0", cl.min_examples_per_class);
        curation::ingest::IngestPipeline pipeline(o->db);
        pipeline.set_threads(o->threads);
        curation::ingest::ManifestReaderOptions reading;
        reading.image = pipeline.image_reading();
        if (o->pred_probs.empty()) {
          for (const std::string& m : o->manifests) {
            // Streamed: memory does not grow with the manifest.
            curation::ingest::ManifestReader reader(m, reading);
            const std::string checksum = curation::ingest::file_checksum(m);
            std::error_code size_error;
            const auto size = std::filesystem::file_size(m, size_error);
            ProgressLine progress(size_error ? 0 : size, "records", o->quiet,
                                  ProgressLine::Unit::Bytes);
            std::size_t records = 0;
            const curation::ingest::BatchReport report = pipeline.ingest_batch(
                curation::printable_text(m), checksum, [&](curation::ingest::ManifestEntry& entry) {
                  const bool more = reader.next_deferred(entry);
                  records += more ? 1 : 0;
                  progress.update(reader.bytes_read(), records);
                  return more;
                });
            progress.finish();
            print_report(report);
          }
          save_index_at_end(pipeline);
          return 0;
        }
        // With pred-probs every manifest is read first: the rows are
        // checked against the store and all manifests before any write.
        const PredProbsFile probs = read_pred_probs(o->pred_probs);
        std::vector<std::vector<curation::ingest::ManifestEntry>> manifests;
        for (const std::string& m : o->manifests)
          manifests.push_back(curation::ingest::read_manifest(m, reading));
        check_pred_probs(probs, o->pred_probs, pipeline, manifests);
        for (std::size_t i = 0; i < o->manifests.size(); ++i) {
          const std::string& m = o->manifests[i];
          const curation::ingest::BatchReport report =
              pipeline.ingest_batch(curation::printable_text(m), curation::ingest::file_checksum(m),
                                    std::move(manifests[i]));
          print_report(report);
          const curation::ingest::LabelRevisionReport rev =
              pipeline.revise_label_issues(probs.table, cl, report.batch_id);
          std::cout << json_text(revision_json(rev, probs.table, report.batch_id, cl)) << std::endl;
        }
        save_index_at_end(pipeline);
        return 0;
      }};
}

Command add_import_idx_command(CLI::App& parent) {
  struct Options {
    std::string db, images, labels, prefix = "train";
    std::size_t limit = 0;
    int threads = 0;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      parent.add_subcommand("import-idx", "ingest an IDX image set (MNIST format) as a batch");
  cmd->footer(
      "Example: winnow import-idx --db data.db "
      "/usr/share/datasets/fashion-mnist/train-images-idx3-ubyte.gz "
      "/usr/share/datasets/fashion-mnist/train-labels-idx1-ubyte.gz");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("images", o->images, "IDX images file (.gz or plain)")->required();
  cmd->add_option("labels", o->labels, "IDX labels file (.gz or plain)")->required();
  cmd->add_option("--limit", o->limit, "only the first N images (0: all)");
  cmd->add_option("--prefix", o->prefix, "key prefix")->capture_default_str();
  add_threads_option(*cmd, o->threads);
  add_quiet_option(*cmd, o->quiet);
  return {cmd, [o] {
            curation::ingest::IngestPipeline pipeline(o->db);
            pipeline.set_threads(o->threads);
            const auto t0 = std::chrono::steady_clock::now();
            std::vector<curation::ManifestRecord> records =
                curation::ingest::import_idx(o->images, o->labels, o->prefix);
            if (o->limit > 0 && o->limit < records.size()) records.resize(o->limit);
            const std::string checksum =
                fmt::format("idx:{}:{}:{}:{}", curation::ingest::file_checksum(o->images),
                            curation::ingest::file_checksum(o->labels), o->prefix, records.size());
            std::vector<curation::ingest::ManifestEntry> entries(records.size());
            for (std::size_t i = 0; i < records.size(); ++i) {
              records[i].line = i + 1;
              entries[i].record = std::move(records[i]);
            }
            ProgressLine progress(entries.size(), "images", o->quiet);
            std::size_t next = 0;
            curation::ingest::BatchReport r = pipeline.ingest_batch(
                o->images, checksum, [&](curation::ingest::ManifestEntry& entry) {
                  progress.update(next);
                  if (next == entries.size()) return false;
                  entry = std::move(entries[next++]);
                  return true;
                });
            progress.finish();
            r.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            print_report(r);
            save_index_at_end(pipeline);
            return 0;
          }};
}

}  // namespace winnow::cli
