// summarize_runs: the comparison table of train_fashion_mnist runs.
//
// Groups the JSON files by (setting, policy), the setting being the model plus
// the label noise and the device where not the defaults; summarises each group
// over its seeds and compares it with the "full" group of the same setting:
//   summarize_runs [--markdown] run1.json run2.json ...
#include <algorithm>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/version.h"

namespace {

struct Group {
  std::vector<double> accuracy;
  std::vector<double> saved;
  std::vector<double> wall;
  std::vector<double> in_winnow;
  std::uint64_t forward = 0;
  std::uint64_t full_forward = 0;
};

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : 0.5 * (v[m - 1] + v[m]);
}

double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double sum = 0.0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Summarise train_fashion_mnist --json results"};
  app.set_version_flag("--version", std::string("summarize_runs ") + winnow::kVersion);
  std::vector<std::string> files;
  bool markdown = false;
  app.add_flag("--markdown", markdown, "print a Markdown table");
  app.add_option("files", files, "JSON files written by train_fashion_mnist --json")->required();
  CLI11_PARSE(app, argc, argv);

  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const std::string& path : files) {
    std::ifstream in(path);
    if (!in) {
      std::cerr << "summarize_runs: cannot read '" << path << "'\n";
      return 1;
    }
    try {
      const nlohmann::json run = nlohmann::json::parse(in);
      // Runs on label-noised data or on another device are their own groups.
      std::string setting = run.at("model").get<std::string>();
      const auto flipped = run.value("flipped_labels", std::uint64_t{0});
      if (flipped > 0) {
        setting += fmt::format(", {:.0f}% flipped", 100.0 * static_cast<double>(flipped) /
                                                        run.at("train_samples").get<double>());
      }
      const auto device = run.value("device", std::string("cpu"));
      if (device != "cpu") setting += ", " + device;
      const auto key = std::make_pair(setting, run.at("policy").get<std::string>());
      if (groups.count(key) == 0) order.push_back(key);
      Group& g = groups[key];
      g.accuracy.push_back(run.at("test_accuracy").get<double>());
      g.saved.push_back(run.at("saved_fraction").get<double>());
      g.wall.push_back(run.at("wall_seconds").get<double>());
      g.in_winnow.push_back(run.at("sampler_seconds").get<double>());
      g.forward += run.at("forward_samples").get<std::uint64_t>();
      g.full_forward += run.at("full_forward_samples").get<std::uint64_t>();
    } catch (const std::exception& e) {
      std::cerr << "summarize_runs: '" << path
                << "' is not a train_fashion_mnist result: " << e.what() << "\n";
      return 1;
    }
  }

  // Three separate savings: samples not forwarded, wall time of the training
  // loop (median over seeds), and accuracy; their ratio is what a user gets
  // of the sample saving in time.
  const char* header_md =
      "| setting | policy | seeds | test accuracy, mean ± sd | vs full (points) | forward "
      "samples | samples saved | wall s, median | wall saved | wall / samples saved | in winnow "
      "s |\n"
      "|---|---|---|---|---|---|---|---|---|---|---|\n";
  if (markdown) {
    std::cout << header_md;
  } else {
    std::cout << fmt::format(
        "{:<22} {:<34} {:>5} {:>17} {:>9} {:>10} {:>7} {:>8} {:>8} {:>6} {:>9}\n", "setting",
        "policy", "seeds", "test acc", "vs full", "fwd/run", "saved", "wall s", "w saved", "ratio",
        "winnow s");
  }
  for (const auto& key : order) {
    const Group& g = groups.at(key);
    const auto full_it = std::find_if(groups.begin(), groups.end(), [&](const auto& entry) {
      return entry.first.first == key.first && entry.first.second.rfind("full", 0) == 0;
    });
    const double saved = 1.0 - static_cast<double>(g.forward) / static_cast<double>(g.full_forward);
    std::string vs_acc = "-";
    std::string wall_saved = "-";
    std::string ratio = "-";
    if (full_it != groups.end()) {
      vs_acc = fmt::format("{:+.2f}", 100.0 * (mean(g.accuracy) - mean(full_it->second.accuracy)));
      const double w = 1.0 - median(g.wall) / median(full_it->second.wall);
      wall_saved = fmt::format("{:.1f}%", 100.0 * w);
      if (saved > 0.0) ratio = fmt::format("{:.2f}", w / saved);
    }
    const std::uint64_t per_run = g.forward / g.accuracy.size();
    if (markdown) {
      std::cout << fmt::format(
          "| {} | `{}` | {} | {:.4f} ± {:.4f} | {} | {} | {:.1f}% | {:.1f} | {} | {} | {:.2f} |\n",
          key.first, key.second, g.accuracy.size(), mean(g.accuracy), stddev(g.accuracy), vs_acc,
          per_run, 100.0 * saved, median(g.wall), wall_saved, ratio, median(g.in_winnow));
    } else {
      std::cout << fmt::format(
          "{:<22} {:<34} {:>5} {:>9.4f}±{:.4f} {:>9} {:>10} {:>6.1f}% {:>8.1f} {:>8} {:>6} "
          "{:>9.2f}\n",
          key.first, key.second, g.accuracy.size(), mean(g.accuracy), stddev(g.accuracy), vs_acc,
          per_run, 100.0 * saved, median(g.wall), wall_saved, ratio, median(g.in_winnow));
    }
  }
  return 0;
}
