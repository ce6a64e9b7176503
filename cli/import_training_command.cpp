// winnow import-training --db D [--run NAME] FILE: what a training run learned
// about each sample (JSON lines from winnow.TrainingRecord or
// train_fashion_mnist --training-record) stored with the samples, in one
// revision (docs/curation.md, "Training feedback").
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "command.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/review/training_feedback.h"

namespace winnow::cli {

Command add_import_training_command(CLI::App& parent) {
  struct Options {
    std::string db, file, run;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "import-training",
      "store what a training run learned about each sample (mean loss, loss trend; JSON lines "
      "keyed by sample key): the label check and the report use it");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--run", o->run, "a name for the run (default: the file's name)");
  cmd->add_option("file", o->file,
                  "JSON lines: key, seen, mean_loss, loss_trend, last_loss, "
                  "last_epoch")
      ->required();
  cmd->footer("Example: winnow import-training --db data.db training.jsonl");
  return {cmd, [o] {
            const std::vector<curation::review::TrainingRow> rows =
                curation::review::read_training_file(o->file);
            curation::Dataset dataset(o->db);
            const std::string run =
                o->run.empty() ? std::filesystem::path(o->file).filename().string() : o->run;
            const curation::review::TrainingImport report =
                curation::review::import_training(dataset, rows, run);
            nlohmann::json unknown = nlohmann::json::array();
            for (const std::string& key : report.unknown_keys) {
              unknown.push_back(curation::printable_text(key, 240));
            }
            std::cout << json_text({{"file", curation::printable_text(o->file)},
                                    {"run", run},
                                    {"rows", rows.size()},
                                    {"imported", report.imported},
                                    {"unknown_keys", report.unknown},
                                    {"first_unknown_keys", unknown},
                                    {"other_label", report.other_label},
                                    {"unknown_predicted", report.unknown_predicted},
                                    {"newly_flagged", report.newly_flagged},
                                    {"cleared", report.cleared},
                                    {"revision", report.revision}})
                      << "\n";
            if (report.imported == 0) {
              std::cerr << curation::visible_text(o->file)
                        << ": no row names a sample of the dataset; nothing was stored\n";
              return 1;
            }
            return 0;
          }};
}

}  // namespace winnow::cli
