// winnow import-folder --db D [--source NAME] [--unlabelled] [--key-prefix P] DIR
//
// A folder tree of image files (ImageFolder layout: DIR/<class>/<file>) as
// one batch: keys are paths under DIR, labels the class folders'
// names; files already imported from the same source are skipped, so
// running it again on a grown folder ingests only the new files. The walk,
// what is skipped and what is refused: folder_importer.h. Prints the same
// JSON object as `winnow ingest`, plus `already_imported` and
// `hidden_skipped`; a progress line on stderr when it is a terminal.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "batch_outcome.h"
#include "batch_summary.h"
#include "embedder_note.h"
#include "cli_json.h"
#include "command.h"
#include "progress_line.h"
#include "winnow/curation/readers/folder_importer.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::cli {

Command add_import_folder_command(CLI::App& parent) {
  struct Options {
    std::string db, dir, source, key_prefix;
    bool unlabelled = false;
    int threads = 0;
    bool quiet = false;
    SummaryStyle style;
    bool redo = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "import-folder", "ingest a folder tree of image files (DIR/<class>/<file>) as a batch");
  cmd->footer("Example: winnow import-folder --db data.db --source vendor-a photos/");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--source", o->source, "source of every sample (default: the folder's name)");
  cmd->add_flag("--unlabelled", o->unlabelled,
                "no labels: every file at any depth (default: the first folder level under DIR "
                "is the label)");
  cmd->add_option("--key-prefix", o->key_prefix,
                  "put before every key (keys are paths under DIR), e.g. to import train/ and "
                  "val/ folders of the same layout into one database");
  add_redo_option(*cmd, o->redo);
  add_summary_options(*cmd, o->style);
  add_threads_option(*cmd, o->threads);
  add_quiet_option(*cmd, o->quiet);
  cmd->add_option("dir", o->dir, "the folder (DIR)")->required();
  return {
      cmd, [o] {
        const auto t0 = std::chrono::steady_clock::now();
        choose_embedder_for(o->db, {curation::ContentKind::path, 0}, o->quiet);
        curation::Dataset dataset(o->db);
        curation::ingest::Ingester ingester(dataset);
        dataset.set_threads(o->threads);
        curation::readers::FolderImportOptions options;
        options.labelled = !o->unlabelled;
        options.source = o->source;
        options.key_prefix = o->key_prefix;
        options.image = dataset.image_reading();
        WINNOW_THROW_IF_NOT(options.image.enabled(),
                            "import-folder needs an image embedder, but dataset '{}' embeds "
                            "with '{}', which does not decode image files (use `winnow "
                            "ingest` with text records, or `winnow init` a dataset with an "
                            "image embedder such as the default pixels(...))",
                            o->db, dataset.embedder().spec());
        store::MetadataStore& store = dataset.store();
        curation::readers::FolderImporter importer(
            o->dir, options, [&store](const std::string& key, const std::string& source) {
              const auto sample = store.find_by_external_key(key);
              return sample && sample->source == source;
            });
        ProgressLine progress(importer.total(), "files", o->quiet);
        curation::ingest::BatchReport r = ingester.ingest_batch(
            curation::printable_text(o->dir), batch_checksum(dataset, importer.checksum(), o->redo),
            [&](curation::readers::ManifestEntry& entry) {
              const bool more = importer.next_deferred(entry);
              progress.update(importer.done());
              return more;
            });
        progress.finish();
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        nlohmann::json j = curation::ingest::to_json(r);
        j["already_imported"] = importer.already_imported();
        j["hidden_skipped"] = importer.hidden();
        print_batch_summary(j, o->style, o->db);
        if (r.skipped && summary_as_json(o->style))
          std::cerr << r.name << ": already imported as batch " << r.batch_id << ", skipped\n";
        save_index_at_end(dataset);
        return say_batch_outcome(r, dataset.embedder().spec());
      }};
}

}  // namespace winnow::cli
