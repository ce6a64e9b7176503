// bench_ingest_synthetic: the ingest pipeline at scale on synthetic vectors.
//
// Generates --n records with a provided 128-d embedding (embedder
// `provided(dim=128)`): a seeded Gaussian mixture of --clusters clusters, the
// label being the cluster (so neighbours agree), with --flip of the labels
// changed to another cluster and --near of the records re-submitted copies of
// an earlier record (its embedding plus small noise, its text with one word
// changed). Each record carries a short text as its content, which the
// near-duplicate verifier (shingle Jaccard) compares. The records go through
// Ingester::ingest_batch into an empty store with an HNSW index (a flat
// index would make the run quadratic), in --batches batches, generated one
// batch at a time so that only one batch of records is in memory.
//
// Reports per batch and in total: seconds, samples/s, decision counts, the
// peak RSS of the process and the sizes of the database and index files.
//
//   bench_ingest_synthetic --n 1000000 --batches 20 --dir /tmp/synth --json synth.json
#include <filesystem>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench_util.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/version.h"

using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using namespace winnow::curation::bench;
using winnow::store::SampleStatus;
using winnow::store::StatusCounts;

namespace {

constexpr std::size_t kDim = 128;

// The records of one batch; cluster centres and the record generator are
// shared by every batch, so the stream continues across batches.
struct SyntheticStream {
  std::size_t clusters;
  double flip;
  double near;
  std::mt19937_64 rng;
  std::vector<float> centres;  // clusters x kDim
  // Recent records kept to re-submit as near duplicates (embedding and text).
  std::vector<std::pair<std::vector<float>, std::string>> recent;
  std::size_t next = 0;

  SyntheticStream(std::size_t clusters_, double flip_, double near_, unsigned seed)
      : clusters(clusters_), flip(flip_), near(near_), rng(seed), centres(clusters_ * kDim) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (float& v : centres) v = normal(rng);
  }

  std::vector<ManifestEntry> batch(std::size_t count) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    std::uniform_int_distribution<std::size_t> pick_cluster(0, clusters - 1);
    std::vector<ManifestEntry> entries(count);
    for (ManifestEntry& entry : entries) {
      ManifestRecord r;
      r.line = ++next;
      r.key = fmt::format("synthetic-{}", next);
      r.kind = ContentKind::text;
      std::size_t cluster = pick_cluster(rng);
      if (near > 0.0 && !recent.empty() && unit(rng) < near) {
        // A re-submitted copy: the embedding with 1% noise, one word changed.
        const auto& [embedding, text] =
            recent[std::uniform_int_distribution<std::size_t>(0, recent.size() - 1)(rng)];
        r.embedding = embedding;
        for (float& v : r.embedding) v += 0.01f * normal(rng);
        r.text = text + " (resubmitted)";
        cluster = std::stoul(text.substr(text.rfind(' ') + 1));
      } else {
        r.embedding.resize(kDim);
        const float* centre = centres.data() + cluster * kDim;
        for (std::size_t j = 0; j < kDim; ++j) r.embedding[j] = centre[j] + 0.6f * normal(rng);
        r.text = fmt::format("synthetic record number {} drawn from the mixture, cluster {}", next,
                             cluster);
        if (recent.size() < 4096) {
          recent.emplace_back(r.embedding, r.text);
        } else {
          recent[next % recent.size()] = {r.embedding, r.text};
        }
      }
      std::size_t label = cluster;
      if (unit(rng) < flip) label = (cluster + 1 + pick_cluster(rng) % (clusters - 1)) % clusters;
      r.label = std::to_string(label);
      entry.record = std::move(r);
    }
    return entries;
  }
};

