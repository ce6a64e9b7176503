// winnow annotate-next --db D --budget N [--annotators POOL.csv]
// [--format csv|jsonl|label-studio] [--out FILE]: what to annotate next and by
// whom (docs/annotation-campaign.md).
#include <iostream>
#include <memory>
#include <sstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "command.h"
#include "output_file.h"
#include "csv_field.h"
#include "winnow/curation/annotate/annotation_tasks.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/error.h"
#include "winnow/store/vector_table.h"

namespace winnow::cli {

namespace {

using curation::annotate::AnnotationTask;

nlohmann::json task_json(const AnnotationTask& t) {
  return {{"item", t.item},
          {"annotator", t.annotator},
          {"reason", t.reason},
          {"score", t.score},
          {"gain", t.gain},
          {"cost", t.cost},
          {"likely_label", t.likely_label},
          {"posterior", t.posterior},
          {"annotations", t.annotations}};
}

// A Label Studio task: the content (a text, or an image file's path) and
// the item's key in data; winnow's choice in meta.
nlohmann::json label_studio_task(curation::Dataset& dataset, const AnnotationTask& t) {
  nlohmann::json data = {{"item", t.item}};
  store::VectorTable vectors(dataset.store().database());
  if (const auto content = vectors.content_of(t.sample_id); content && content->kind == "text") {
    data["text"] = content->bytes;
  }
  for (const store::EventRecord& e : dataset.store().events_of(t.sample_id)) {
    if (e.kind != store::kEventIngest || e.details_json.empty()) continue;
    const nlohmann::json details = nlohmann::json::parse(e.details_json, nullptr, false);
    if (details.is_object() && details.contains("file") && details["file"].is_string()) {
      data["image"] = details["file"];
    }
    break;
  }
  return {{"data", data}, {"meta", task_json(t)}};
}

}  // namespace

Command add_annotate_next_command(CLI::App& parent) {
  struct Options {
    std::string db, pool, format = "csv", out;
    curation::annotate::TaskRequest request;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "annotate-next",
      "what to annotate next, and with a pool by whom: the tasks with the largest expected gain "
      "in consensus accuracy per unit cost");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--budget", o->request.budget, "most tasks")
      ->required()
      ->check(CLI::Range(1, 10000000));
  cmd->add_option("--annotators", o->pool,
                  "the pool: CSV annotator,cost[,capacity] (cost per label, default 1; capacity: "
                  "most tasks in this request)");
  cmd->add_option("--max-cost", o->request.max_cost,
                  "the most the tasks may cost together (in the pool's cost units): then the "
                  "tasks with the largest total expected gain within it")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--pred-probs", o->request.pred_probs,
                  "a model's out-of-sample predicted probabilities (JSON Lines, as ingest "
                  "--pred-probs): its predictions vote like one more annotator");
  cmd->add_option("--calibration", o->request.calibration,
                  "with a pool: the share of each annotator's tasks given to items whose "
                  "consensus is sure, to keep grading him")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.5));
  cmd->add_option("--format", o->format, "csv, jsonl or label-studio")->capture_default_str();
  cmd->add_option("--out", o->out, "write the tasks here instead of standard output");
  cmd->add_option("--prior-accuracy", o->request.prior_accuracy,
                  "what an annotator without history is taken to be")
      ->capture_default_str()
      ->check(CLI::Range(0.01, 0.99));
  cmd->footer("Example: winnow annotate-next --db data.db --budget 500 --annotators pool.csv");
  return {cmd, [o] {
            WINNOW_THROW_IF_NOT_KIND(
                o->format == "csv" || o->format == "jsonl" || o->format == "label-studio",
                invalid_input, "--format '{}' is not csv, jsonl or label-studio", o->format);
            if (!o->pool.empty())
              o->request.pool = curation::annotate::read_annotator_pool(o->pool);
            curation::Dataset dataset(o->db, curation::OpenMode::read_only);
            const curation::annotate::TaskPlan plan =
                curation::annotate::plan_annotation_tasks(dataset, o->request);
            std::ostringstream text;
            if (o->format == "csv") {
              text << "item,annotator,reason,score\n";
              for (const AnnotationTask& t : plan.tasks) {
                text << csv_field(t.item) << ',' << csv_field(t.annotator) << ','
                     << csv_field(t.reason) << ',' << fmt::format("{:.6f}", t.score) << '\n';
              }
            } else if (o->format == "jsonl") {
              for (const AnnotationTask& t : plan.tasks) text << json_text(task_json(t)) << '\n';
            } else {
              nlohmann::json tasks = nlohmann::json::array();
              for (const AnnotationTask& t : plan.tasks)
                tasks.push_back(label_studio_task(dataset, t));
              text << tasks.dump(1) << '\n';
            }
            if (o->out.empty()) {
              std::cout << text.str() << std::flush;
            } else {
              write_output_file(o->out, text.str(), "tasks");
            }
            std::cerr << fmt::format(
                "{} tasks of {} candidate samples: expected consensus gain {:.2f} samples, cost "
                "{}\n",
                plan.tasks.size(), plan.candidates, plan.expected_gain, plan.cost);
            return 0;
          }};
}

}  // namespace winnow::cli
