// bench_near_duplicates: recall and false positives of the near-duplicate
// finder on real images.
//
// Takes the 10,000 Fashion-MNIST test images, plants re-submitted copies of
// `--copies` of them (each shifted by one pixel in a random one of the 8
// directions, brightness scaled by a factor in [0.9, 1.1], Gaussian pixel
// noise of sigma `--noise` on 0-255, rounded and clipped), then runs the
// pipeline's order: every original is checked against the originals accepted
// before it and inserted; then every copy is checked against all of them.
// For each verifier threshold it reports
//   recall            share of copies whose own original verified >= threshold
//                     among the index candidates
//   fp_rate           share of originals matched (>= threshold) to an
//                     earlier, different original
// plus the candidate recall (original among the top-k index candidates).
//
//   bench_near_duplicates --embedder 'pixels(pool=2)' --index flat --json nd.json
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <unordered_map>

#include <CLI/CLI.hpp>

#include "bench_util.h"
#include "winnow/curation/embedder.h"
#include "winnow/curation/idx_importer.h"
#include "winnow/curation/near_duplicate_finder.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::bench;

int main(int argc, char** argv) {
  CLI::App app{"near-duplicate recall / false positives on Fashion-MNIST test images"};
  std::string images = kFashionDir + "/t10k-images-idx3-ubyte.gz";
  std::string embedder_spec = "pixels(pool=2)";
  std::string index_config = "flat";
  std::string json_path;
  int copies = 1000;
  int candidates = 10;
  int max_shift = 1;
  double noise = 5.0;
  double brightness = 0.10;
  unsigned seed = 7;
  app.add_option("--images", images, "IDX images file");
  app.add_option("--embedder", embedder_spec, "embedder spec for candidate retrieval");
  app.add_option("--index", index_config, "vector index config");
  app.add_option("--copies", copies, "number of planted copies");
  app.add_option("--candidates", candidates, "index candidates verified per sample");
  app.add_option("--max-shift", max_shift, "verifier shift range");
  app.add_option("--noise", noise, "pixel noise sigma (0-255 scale)");
  app.add_option("--brightness", brightness, "max relative brightness change");
  app.add_option("--seed", seed, "random seed");
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  std::vector<ManifestRecord> records = import_idx(images, "", "test");
  const std::size_t n = records.size();
  const std::size_t w = records[0].width;
  const std::size_t h = records[0].height;

  std::mt19937_64 rng(seed);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  order.resize(static_cast<std::size_t>(copies));
  std::uniform_int_distribution<int> dir(0, 7);
  std::uniform_real_distribution<double> bright(1.0 - brightness, 1.0 + brightness);
  std::normal_distribution<double> gauss(0.0, 1.0);
  static const int kDx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
  static const int kDy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
  std::vector<ManifestRecord> planted;
  for (std::size_t c = 0; c < order.size(); ++c) {
    const ManifestRecord& src = records[order[c]];
    ManifestRecord copy = src;
    copy.key = "copy-of-" + src.key;
    const int d = dir(rng);
    const double f = bright(rng);
    for (std::size_t y = 0; y < h; ++y) {
      for (std::size_t x = 0; x < w; ++x) {
        const long sx = static_cast<long>(x) - kDx[d];
        const long sy = static_cast<long>(y) - kDy[d];
        double v = 0.0;
        if (sx >= 0 && sy >= 0 && sx < static_cast<long>(w) && sy < static_cast<long>(h)) {
          v = src.pixels[static_cast<std::size_t>(sy) * w + static_cast<std::size_t>(sx)];
        }
        v = v * f + noise * gauss(rng);
        copy.pixels[y * w + x] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
      }
    }
    planted.push_back(std::move(copy));
  }

  EmbedderOptions eopt;
  eopt.width = w;
  eopt.height = h;
  const auto embedder = make_embedder(embedder_spec, eopt);
  auto index = winnow::index::make_vector_index(index_config, embedder->dim());
  ImageVerifierOptions vopt;
  vopt.max_shift = max_shift;
  vopt.threshold = 0.0;  // the curve is computed below from the raw similarities
  const ImageNearDuplicateVerifier verifier(vopt);
  NearDuplicateFinderOptions fopt;
  fopt.candidates = candidates;
  fopt.min_candidate_similarity = -1.0;
  const NearDuplicateFinder finder(*index, verifier, fopt);
  const RecordLookup lookup = [&](std::int64_t id) -> const ManifestRecord* {
    return id >= 0 && static_cast<std::size_t>(id) < n ? &records[static_cast<std::size_t>(id)] : nullptr;
  };

  // Raw-pixel cosine of each copy to its original (the baseline that fails).
  double raw_cos_sum = 0.0;
  for (std::size_t c = 0; c < planted.size(); ++c) {
    const auto& a = records[order[c]].pixels;
    const auto& b = planted[c].pixels;
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ab += double(a[i]) * b[i];
      aa += double(a[i]) * a[i];
      bb += double(b[i]) * b[i];
    }
    raw_cos_sum += ab / std::sqrt(aa * bb);
  }

  std::vector<float> vec(embedder->dim());
  std::vector<double> original_best(n, -2.0);
  const double cpu0 = thread_cpu_seconds();
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    embedder->embed(records[i], vec.data());
    const NearDuplicateMatch m = finder.find(vec.data(), records[i], lookup);
    if (m.id >= 0) {
      original_best[i] = m.similarity;
    }
    const auto id = static_cast<std::int64_t>(i);
    index->add(1, &id, vec.data());
  }
  std::vector<double> copy_to_original(planted.size(), -2.0);
  std::vector<double> copy_best(planted.size(), -2.0);
  std::size_t candidate_hits = 0;
  for (std::size_t c = 0; c < planted.size(); ++c) {
    embedder->embed(planted[c], vec.data());
    const auto res = index->search(1, vec.data(), candidates);
    for (std::size_t r = 0; r < res.count(0); ++r) {
      if (static_cast<std::size_t>(res.id(0, r)) == order[c]) {
        ++candidate_hits;
        copy_to_original[c] = verifier.similarity(planted[c], records[order[c]]);
      }
    }
    const NearDuplicateMatch m = finder.verify(res, 0, planted[c], lookup);
    copy_best[c] = m.similarity;
  }
  const double run_s = seconds_since(t0);
  const double run_cpu = thread_cpu_seconds() - cpu0;

  std::vector<bool> copied(n, false);
  for (const std::size_t o : order) {
    copied[o] = true;
  }
  nlohmann::json curve = nlohmann::json::array();
  for (const double t : {0.80, 0.85, 0.88, 0.90, 0.92, 0.93, 0.94, 0.95, 0.96, 0.97, 0.98, 0.985, 0.99, 0.995}) {
    std::size_t hit = 0, any = 0, fp = 0, fp_untouched = 0;
    for (std::size_t c = 0; c < planted.size(); ++c) {
      hit += copy_to_original[c] >= t;
      any += copy_best[c] >= t;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (original_best[i] >= t) {
        ++fp;
        fp_untouched += !copied[i];
      }
    }
    curve.push_back({{"threshold", t},
                     {"recall", double(hit) / planted.size()},
                     {"recall_any_match", double(any) / planted.size()},
                     {"fp_rate", double(fp) / n},
                     {"fp_rate_untouched", double(fp_untouched) / double(n - planted.size())}});
  }
  nlohmann::json out = {
      {"benchmark", "near_duplicates"},
      {"images", images},
      {"originals", n},
      {"copies", planted.size()},
      {"edits", {{"shift_px", 1}, {"brightness", brightness}, {"noise_sigma", noise}, {"seed", seed}}},
      {"embedder", embedder->spec()},
      {"index", index->config()},
      {"verifier", verifier.name()},
      {"candidates", candidates},
      {"candidate_recall", double(candidate_hits) / planted.size()},
      {"raw_pixel_cosine_copy_mean", raw_cos_sum / planted.size()},
      {"curve", curve},
      {"run_s", run_s},
      {"run_cpu_s", run_cpu},
      {"samples_per_s", double(n + planted.size()) / run_s},
      {"total_s", seconds_since(start)},
  };
  return emit(out, json_path);
}
