// winnow rejudge --db D (alias: regain, its name until 0.1) [--labels] [--consensus] [--embedder
// SPEC]: redo against today's dataset what ingest decided against the dataset of each sample's
// arrival: gains always; label quality with --labels; consensus labels with --consensus; a new
// embedding of every stored sample, which then becomes the dataset's embedder, with --embedder
// (review::rejudge, curation/review/src/rejudge.cpp).
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_json.h"
#include "command.h"
#include "progress_line.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/review/rejudge.h"

namespace winnow::cli {

namespace {

struct RejudgeCommandOptions {
  std::string db;
  bool labels = false;
  bool consensus = false;
  std::string embedder;
  std::optional<double> min_candidate;
  std::optional<double> text_min_candidate;
  std::optional<double> flag_below;
  bool override_reviews = false;
  double consensus_flag_below = curation::review::RejudgeOptions{}.consensus_flag_below;
  bool quiet = false;
};

// What the command prints: the gains, and what --embedder, --consensus and the
// label re-judgement did.
nlohmann::json rejudge_json(const curation::review::RejudgeReport& r,
                            const curation::review::RejudgeOptions& options,
                            const curation::CurationConfig& config,
                            const std::map<std::int64_t, std::string>& annotator_names) {
  nlohmann::json out = {{"updated", r.gains_updated},
                        {"gains_updated", r.gains_updated},
                        {"embedder", r.embedder},
                        {"seconds", r.seconds}};
  if (options.embedder) {
    out["previous_embedder"] = r.previous_embedder;
    out["re_embedded"] = r.re_embedded;
    out["min_candidate_similarity"] = config.min_candidate_similarity;
    out["text_min_candidate_similarity"] = config.text_min_candidate_similarity;
  }
  if (options.consensus) {
    out["relabelled"] = r.relabelled;
    nlohmann::json voters = nlohmann::json::array();
    std::size_t votes = 0;
    for (const auto& v : r.neighbour_voters) {
      voters.push_back({{"name", v.name}, {"votes", v.votes}, {"accuracy", v.accuracy}});
      votes += v.votes;
    }
    out["consensus"] = {
        {"flag_below", options.consensus_flag_below},
        {"duplicate_annotations", r.duplicate_annotations},
        {"neighbour_votes", votes},
        {"neighbour_voters", voters},
        {"training_voter",
         {{"votes", r.training_voter.votes}, {"accuracy", r.training_voter.accuracy}}}};
    nlohmann::json annotators = nlohmann::json::array();  // as the final consensus rates them
    for (const auto& [id, accuracy] : r.annotator_accuracy) {
      const auto name = annotator_names.find(id);
      annotators.push_back(
          {{"name", name != annotator_names.end() ? name->second : std::string("(unknown)")},
           {"accuracy", accuracy}});
    }
    out["consensus"]["annotators"] = annotators;
  }
  if (options.labels || options.consensus || options.embedder) {
    out["labels"] = {{"judged", r.judged},
                     {"newly_flagged", r.newly_flagged},
                     {"cleared", r.cleared},
                     {"kept_confident_learning", r.kept_confident_learning},
                     {"kept_reviewed", r.kept_reviewed},
                     {"annotations_only", r.annotations_only},
                     {"label_issues_without_vector", r.without_vector}};
  }
  return out;
}

int run_rejudge(const RejudgeCommandOptions& o) {
  curation::Dataset dataset(o.db);
  curation::review::RejudgeOptions options;
  options.labels = o.labels;
  options.consensus = o.consensus;
  options.flag_below = o.flag_below;
  options.override_reviews = o.override_reviews;
  options.consensus_flag_below = o.consensus_flag_below;
  if (!o.embedder.empty()) options.embedder = o.embedder;
  options.min_candidate_similarity = o.min_candidate;
  options.text_min_candidate_similarity = o.text_min_candidate;
  // One progress line per stage of searches.
  std::unique_ptr<ProgressLine> progress;
  std::string stage;
  options.progress = [&](const std::string& now, std::size_t done, std::size_t total) {
    if (now != stage) {
      if (progress) progress->finish();
      stage = now;
      progress =
          std::make_unique<ProgressLine>(total, "samples", o.quiet, ProgressLine::Unit::Items, now);
    }
    progress->update(done);
  };
  const curation::review::RejudgeReport r = curation::review::rejudge(dataset, options);
  if (progress) progress->finish();
  std::map<std::int64_t, std::string> annotator_names;
  for (const auto& c : dataset.store().contributors()) annotator_names[c.id] = c.name;
  std::cout << json_text(rejudge_json(r, options, dataset.config(), annotator_names)) << "\n";
  return 0;
}

}  // namespace

Command add_rejudge_command(CLI::App& parent) {
  auto o = std::make_shared<RejudgeCommandOptions>();
  auto* cmd = parent.add_subcommand(
      "rejudge",
      "re-judge stored samples against today's dataset: gains, and with --labels or "
      "--embedder label quality");
  cmd->footer("Example: winnow rejudge --db data.db --labels");
  cmd->alias("regain");  // the subcommand's first name; scripts keep working
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_flag("--labels", o->labels,
                "also re-judge the label quality of accepted and label_issue samples against "
                "today's accepted neighbours (flags may be added or cleared)");
  cmd->add_flag("--consensus", o->consensus,
                "first give every accepted and label_issue sample with annotations the "
                "Dawid-Skene consensus label of its annotations and of the label its neighbours "
                "suggest, and judge it by that consensus's posterior");
  cmd->add_option("--consensus-flag-below", o->consensus_flag_below,
                  "with --consensus: the consensus posterior below which an annotated sample is "
                  "a label issue")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0))
      ->needs("--consensus");
  cmd->add_option("--flag-below", o->flag_below,
                  "label quality below which this re-judgement flags a label (default: the "
                  "dataset's; not stored)");
  cmd->add_option("--embedder", o->embedder,
                  "re-embed every stored sample with this embedder spec (e.g. "
                  "torchscript:model.pt), rebuild the index, re-judge labels, and make it the "
                  "dataset's embedder for later batches");
  cmd->add_option("--min-candidate", o->min_candidate,
                  "with --embedder: the index cosine below which a pixels record's near-duplicate "
                  "candidates are not verified, in the new embedding (default: unchanged)")
      ->needs("--embedder");
  cmd->add_option("--text-min-candidate", o->text_min_candidate,
                  "with --embedder: the same for text records (default: unchanged)")
      ->needs("--embedder");
  cmd->add_flag("--override-reviews", o->override_reviews,
                "also re-judge the samples a person reviewed (winnow review); without it their "
                "status and label stay as the person left them");
  add_quiet_option(*cmd, o->quiet);
  return {cmd, [o] { return run_rejudge(*o); }};
}

}  // namespace winnow::cli
