// winnow ingest     --db D MANIFEST...
// winnow import-idx --db D IMAGES LABELS [--limit N] [--prefix train]
#include <chrono>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cli_json.h"
#include "command.h"
#include "winnow/curation/idx_importer.h"
#include "winnow/curation/ingest_pipeline.h"
#include "winnow/error.h"

namespace winnow::cli {

namespace {

void print_report(const curation::BatchReport& r) {
  std::cout << batch_report_json(r).dump() << "\n";
  if (r.skipped) std::cerr << r.name << ": already ingested as batch " << r.batch_id << ", skipped\n";
}

}  // namespace

Command add_ingest_command(CLI::App& parent) {
  struct Options {
    std::string db;
    std::vector<std::string> manifests;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("ingest", "ingest JSON Lines manifests, one batch each");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("manifests", o->manifests, "manifest files")->required();
  return {cmd, [o] {
            for (const std::string& m : o->manifests) {
              WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(m),
                                  "manifest '{}' does not exist", m);
            }
            curation::IngestPipeline pipeline(o->db);
            for (const std::string& m : o->manifests) {
              const std::string checksum = curation::file_checksum(m);
              print_report(pipeline.ingest_batch(m, checksum, curation::read_manifest(m)));
            }
            return 0;
          }};
}

Command add_import_idx_command(CLI::App& parent) {
  struct Options {
    std::string db, images, labels, prefix = "train";
    std::size_t limit = 0;
  };
  auto o = std::make_shared<Options>();
  auto* cmd =
      parent.add_subcommand("import-idx", "ingest an IDX image set (MNIST format) as a batch");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("images", o->images, "IDX images file (.gz or plain)")->required();
  cmd->add_option("labels", o->labels, "IDX labels file (.gz or plain)")->required();
  cmd->add_option("--limit", o->limit, "only the first N images (0: all)");
  cmd->add_option("--prefix", o->prefix, "key prefix")->capture_default_str();
  return {cmd, [o] {
            curation::IngestPipeline pipeline(o->db);
            const auto t0 = std::chrono::steady_clock::now();
            std::vector<curation::ManifestRecord> records =
                curation::import_idx(o->images, o->labels, o->prefix);
            if (o->limit > 0 && o->limit < records.size()) records.resize(o->limit);
            const std::string checksum = fmt::format(
                "idx:{}:{}:{}:{}", curation::file_checksum(o->images),
                curation::file_checksum(o->labels), o->prefix, records.size());
            std::vector<curation::ManifestEntry> entries(records.size());
            for (std::size_t i = 0; i < records.size(); ++i) {
              records[i].line = i + 1;
              entries[i].record = std::move(records[i]);
            }
            curation::BatchReport r = pipeline.ingest_batch(o->images, checksum, std::move(entries));
            r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            print_report(r);
            return 0;
          }};
}

}  // namespace winnow::cli
