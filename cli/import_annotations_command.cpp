// winnow import-annotations --db D [--format csv|label-studio] [--source NAME]
//                           [--choice-control NAME] FILE
//
// A labelling tool's export of annotations, with no content, as one batch:
// the long CSV (item, annotator, label, optional gold and source; crowd-kit's
// task and worker too) or Label Studio's JSON export of a choices project.
// Each item becomes one sample with its annotations, accepted without
// duplicate or neighbour checks (its reason says so), so that `winnow report`
// grades the annotators: consensus, per-annotator accuracy, agreement, the
// class table. The mapping: docs/annotations.md. Prints the same JSON object
// as `winnow ingest`, plus the format and the items and annotations read.
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include "batch_outcome.h"
#include "batch_summary.h"
#include "cli_json.h"
#include "command.h"
#include "winnow/curation/readers/annotations/annotation_importer.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/core/printable_text.h"

namespace winnow::cli {

Command add_import_annotations_command(CLI::App& parent) {
  struct Options {
    std::string db, file, format, source, choice_control;
    std::uint64_t max_mb = curation::readers::AnnotationImportOptions::kDefaultMaxBytes >> 20;
    SummaryStyle style;
    bool redo = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "import-annotations",
      "import a labelling tool's annotations without content (item, annotator, label CSV or "
      "Label Studio JSON) to grade the annotators in `winnow report`");
  cmd->footer("Example: winnow import-annotations --db labels.db votes.csv");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--format", o->format,
                  "csv or label-studio (default: label-studio for a .json file, else csv)");
  cmd->add_option("--source", o->source, "source of the items whose rows name none");
  cmd->add_option("--choice-control", o->choice_control,
                  "Label Studio: the choices control to read (its from_name), when tasks have "
                  "several");
  cmd->add_option("--max-mb", o->max_mb, "refuse a larger file (it is read whole)")
      ->capture_default_str()
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 20));
  add_summary_options(*cmd, o->style);
  add_redo_option(*cmd, o->redo);
  cmd->add_option("file", o->file, "the export (FILE)")->required();
  return {cmd, [o] {
            const auto t0 = std::chrono::steady_clock::now();
            curation::readers::AnnotationImportOptions options;
            if (!o->format.empty())
              options.format = curation::readers::parse_annotation_format(o->format);
            options.source = o->source;
            options.choice_control = o->choice_control;
            options.file.max_bytes = o->max_mb << 20;
            options.file.follow_links = true;  // the user's own file, as every tool reads it
            // The file is read before the database is opened: a file that
            // cannot be read leaves the database untouched.
            curation::readers::AnnotationImporter importer(o->file, options);
            curation::Dataset dataset(o->db);
            curation::ingest::Ingester ingester(dataset);
            curation::ingest::BatchReport r = ingester.ingest_batch(
                curation::printable_text(o->file),
                batch_checksum(dataset, importer.checksum(), o->redo),
                [&](curation::readers::ManifestEntry& entry) { return importer.next(entry); });
            r.seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            nlohmann::json j = curation::ingest::to_json(r);
            j["format"] = to_string(importer.format());
            j["items"] = importer.items();
            j["annotations"] = importer.annotations();
            j["annotations_repeated"] = importer.table().repeated;
            if (importer.format() == curation::readers::AnnotationFormat::label_studio) {
              j["annotations_cancelled"] = importer.table().cancelled;
              j["annotations_without_choice"] = importer.table().without_choice;
            }
            print_batch_summary(j, o->style, o->db);
            if (r.skipped && summary_as_json(o->style))
              std::cerr << r.name << ": already imported as batch " << r.batch_id << ", skipped\n";
            save_index_at_end(dataset);
            return say_batch_outcome(r, dataset.embedder().spec());
          }};
}

}  // namespace winnow::cli
