// winnow report --db D [--format json|html|md] [--out FILE] [--samples FILE]
//
// The annotation-pipeline quality report (docs/report-schema.md). Degenerate
// datasets still get a report (nulls with notes); a missing database is an
// error (exit code 1).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "command.h"
#include "winnow/curation/annotate/annotation_tasks.h"
#include "progress_line.h"
#include "winnow/curation/report/quality_report.h"
#include "winnow/curation/report/report_render.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"

namespace winnow::cli {

namespace {

// Opens `path` for writing or throws naming it.
std::ofstream open_output(const std::string& path, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  WINNOW_THROW_IF_NOT(out.is_open(), "cannot write the {} to '{}'", what, path);
  return out;
}

}  // namespace

Command add_report_command(CLI::App& parent) {
  struct Options {
    std::string db, format = "json", out, samples, pool;
    bool quiet = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "report", "quality report: sources/annotators (worst first), classes, agreement, batches");
  cmd->footer("Example: winnow report --db data.db --format html --out report.html");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--format", o->format, "json, html or md")->capture_default_str();
  cmd->add_option("--out", o->out, "write the report here instead of standard output");
  cmd->add_option("--samples", o->samples,
                  "also write the per-sample export (JSON lines) to this file");
  cmd->add_option("--annotators", o->pool,
                  "the annotator pool (CSV annotator,cost[,capacity], as annotate-next takes "
                  "it): each annotator's cost per label and cost spent");
  add_quiet_option(*cmd, o->quiet);
  return {cmd, [o] {
            WINNOW_THROW_IF_NOT(o->format == "json" || o->format == "html" || o->format == "md",
                                "--format '{}' is not json, html or md", o->format);
            // MetadataStore would create a missing file: refuse instead.
            WINNOW_THROW_IF_NOT(std::filesystem::is_regular_file(o->db),
                                "database '{}' does not exist", o->db);
            store::DatabaseOptions reading;
            reading.read_only = true;  // a database the user may not write is still read
            store::MetadataStore store(o->db, reading);
            curation::report::QualityReportOptions options;
            if (!o->pool.empty()) {
              for (const auto& a : curation::annotate::read_annotator_pool(o->pool)) {
                options.annotator_costs[a.name] = a.cost;
              }
            }
            std::ofstream samples;
            if (!o->samples.empty()) {
              samples = open_output(o->samples, "per-sample export");
              options.sample_export = &samples;
            }
            std::unique_ptr<ProgressLine> progress;  // made with the first step's count
            options.progress = [&](const std::string& step, std::size_t done, std::size_t total) {
              if (!progress) {
                progress = std::make_unique<ProgressLine>(total, "steps", o->quiet,
                                                          ProgressLine::Unit::Steps);
              }
              progress->set_stage(step);
              progress->update(done);
            };
            const nlohmann::json report = curation::report::build_quality_report(store, options);
            if (progress) progress->finish();
            std::string text;
            if (o->format == "json") {
              text = json_text(report, 2) + "\n";
            } else if (o->format == "html") {
              text = curation::report::render_report_html(report);
            } else {
              text = curation::report::render_report_markdown(report);
            }
            if (o->out.empty()) {
              std::cout << text << std::flush;  // a failed write: exit 5 (winnow_main.cpp)
            } else {
              std::ofstream out = open_output(o->out, "report");
              out << text;
              out.close();
              WINNOW_THROW_IF_NOT(!out.fail(), "writing the report to '{}' failed", o->out);
            }
            return 0;
          }};
}

}  // namespace winnow::cli
