// bench_label_quality: kNN label-quality flags against planted label flips.
//
// Flips `--noise` (default 10%) of the Fashion-MNIST TRAIN labels to a
// different class chosen uniformly (seeded), embeds every image, puts all of
// them in the index (an audit of an accepted set), scores each sample's label
// against its k nearest other samples (LabelQuality) and reports, for several
// flag thresholds, precision and recall of "flagged" against "flipped".
// Embedder and k default to a new dataset's. This is an audit (every sample
// in the index, labels judged once); what a user gets, samples arriving in
// batches through the CLI, is bench/label_issues_stream.py.
//
//   bench_label_quality --embedder 'pixels(dim=128)' --k 15 --json lq.json
#include <algorithm>
#include <numeric>
#include <random>

#include <CLI/CLI.hpp>

#include "bench_util.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/version.h"

using namespace winnow::curation;
using namespace winnow::curation::labels;
using namespace winnow::curation::bench;

int main(int argc, char** argv) {
  CLI::App app{"kNN label quality vs planted flips on Fashion-MNIST train"};
  app.set_version_flag("--version", std::string("bench_label_quality ") + winnow::kVersion);
  std::string images = kFashionDir + "/train-images-idx3-ubyte.gz";
  std::string labels_path = kFashionDir + "/train-labels-idx1-ubyte.gz";
  std::string embedder_spec = winnow::curation::CurationConfig{}.embedder;
  std::string index_config = "flat";
  std::string json_path;
  double noise = 0.10;
  int k = winnow::curation::CurationConfig{}.label_k;
  std::size_t limit = 0;
  unsigned seed = 11;
  app.add_option("--images", images, "IDX images file");
  app.add_option("--labels", labels_path, "IDX labels file");
  app.add_option("--embedder", embedder_spec, "embedder spec");
  app.add_option("--index", index_config, "vector index config");
  app.add_option("--noise", noise, "share of labels flipped");
  app.add_option("--k", k, "neighbours");
  app.add_option("--limit", limit, "use only the first N images (0: all)");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  const NoisyEmbeddedImages data =
      load_noisy_embedded(images, labels_path, limit, noise, seed, 10, embedder_spec);
  const auto& [labels, flipped, flips] = data.flip;
  const std::size_t n = data.n, d = data.embedder->dim();
  const std::vector<float>& vecs = data.vectors;

  auto index = winnow::index::make_vector_index(index_config, d);
  std::vector<std::int64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  const auto t_index = Clock::now();
  index->add(n, ids.data(), vecs.data());
  const double add_s = seconds_since(t_index);

  LabelQualityOptions lopt;
  lopt.k = k;
  const LabelQuality lq(lopt);
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  std::vector<double> quality(n);
  const auto t_search = Clock::now();
  const std::size_t batch = 2000;
  for (std::size_t b = 0; b < n; b += batch) {
    const std::size_t m = std::min(batch, n - b);
    const auto res = index->search(m, vecs.data() + b * d, k + 1);
    for (std::size_t q = 0; q < m; ++q) {
      quality[b + q] =
          lq.score(res, q, labels[b + q], lookup, static_cast<std::int64_t>(b + q)).quality;
    }
  }
  const double search_s = seconds_since(t_search);

  nlohmann::json curve = nlohmann::json::array();
  for (const double t : {0.05, 0.075, 0.08, 0.1, 0.125, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5,
                         0.55, 0.6, 0.7}) {
    std::size_t tp = 0, fp = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (quality[i] < t) {
        (flipped[i] ? tp : fp) += 1;
      }
    }
    const double precision = tp + fp > 0 ? double(tp) / double(tp + fp) : 0.0;
    const double recall = flips > 0 ? double(tp) / double(flips) : 0.0;
    curve.push_back(
        {{"flag_below", t},
         {"flagged", tp + fp},
         {"precision", precision},
         {"recall", recall},
         {"f1", precision + recall > 0 ? 2 * precision * recall / (precision + recall) : 0.0}});
  }
  nlohmann::json out = {
      {"benchmark", "label_quality"},
      {"images", images},
      {"samples", n},
      {"flipped", flips},
      {"noise", noise},
      {"seed", seed},
      {"embedder", data.embedder->spec()},
      {"index", index->config()},
      {"k", k},
      {"curve", curve},
      {"embed_s", data.embed_seconds},
      {"index_add_s", add_s},
      {"search_score_s", search_s},
      {"total_s", seconds_since(start)},
  };
  return emit(out, json_path);
}
