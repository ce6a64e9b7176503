// winnow import-idx --db D IMAGES LABELS [--limit N] [--prefix train]
//
// An IDX image set (MNIST format, idx_importer.h) as one batch, keys
// "<prefix>-NNNNNN". Prints the same JSON object as `winnow ingest`; a
// progress line on stderr when it is a terminal.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "batch_outcome.h"
#include "batch_summary.h"
#include "embedder_note.h"
#include "cli_json.h"
#include "command.h"
#include "progress_line.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/error.h"

namespace winnow::cli {

Command add_import_idx_command(CLI::App& parent) {
  struct Options {
    std::string db, images, labels, prefix = "train";
    std::size_t limit = 0;
    int threads = 0;
    bool quiet = false;
    SummaryStyle style;
    bool redo = false;
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
  add_redo_option(*cmd, o->redo);
  add_summary_options(*cmd, o->style);
  add_threads_option(*cmd, o->threads);
  add_quiet_option(*cmd, o->quiet);
  return {cmd, [o] {
            choose_embedder_for(o->db, {curation::ContentKind::pixels, 0}, o->quiet);
            curation::Dataset dataset(o->db);
            curation::ingest::Ingester ingester(dataset);
            dataset.set_threads(o->threads);
            const auto t0 = std::chrono::steady_clock::now();
            std::vector<curation::ManifestRecord> records =
                curation::readers::import_idx(o->images, o->labels, o->prefix);
            if (o->limit > 0 && o->limit < records.size()) records.resize(o->limit);
            const std::string checksum = batch_checksum(
                dataset,
                fmt::format("idx:{}:{}:{}:{}", curation::readers::file_checksum(o->images, true),
                            curation::readers::file_checksum(o->labels, true), o->prefix,
                            records.size()),
                o->redo);
            std::vector<curation::readers::ManifestEntry> entries(records.size());
            for (std::size_t i = 0; i < records.size(); ++i) {
              records[i].line = i + 1;
              entries[i].record = std::move(records[i]);
            }
            ProgressLine progress(entries.size(), "images", o->quiet);
            std::size_t next = 0;
            curation::ingest::BatchReport r = ingester.ingest_batch(
                o->images, checksum, [&](curation::readers::ManifestEntry& entry) {
                  progress.update(next);
                  if (next == entries.size()) return false;
                  entry = std::move(entries[next++]);
                  return true;
                });
            progress.finish();
            r.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            print_batch_summary(curation::ingest::to_json(r), o->style, o->db);
            if (r.skipped && summary_as_json(o->style))
              std::cerr << r.name << ": already ingested as batch " << r.batch_id << ", skipped\n";
            save_index_at_end(dataset);
            return say_batch_outcome(r, dataset.embedder().spec());
          }};
}

}  // namespace winnow::cli
