// bench_report: the quality report at scale.
//
// Builds a synthetic store (default 1,000,000 samples with 3 annotations
// each, 10 classes, 3 sources, 8 annotators of known accuracy, ingest
// batches of 100,000, ~3% exact and ~2% near duplicates, ~5% label issues
// with a suggested label, ~1% rejected) through MetadataStore's batch insert,
// then times build_quality_report over it. Building the store is timed
// separately and not part of the report time.
//
// Peak RSS is the whole process's: to measure the report alone, build the
// store once and run again on the same file (an existing store is reused):
//
//   bench_report --db /tmp/report.db --build-only
//   bench_report --db /tmp/report.db --json report.json
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_util.h"
#include "winnow/curation/report/quality_report.h"
#include "winnow/store/metadata_store.h"
#include "winnow/version.h"

using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::report;
using namespace winnow::curation::bench;

namespace {

constexpr int kClasses = 10;
const std::vector<double> kAnnotatorAccuracy = {0.97, 0.93, 0.9, 0.85, 0.8, 0.7, 0.6, 0.4};
const std::vector<double> kSourceAccuracy = {0.95, 0.85, 0.7};

// A wrong label: uniform among the other classes.
int noisy_label(int truth, double accuracy, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  if (coin(rng) < accuracy) return truth;
  const int other = std::uniform_int_distribution<int>(0, kClasses - 2)(rng);
  return other >= truth ? other + 1 : other;
}

double build_store(MetadataStore& store, std::size_t samples, std::size_t per_sample,
                   std::size_t batch_size, unsigned seed) {
  const auto start = Clock::now();
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> coin(0.0, 1.0);
  std::uniform_int_distribution<int> any_class(0, kClasses - 1);
  const std::size_t annotators = kAnnotatorAccuracy.size();
  std::vector<std::size_t> pool(annotators);
  std::vector<NewSample> chunk;
  std::int64_t next_id = 1;  // ids are assigned in insertion order on a fresh store
  for (std::size_t first = 0; first < samples; first += batch_size) {
    const std::size_t last = std::min(samples, first + batch_size);
    const std::string name = fmt::format("synthetic-{:04d}.jsonl", first / batch_size + 1);
    BatchRecord batch = store.register_batch(name, "checksum-" + name);
    batch = store.start_batch(batch.id);
    for (std::size_t i = first; i < last; ++i) {
      NewSample s;
      s.external_key = fmt::format("s{:08d}", i);
      s.content_hash = fmt::format("{:032x}", i * 2654435761u + 17);
      s.batch_id = batch.id;
      const int truth = any_class(rng);
      const std::size_t source = static_cast<std::size_t>(rng() % kSourceAccuracy.size());
      s.source = fmt::format("vendor-{}", source);
      s.label = noisy_label(truth, kSourceAccuracy[source], rng);
      s.label_quality = coin(rng);
      for (std::size_t a = 0; a < annotators; ++a) pool[a] = a;
      for (std::size_t a = 0; a < per_sample && a < annotators; ++a) {
        std::swap(pool[a], pool[a + rng() % (annotators - a)]);
        s.annotations.push_back({fmt::format("annotator-{}", pool[a]),
                                 noisy_label(truth, kAnnotatorAccuracy[pool[a]], rng)});
      }
      const double roll = coin(rng);
      const std::int64_t id = next_id++;
      if (roll < 0.01) {
        s.decision = {SampleStatus::rejected, std::nullopt, "synthetic", ""};
      } else if (roll < 0.04 && id > 1) {
        s.decision = {SampleStatus::duplicate_exact, id - 1, "synthetic", ""};
      } else if (roll < 0.06 && id > 1) {
        s.decision = {SampleStatus::duplicate_near, id - 1, "synthetic", ""};
      } else if (roll < 0.11) {
        const nlohmann::json details = {
            {"label_quality", {{"suggested_label", std::to_string(truth)}}}};
        s.decision = {SampleStatus::label_issue, std::nullopt, "synthetic", details.dump()};
      }
      chunk.push_back(std::move(s));
      if (chunk.size() == 10000) {
        store.insert_samples(chunk);
        chunk.clear();
      }
    }
    if (!chunk.empty()) store.insert_samples(chunk);
    chunk.clear();
    store.finish_batch(batch.id);
  }
  return seconds_since(start);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"quality report over a synthetic store of N samples"};
  app.set_version_flag("--version", std::string("bench_report ") + winnow::kVersion);
  std::string db = "/tmp/winnow-bench-report.db";
  std::string json_path;
  std::size_t samples = 1'000'000;
  std::size_t per_sample = 3;
  std::size_t batch_size = 100'000;
  unsigned seed = 5;
  bool build_only = false;
  app.add_option("--db", db, "store file; an existing store is reused as it is");
  app.add_option("--samples", samples, "samples to generate");
  app.add_option("--annotations", per_sample, "annotations per sample");
  app.add_option("--batch", batch_size, "samples per ingest batch");
  app.add_option("--seed", seed, "random seed");
  app.add_flag("--build-only", build_only, "build the store and stop");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  nlohmann::json out = {{"benchmark", "bench_report"}, {"db", db}};
  const bool reuse = std::filesystem::exists(db);
  MetadataStore store(db);
  if (reuse) {
    out["build_seconds"] = nullptr;
    out["build_note"] = "existing store reused";
  } else {
    out["build_seconds"] = build_store(store, samples, per_sample, batch_size, seed);
    out["build_peak_rss_mb"] = peak_rss_mb();
  }
  if (build_only) {
    out["samples"] = store.count_by_status().total();
    return emit(out, json_path);
  }

  const double rss_before = peak_rss_mb();
  const double cpu_start = thread_cpu_seconds();
  const auto start = Clock::now();
  const nlohmann::json report = build_quality_report(store);
  out["report_seconds"] = seconds_since(start);
  out["report_thread_cpu_seconds"] = thread_cpu_seconds() - cpu_start;
  out["peak_rss_mb"] = peak_rss_mb();
  out["peak_rss_mb_before_report"] = rss_before;
  out["load_average"] = load_average();
  const nlohmann::json& d = report["dataset"];
  out["samples"] = d["samples"];
  out["annotations"] = d["annotations"];
  out["dawid_skene"] = d["dawid_skene"];
  out["krippendorff_alpha"] = d["krippendorff_alpha"];
  out["fleiss_kappa"] = d["fleiss_kappa"];
  out["health_score"] = d["health_score"];
  nlohmann::json accuracy = nlohmann::json::object();
  for (const auto& source : report["sources"]) {
    accuracy[source["name"].get<std::string>()] = source["estimated_accuracy"];
  }
  out["estimated_accuracy"] = accuracy;
  nlohmann::json truth = nlohmann::json::object();
  for (std::size_t a = 0; a < kAnnotatorAccuracy.size(); ++a) {
    truth[fmt::format("annotator-{}", a)] = kAnnotatorAccuracy[a];
  }
  out["true_accuracy"] = truth;
  return emit(out, json_path);
}
