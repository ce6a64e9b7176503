#include "batch_summary.h"

#include <unistd.h>

#include <iostream>

#include <fmt/format.h>

#include "cli_json.h"
#include "winnow/curation/core/printable_text.h"

namespace winnow::cli {

namespace {

// Status keys in the order a person reads them, with their words.
constexpr std::pair<const char*, const char*> kStatusWords[] = {
    {"accepted", "accepted"},
    {"duplicate_exact", "exact duplicates"},
    {"duplicate_near", "near duplicates"},
    {"label_issue", "label issues"},
    {"rejected", "rejected"},
};

std::int64_t count_of(const nlohmann::json& counts, const char* key) {
  return counts.contains(key) ? counts.at(key).get<std::int64_t>() : 0;
}

}  // namespace

void add_summary_options(CLI::App& command, SummaryStyle& style) {
  command.add_flag("--json", style.json,
                   "print each batch's summary as one JSON object, as when stdout is not a "
                   "terminal");
  command.add_flag("--verbose", style.verbose,
                   "at a terminal, also where each batch's time went (seconds_by_phase)");
}

std::string batch_summary_text(const nlohmann::json& batch, bool verbose, const std::string& db) {
  const std::string file = curation::visible_text(batch.value("file", std::string()));
  const std::int64_t id = batch.value("batch", std::int64_t{0});
  if (batch.value("skipped", false)) {
    return fmt::format("{}: already ingested as batch {}, skipped (--redo ingests it again)\n",
                       file, id);
  }
  const nlohmann::json& counts = batch.at("counts");
  std::string out = fmt::format("{}: batch {}, {} records in {:.2f} s\n ", file, id,
                                count_of(counts, "total"), batch.value("seconds", 0.0));
  for (const auto& [key, words] : kStatusWords) {
    out += fmt::format(" {} {}{}", count_of(counts, key), words,
                       key == kStatusWords[4].first ? "" : ",");
  }
  out += "\n";
  if (batch.contains("already_imported") && batch.at("already_imported").get<std::int64_t>() > 0) {
    out += fmt::format("  {} files were already imported\n", batch.at("already_imported").dump());
  }
  if (batch.contains("rejections")) {
    out += "  rejected because:\n";
    for (const nlohmann::json& group : batch.at("rejections")) {
      out += fmt::format("    {} x {}\n", group.at("count").dump(),
                         curation::visible_text(group.at("reason").get<std::string>()));
    }
  }
  if (batch.value("label_conflicts", std::int64_t{0}) > 0) {
    out += fmt::format(
        "  {} duplicates carry another label than their original (label "
        "conflicts: export --details)\n",
        batch.at("label_conflicts").dump());
  }
  if (batch.contains("annotation_rounds")) {
    const nlohmann::json& a = batch.at("annotation_rounds");
    out += fmt::format(
        "  later rounds for stored items: {} annotations added, {} replaced, {} unchanged; {} "
        "items changed, {} relabelled\n",
        a.at("added").dump(), a.at("replaced").dump(), a.at("unchanged").dump(),
        a.at("items").dump(), a.at("relabelled").dump());
  }
  if (batch.contains("label_check")) {
    out +=
        "  " + curation::visible_text(batch.at("label_check").at("line").get<std::string>()) + "\n";
  }
  if (batch.contains("index_save_error")) {
    out += "  warning: the index file was not saved (the next open catches up from the store)\n";
  }
  if (verbose && batch.contains("seconds_by_phase")) {
    out += "  seconds by phase:";
    for (const auto& [phase, seconds] : batch.at("seconds_by_phase").items()) {
      out += fmt::format(" {} {:.3f}", phase, seconds.get<double>());
    }
    out += "\n";
  }
  const std::string shown_db = curation::visible_text(db);
  out += fmt::format(
      "  next: winnow status --db {0}; winnow export --db {0} --status accepted "
      "(--json for this summary as JSON)\n",
      shown_db);
  return out;
}

bool summary_as_json(const SummaryStyle& style) {
  return style.json || ::isatty(STDOUT_FILENO) != 1;
}

void print_batch_summary(const nlohmann::json& batch, const SummaryStyle& style,
                         const std::string& db) {
  if (summary_as_json(style)) {
    std::cout << json_text(batch) << std::endl;
  } else {
    std::cout << batch_summary_text(batch, style.verbose, db) << std::flush;
  }
}

}  // namespace winnow::cli
