// winnow init --db D [--embedder SPEC] [--index flat|hnsw(...)|ivf(...)] [thresholds]
//             [--image-issues flag|reject] [--image-issue-threshold NAME=VALUE]...
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "command.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/error.h"

namespace winnow::cli {

namespace {

// --image-issues and --image-issue-threshold NAME=VALUE into the policy
// (checked as a stored config is: ImageIssuePolicy::from_json).
void set_image_issues(curation::ImageIssuePolicy& policy, const std::string& action,
                      const std::vector<std::string>& thresholds) {
  nlohmann::json j = policy.to_json();
  j["action"] = action;
  for (const std::string& setting : thresholds) {
    const std::size_t eq = setting.find('=');
    WINNOW_THROW_IF_NOT(eq != std::string::npos && eq > 0,
                        "--image-issue-threshold '{}' is not NAME=VALUE", setting);
    const std::string name = setting.substr(0, eq);
    WINNOW_THROW_IF_NOT(j["thresholds"].contains(name),
                        "--image-issue-threshold: '{}' is not an image issue", name);
    double value = 0.0;
    try {
      std::size_t used = 0;
      value = std::stod(setting.substr(eq + 1), &used);
      WINNOW_THROW_IF_NOT(used == setting.size() - eq - 1, "trailing characters");
    } catch (const std::exception&) {
      WINNOW_THROW("--image-issue-threshold '{}': '{}' is not a number", setting,
                   setting.substr(eq + 1));
    }
    j["thresholds"][name] = value;
  }
  policy = curation::ImageIssuePolicy::from_json(j);
}

struct InitOptions {
  std::string db;
  curation::CurationConfig config;
  std::string image_issues = "flag";
  std::vector<std::string> image_issue_thresholds;  // NAME=VALUE
  std::string embedder;                             // empty: chosen by winnow
};

// Each option that sets part of the config, and the config's JSON key it sets:
// on a database that holds samples, the keys of the options not given keep
// their stored values (Dataset::init).
constexpr std::pair<const char*, const char*> kConfigOptions[] = {
    {"--embedder", "embedder"},
    {"--embedder", "embedder_auto"},
    {"--index", "index"},
    {"--candidates", "candidates"},
    {"--min-candidate", "min_candidate_similarity"},
    {"--image-file-min-candidate", "image_file_min_candidate_similarity"},
    {"--text-min-candidate", "text_min_candidate_similarity"},
    {"--candidate-margin", "candidate_margin"},
    {"--image-threshold", "image_threshold"},
    {"--image-colour-threshold", "image_colour_threshold"},
    {"--text-threshold", "text_threshold"},
    {"--text-min-jaccard", "text_min_jaccard"},
    {"--label-k", "label_k"},
    {"--flag-below", "label_flag_below"},
    {"--min-label-neighbours", "min_label_neighbours"},
    {"--keep", "keep"},
    {"--label-min-lift", "label_min_lift"},
    {"--label-rejudge-growth", "label_rejudge_growth"},
    {"--micro-batch", "micro_batch"},
    {"--max-image-pixels", "max_image_pixels"},
    {"--image-issues", "image_issues"},
    {"--image-issue-threshold", "image_issues"},
};

std::set<std::string> asked_config_keys(const CLI::App& cmd) {
  std::set<std::string> keys;
  for (const auto& [option, key] : kConfigOptions) {
    if (cmd.count(option) > 0) keys.insert(key);
  }
  return keys;
}

// How image files are read and judged: the size limit and the image issues.
void add_image_file_options(CLI::App& cmd, InitOptions& o) {
  cmd.add_option("--max-image-pixels", o.config.max_image_pixels,
                 "image files with more pixels (from the header) are rejected undecoded")
      ->capture_default_str();
  cmd.add_option("--image-issues", o.image_issues,
                 "what an image-quality issue of an image file does: flag (record it) or "
                 "reject the sample (docs/images.md)")
      ->check(CLI::IsMember({"flag", "reject"}))
      ->capture_default_str();
  cmd.add_option("--image-issue-threshold", o.image_issue_thresholds,
                 "NAME=VALUE: an image issue's threshold (blurry, dark, bright, "
                 "low_information, grayscale, odd_aspect_ratio, odd_size; scores below it "
                 "are issues); repeatable");
}

}  // namespace

Command add_init_command(CLI::App& parent) {
  auto o = std::make_shared<InitOptions>();
  curation::CurationConfig& config = o->config;
  auto* cmd = parent.add_subcommand("init", "create a dataset database and record its config");
  cmd->footer("Example: winnow init --db data.db --embedder 'hashed-ngrams(n=3,dim=256)'");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--embedder", o->embedder,
                  "embedder spec: provided(dim=D), pixels(...), hashed-ngrams(...), "
                  "torchscript:PATH (default: chosen by the first content given: "
                  "pixels(width=28,height=28,fourier=6) for pixel arrays, "
                  "pixels(width=32,height=32,fourier=6,colour=1) for image files, "
                  "hashed-ngrams(n=3,dim=256) for text, provided(dim=D) for records that "
                  "bring a D-long embedding)");
  cmd->add_option("--index", config.index,
                  "index config: auto (flat, then ivf from switchAt vectors), flat, hnsw(M=..,...) "
                  "or ivf(nprobe=..)")
      ->capture_default_str();
  cmd->add_option("--candidates", config.candidates, "near-dup candidates")->capture_default_str();
  cmd->add_option("--min-candidate", config.min_candidate_similarity,
                  "index cosine below which a pixels record's candidates are not verified")
      ->capture_default_str();
  cmd->add_option("--image-file-min-candidate", config.image_file_min_candidate_similarity,
                  "index cosine below which an image file's candidates are not verified")
      ->capture_default_str();
  cmd->add_option("--text-min-candidate", config.text_min_candidate_similarity,
                  "index cosine below which a text record's candidates are not verified")
      ->capture_default_str();
  cmd->add_option("--candidate-margin", config.candidate_margin,
                  "verify only candidates within this of the best index cosine (2: all)")
      ->capture_default_str();
  cmd->add_option("--image-threshold", config.image_threshold, "shifted Pearson threshold")
      ->capture_default_str();
  cmd->add_option("--image-colour-threshold", config.image_colour_threshold,
                  "image files: Pearson of the blurred colour working images (docs/images.md)")
      ->capture_default_str();
  cmd->add_option("--text-threshold", config.text_threshold,
                  "text near duplicates: least shingle overlap (of the smaller text)")
      ->capture_default_str();
  cmd->add_option("--text-min-jaccard", config.text_min_jaccard,
                  "text near duplicates: least shingle Jaccard (= --text-threshold: Jaccard only)")
      ->capture_default_str();
  cmd->add_option("--label-k", config.label_k, "label quality neighbours")->capture_default_str();
  cmd->add_option("--flag-below", config.label_flag_below, "label issue below this quality")
      ->capture_default_str();
  cmd->add_option("--min-label-neighbours", config.min_label_neighbours,
                  "labelled neighbours needed to flag a label issue")
      ->capture_default_str();
  cmd->add_option("--keep", config.keep,
                  "which copy of an image file a near-duplicate pair keeps: largest (the larger "
                  "decoded size; a larger copy arriving later makes the earlier one its "
                  "duplicate) or first (arrival order)")
      ->check(CLI::IsMember({"largest", "first"}))
      ->capture_default_str();
  cmd->add_option("--label-min-lift", config.label_min_lift,
                  "the label check abstains on a class whose neighbours agree with its labels "
                  "by less than this lift over chance, and on every class when the dataset's "
                  "lift is below it (0 to 1; docs/curation.md, \"When the label check "
                  "abstains\")")
      ->capture_default_str();
  cmd->add_option("--label-rejudge-growth", config.label_rejudge_growth,
                  "after a batch, re-judge the doubtful labels (quality < 0.5) judged when the "
                  "labelled samples were fewer than today's / (1 + this)^(1/4), the unsure ones "
                  "(< 0.9) judged against fewer than today's / (1 + this)^3, and every label "
                  "judged against fewer than today's / (1 + this)^6; 0: never")
      ->capture_default_str();
  cmd->add_option("--micro-batch", config.micro_batch, "records searched/indexed together")
      ->capture_default_str();
  add_image_file_options(*cmd, *o);
  return {
      cmd, [o, cmd] {
        set_image_issues(o->config.image_issues, o->image_issues, o->image_issue_thresholds);
        o->config.embedder_auto = o->embedder.empty();
        if (!o->embedder.empty()) o->config.embedder = o->embedder;
        curation::Dataset::init(o->db, o->config, asked_config_keys(*cmd));
        curation::Dataset dataset(o->db);
        std::cout << nlohmann::json{{"db", o->db},
                                    {"config", nlohmann::json::parse(dataset.config().to_json())},
                                    {"index_file", dataset.index_path()}}
                         .dump()
                  << "\n";
        return 0;
      }};
}

}  // namespace winnow::cli
