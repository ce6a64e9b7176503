// bench_curation_throughput: per-sample cost of the ingest building blocks on
// one core, streaming `--n` Fashion-MNIST train images one at a time:
// embed -> index search (k candidates) -> near-duplicate verification of the
// candidates -> label quality and gain from the same search -> index add.
// Reports samples/s of the whole chain and microseconds per stage.
//
//   bench_curation_throughput --embedder "pixels(pool=2,dim=64)"
//     --index "hnsw(M=16,efConstruction=40,efSearch=32)" --batch 256 --json tp.json
#include <algorithm>

#include <CLI/CLI.hpp>

#include "bench_util.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/judge/information_gain.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/version.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::embed;
using namespace winnow::curation::readers;
using namespace winnow::curation::judge;
using namespace winnow::curation::labels;
using namespace winnow::curation::bench;

namespace {

struct BenchOptions {
  std::string images = kFashionDir + "/train-images-idx3-ubyte.gz";
  std::string labels_path = kFashionDir + "/train-labels-idx1-ubyte.gz";
  std::string embedder_spec = "pixels(pool=2,dim=64)";
  std::string index_config = "hnsw(M=16,efConstruction=40,efSearch=32)";
  std::string json_path;
  std::size_t limit = 60000;
  int k = 10;
  double min_candidate = 0.95;
  std::size_t batch = 1;
};

void add_options(CLI::App& app, BenchOptions& o) {
  app.add_option("--images", o.images, "IDX images file");
  app.add_option("--labels", o.labels_path, "IDX labels file");
  app.add_option("--embedder", o.embedder_spec, "embedder spec");
  app.add_option("--index", o.index_config, "vector index config");
  app.add_option("--n", o.limit, "samples to stream");
  app.add_option("--k", o.k, "neighbours per search");
  app.add_option("--min-candidate", o.min_candidate,
                 "index cosine below which candidates are not verified");
  app.add_option("--batch", o.batch,
                 "index adds are batched this many samples at a time (searches see the index "
                 "as of the last batch; FAISS 1.7.3's HNSW add costs O(index size) per call)");
  app.add_option("--json", o.json_path, "also write the JSON here");
}

// The building blocks of the chain, over one index.
struct Chain {
  const Embedder& embedder;
  winnow::index::VectorIndex& index;
  const NearDuplicateFinder& finder;
  const LabelQuality& label_quality;
};

// What streaming the samples through the chain measured.
struct StreamResult {
  // Seconds per stage, summed over the samples.
  double embed = 0, search = 0, verify = 0, score = 0, add = 0;
  std::size_t dups = 0, flagged = 0, verified = 0;
  double gain_sum = 0;
};

StreamResult stream_samples(const Chain& chain, const std::vector<ManifestRecord>& records,
                            const std::vector<int>& labels, const BenchOptions& o) {
  const std::size_t n = labels.size();
  const RecordLookup rec_lookup = [&](std::int64_t id) {
    return &records[static_cast<std::size_t>(id)];
  };
  const LabelLookup label_lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  StreamResult s;
  std::vector<float> vec(chain.embedder.dim());
  std::vector<std::int64_t> pending_ids;
  std::vector<float> pending;
  for (std::size_t i = 0; i < n; ++i) {
    auto a = Clock::now();
    chain.embedder.embed(records[i], vec.data());
    auto b = Clock::now();
    s.embed += std::chrono::duration<double>(b - a).count();
    winnow::index::SearchResults res = winnow::index::SearchResults::padded(1, 0);
    if (chain.index.size() > 0) {
      res = chain.index.search(1, vec.data(), o.k);
    }
    a = Clock::now();
    s.search += std::chrono::duration<double>(a - b).count();
    const NearDuplicateMatch m = chain.finder.verify(res, 0, records[i], rec_lookup);
    s.dups += m.found;
    s.verified += static_cast<std::size_t>(m.candidates_checked);
    b = Clock::now();
    s.verify += std::chrono::duration<double>(b - a).count();
    s.flagged += chain.label_quality.score(res, 0, labels[i], label_lookup).flagged;
    s.gain_sum += information_gain(res, 0);
    a = Clock::now();
    s.score += std::chrono::duration<double>(a - b).count();
    pending_ids.push_back(static_cast<std::int64_t>(i));
    pending.insert(pending.end(), vec.begin(), vec.end());
    if (pending_ids.size() >= o.batch || i + 1 == n) {
      chain.index.add(pending_ids, pending);
      pending_ids.clear();
      pending.clear();
    }
    s.add += seconds_since(a);
  }
  return s;
}

int run(const BenchOptions& o) {
  const auto start = Clock::now();
  std::vector<ManifestRecord> records = import_idx(o.images, o.labels_path, "train");
  const std::size_t n = std::min(o.limit, records.size());
  std::vector<int> labels(n);
  for (std::size_t i = 0; i < n; ++i) {
    labels[i] = std::stoi(*records[i].label);
  }
  const double load_s = seconds_since(start);

  EmbedderOptions eopt;
  eopt.width = records[0].width;
  eopt.height = records[0].height;
  const auto embedder = make_embedder(o.embedder_spec, eopt);
  auto index = winnow::index::make_vector_index(o.index_config, embedder->dim());
  const ImageNearDuplicateVerifier verifier;
  NearDuplicateFinderOptions fopt;
  fopt.candidates = o.k;
  fopt.min_candidate_similarity = o.min_candidate;
  const NearDuplicateFinder finder(*index, verifier, fopt);
  LabelQualityOptions lopt;
  lopt.k = o.k;
  const LabelQuality lq(lopt);

  const double cpu0 = thread_cpu_seconds();
  const auto t0 = Clock::now();
  const StreamResult s = stream_samples({*embedder, *index, finder, lq}, records, labels, o);
  const double run_s = seconds_since(t0);
  const double run_cpu = thread_cpu_seconds() - cpu0;
  const double us = 1e6 / double(n);
  nlohmann::json out = {
      {"benchmark", "curation_throughput"},
      {"samples", n},
      {"embedder", embedder->spec()},
      {"index", index->config()},
      {"verifier", verifier.name()},
      {"k", o.k},
      {"batch", o.batch},
      {"min_candidate_similarity", o.min_candidate},
      {"samples_per_s", double(n) / run_s},
      {"samples_per_cpu_s", double(n) / run_cpu},
      {"us_per_sample",
       {{"embed", s.embed * us},
        {"search", s.search * us},
        {"verify", s.verify * us},
        {"label_quality_and_gain", s.score * us},
        {"index_add", s.add * us}}},
      {"candidates_verified_per_sample", double(s.verified) / double(n)},
      {"near_duplicates_found", s.dups},
      {"label_flags", s.flagged},
      {"mean_gain", s.gain_sum / double(n)},
      {"load_s", load_s},
      {"run_s", run_s},
      {"run_cpu_s", run_cpu},
  };
  return emit(out, o.json_path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"throughput of the curation building blocks"};
  app.set_version_flag("--version", std::string("bench_curation_throughput ") + winnow::kVersion);
  BenchOptions options;
  add_options(app, options);
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