double file_mb(const std::string& path) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(path, ec);
  return ec ? 0.0 : static_cast<double>(bytes) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"ingest pipeline throughput and memory on synthetic 128-d vectors"};
  app.set_version_flag("--version", std::string("bench_ingest_synthetic ") + winnow::kVersion);
  std::size_t n = 1000000;
  std::size_t batches = 20;
  std::size_t clusters = 50;
  double flip = 0.05;
  double near = 0.01;
  unsigned seed = 5;
  std::string index = "hnsw";
  std::string dir = "/tmp/winnow-synthetic";
  std::string json_path;
  app.add_option("--n", n, "records in total");
  app.add_option("--batches", batches, "ingest batches (manifests)");
  app.add_option("--clusters", clusters, "Gaussian mixture components (= labels)");
  app.add_option("--flip", flip, "share of labels changed to another cluster");
  app.add_option("--near", near, "share of records that re-submit an earlier one");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--index", index, "vector index config");
  app.add_option("--dir", dir, "directory for the database (emptied first)");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);
  if (clusters < 2 || batches == 0 || n < batches) {
    std::cerr << "need --clusters >= 2 and --n >= --batches >= 1\n";
    return 1;
  }

  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = dir + "/synthetic.db";
  CurationConfig config;
  config.embedder = fmt::format("provided(dim={})", kDim);
  config.index = index;
  Dataset::init(db, config);
  Dataset dataset(db);
  Ingester ingester(dataset);

  SyntheticStream stream(clusters, flip, near, seed);
  nlohmann::json per_batch = nlohmann::json::array();
  StatusCounts totals;
  const double load0 = load_average();
  double ingest_s = 0.0;
  const auto start = Clock::now();
  for (std::size_t b = 0; b < batches; ++b) {
    const std::size_t count = n / batches + (b < n % batches ? 1 : 0);
    std::vector<ManifestEntry> entries = stream.batch(count);
    const BatchReport report =
        ingester.ingest_batch(fmt::format("synthetic-{}", b),
                              fmt::format("synthetic-{}-{}", seed, b), std::move(entries));
    ingest_s += report.seconds;
    for (std::size_t s = 0; s < totals.by_status.size(); ++s) {
      totals.by_status[s] += report.counts.by_status[s];
    }
    per_batch.push_back({{"batch", b},
                         {"samples", count},
                         {"seconds", report.seconds},
                         {"samples_per_s", static_cast<double>(count) / report.seconds},
                         {"accepted", report.counts[SampleStatus::accepted]},
                         {"duplicate_near", report.counts[SampleStatus::duplicate_near]},
                         {"label_issue", report.counts[SampleStatus::label_issue]},
                         {"index_vectors", dataset.index_info().vectors},
                         {"peak_rss_mb", peak_rss_mb()},
                         {"load_average", load_average()}});
    std::cerr << per_batch.back().dump() << "\n";
  }
  const double total_s = seconds_since(start);
  nlohmann::json out = {
      {"benchmark", "ingest_synthetic"},
      {"records", n},
      {"dim", kDim},
      {"batches", batches},
      {"clusters", clusters},
      {"flip", flip},
      {"near", near},
      {"seed", seed},
      {"embedder", dataset.embedder().spec()},
      {"index", dataset.index_info().config},
      {"counts",
       {{"accepted", totals[SampleStatus::accepted]},
        {"duplicate_exact", totals[SampleStatus::duplicate_exact]},
        {"duplicate_near", totals[SampleStatus::duplicate_near]},
        {"label_issue", totals[SampleStatus::label_issue]},
        {"rejected", totals[SampleStatus::rejected]}}},
      {"ingest_s", ingest_s},
      {"total_s", total_s},
      {"samples_per_s", static_cast<double>(n) / total_s},
      {"peak_rss_mb", peak_rss_mb()},
      {"db_mb", file_mb(db) + file_mb(db + "-wal")},
      {"index_mb", file_mb(dataset.index_path())},
      {"load_average_start", load0},
      {"load_average_end", load_average()},
      {"per_batch", per_batch},
  };
  return emit(out, json_path);
}
