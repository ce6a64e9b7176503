// Command: one `winnow` subcommand. Each subcommand lives in its own file and
// exposes one add_*_command function that declares its options on the parent
// CLI::App and returns the code to run once it is the parsed subcommand.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace winnow::curation {
class Dataset;
}

namespace winnow::cli {

struct Command {
  CLI::App* app = nullptr;   // the subcommand, to ask whether it was parsed
  std::function<int()> run;  // runs it; returns the exit code
};

// --threads on the subcommands that ingest (Dataset::set_threads).
void add_threads_option(CLI::App& command, int& threads);
// --redo on the subcommands that ingest, and the batch identity it gives a
// manifest of `checksum`: the checksum itself, or with --redo a new one once
// it is done (curation::ingest::redo_checksum).
void add_redo_option(CLI::App& command, bool& redo);
std::string batch_checksum(curation::Dataset& dataset, const std::string& checksum, bool redo);
// At the clean end of a subcommand that ingests: saves the index file if
// its batches left it behind (Dataset::save_index_if_behind), so that
// the next process opens it without catching up. A failure is a warning on
// stderr, not an error: the batches are committed, and the next open
// catches the index up from the store.
void save_index_at_end(curation::Dataset& dataset);

Command add_init_command(CLI::App& parent);
Command add_ingest_command(CLI::App& parent);
Command add_import_idx_command(CLI::App& parent);
Command add_import_folder_command(CLI::App& parent);
Command add_import_annotations_command(CLI::App& parent);
Command add_status_command(CLI::App& parent);
Command add_export_command(CLI::App& parent);
Command add_diff_command(CLI::App& parent);
Command add_import_training_command(CLI::App& parent);
Command add_rejudge_command(CLI::App& parent);
Command add_review_command(CLI::App& parent);
Command add_annotate_next_command(CLI::App& parent);
Command add_report_command(CLI::App& parent);
Command add_gallery_command(CLI::App& parent);
Command add_serve_command(CLI::App& parent);
Command add_demo_command(CLI::App& parent);

}  // namespace winnow::cli
