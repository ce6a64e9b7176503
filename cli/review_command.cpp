// winnow review --db D FILE: a person's verdicts (keep, drop, relabel,
// not_duplicate; CSV or JSONL, as the gallery's page writes them) applied to
// the dataset, where no machine re-judgement undoes them (docs/review.md).
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "batch_summary.h"
#include "cli_json.h"
#include "command.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/review/verdicts.h"

namespace winnow::cli {

namespace {

using curation::review::ReviewReport;
using curation::review::VerdictOutcome;

struct ReviewCommandOptions {
  std::string db;
  std::string file;
  SummaryStyle style;
};

nlohmann::json review_json(const ReviewReport& r, const std::string& file) {
  nlohmann::json refusals = nlohmann::json::array();
  for (const VerdictOutcome& o : r.outcomes) {
    if (o.result != VerdictOutcome::Result::refused) continue;
    refusals.push_back(
        {{"line", o.line}, {"item", o.item}, {"verdict", o.verdict}, {"why", o.why}});
  }
  return {{"file", file},         {"rows", r.outcomes.size()},
          {"applied", r.applied}, {"unchanged", r.unchanged},
          {"refused", r.refused}, {"refusals", refusals}};
}

std::string review_text(const ReviewReport& r, const std::string& file) {
  std::string text = fmt::format("{}: {} verdicts applied, {} unchanged, {} refused\n",
                                 curation::visible_text(file), r.applied, r.unchanged, r.refused);
  std::size_t shown = 0;
  for (const VerdictOutcome& o : r.outcomes) {
    if (o.result != VerdictOutcome::Result::refused) continue;
    if (++shown > 20) {
      text += fmt::format("  ... and {} more (--json lists them all)\n", r.refused - 20);
      break;
    }
    text += fmt::format("  line {}: {} '{}': {}\n", o.line, curation::visible_text(o.verdict),
                        curation::visible_text(o.item), o.why);
  }
  return text;
}

int run_review(const ReviewCommandOptions& o) {
  const std::vector<curation::review::VerdictRow> rows =
      curation::review::read_verdict_file(o.file);
  curation::Dataset dataset(o.db);
  const ReviewReport report = curation::review::apply_verdicts(dataset, rows);
  if (summary_as_json(o.style)) {
    std::cout << json_text(review_json(report, o.file)) << "\n";
  } else {
    std::cout << review_text(report, o.file);
  }
  return report.refused > 0 ? 1 : 0;
}

}  // namespace

Command add_review_command(CLI::App& parent) {
  auto o = std::make_shared<ReviewCommandOptions>();
  auto* cmd = parent.add_subcommand(
      "review",
      "apply a person's verdicts (keep, drop, relabel, not_duplicate) from a CSV or JSONL file; "
      "no later rejudge or ingest undoes them");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("file", o->file,
                  "verdict file: CSV with a header item,verdict[,label,reviewer,note] or JSONL "
                  "with those fields (the gallery's page downloads one)")
      ->required();
  add_summary_options(*cmd, o->style);
  cmd->footer(
      "Exit code 1 when a row was refused (unknown key or verdict, ...); the other rows are "
      "applied.\nExample: winnow review --db data.db verdicts.csv");
  return {cmd, [o] { return run_review(*o); }};
}

}  // namespace winnow::cli
