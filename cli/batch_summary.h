// How the commands that ingest print each batch's summary: the JSON object
// (curation::ingest::to_json, one line) for scripts, when stdout is not a
// terminal or with --json; for a person at a terminal, a few lines: the
// counts, the top reasons for rejections, the label check, what to do next,
// and the time by phase only with --verbose (docs/cli.md, "Output").
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace winnow::cli {

struct SummaryStyle {
  bool json = false;     // --json
  bool verbose = false;  // --verbose
};

// Whether summaries are printed as JSON: --json, or stdout not a terminal.
bool summary_as_json(const SummaryStyle& style);

// --json and --verbose on `command`.
void add_summary_options(CLI::App& command, SummaryStyle& style);

// Prints `batch` (to_json of a BatchReport, with any keys a command adds) on
// stdout as `style` and the terminal say; `db` names the database in the
// next steps.
void print_batch_summary(const nlohmann::json& batch, const SummaryStyle& style,
                         const std::string& db);

// The few lines for a person (what print_batch_summary prints at a terminal).
std::string batch_summary_text(const nlohmann::json& batch, bool verbose, const std::string& db);

}  // namespace winnow::cli
