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
// Candidates are verified as the ingest pipeline does: only those with index
// cosine >= --min-candidate and within --candidate-margin of the best one
// (defaults: all); candidates_checked_mean is the verifier calls per sample.
//
// --compare-index CONFIG runs the same images and copies through a second
// index (e.g. "hnsw", HNSW at its default settings) and reports its recall
// relative to the first index's at the verifier's default threshold.
//
//   bench_near_duplicates --embedder 'pixels(fourier=6)' --index flat --compare-index hnsw
#include <algorithm>
#include <cmath>
#include <limits>
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
  double min_candidate = -1.0;
  double candidate_margin = 2.0;
  std::string compare_index;
  int max_shift = 1;
  double noise = 5.0;
  double brightness = 0.10;
  unsigned seed = 7;
  app.add_option("--images", images, "IDX images file");
  app.add_option("--embedder", embedder_spec, "embedder spec for candidate retrieval");
  app.add_option("--index", index_config, "vector index config");
  app.add_option("--copies", copies, "number of planted copies");
  app.add_option("--candidates", candidates, "index candidates verified per sample");
  app.add_option("--min-candidate", min_candidate,
                 "verify only candidates with index cosine >= this (pipeline: min_candidate_similarity)");
  app.add_option("--candidate-margin", candidate_margin,
                 "verify only candidates within this of the best cosine (pipeline: candidate_margin)");
  app.add_option("--compare-index", compare_index,
                 "also run through this index config and report its recall relative to --index");
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
  ImageVerifierOptions vopt;
  vopt.max_shift = max_shift;
  vopt.threshold = 0.0;  // the curve is computed below from the raw similarities
  const ImageNearDuplicateVerifier verifier(vopt);
  const double default_threshold = ImageVerifierOptions{}.threshold;
  const RecordLookup lookup = [&](std::int64_t id) -> const ManifestRecord* {
    return id >= 0 && static_cast<std::size_t>(id) < n ? &records[static_cast<std::size_t>(id)] : nullptr;
  };
  std::vector<bool> copied(n, false);
  for (const std::size_t o : order) {
    copied[o] = true;
  }

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

  // The candidates the pipeline would verify: at or above the cosine floor and
  // within the margin of the best candidate.
  const auto pipeline_candidates = [&](winnow::index::SearchResults res) {
    const float floor_sim = res.count(0) > 0 ? res.similarity(0, 0) - static_cast<float>(candidate_margin)
                                             : 0.0f;
    for (std::size_t r = 1; r < res.k; ++r) {
      if (res.ids[r] >= 0 && res.similarities[r] < floor_sim) {
        res.ids[r] = -1;
        res.similarities[r] = -std::numeric_limits<float>::infinity();
      }
    }
    return res;
  };

  // One run of the experiment through the index made from `config`.
  const auto measure = [&](const std::string& config) {
    auto index = winnow::index::make_vector_index(config, embedder->dim());
    NearDuplicateFinderOptions fopt;
    fopt.candidates = candidates;
    fopt.min_candidate_similarity = min_candidate;
    const NearDuplicateFinder finder(*index, verifier, fopt);

    std::vector<float> vec(embedder->dim());
    std::vector<double> original_best(n, -2.0);
    std::size_t checked = 0;
    const double cpu0 = thread_cpu_seconds();
    const auto t0 = Clock::now();
    for (std::size_t i = 0; i < n; ++i) {
      embedder->embed(records[i], vec.data());
      if (index->size() > 0) {
        const NearDuplicateMatch m =
            finder.verify(pipeline_candidates(index->search(1, vec.data(), candidates)), 0,
                          records[i], lookup);
        checked += static_cast<std::size_t>(m.candidates_checked);
        if (m.id >= 0) {
          original_best[i] = m.similarity;
        }
      }
      const auto id = static_cast<std::int64_t>(i);
      index->add(1, &id, vec.data());
    }
    std::vector<double> copy_to_original(planted.size(), -2.0);
    std::vector<double> copy_best(planted.size(), -2.0);
    std::size_t candidate_hits = 0;
    for (std::size_t c = 0; c < planted.size(); ++c) {
      embedder->embed(planted[c], vec.data());
      const auto res = pipeline_candidates(index->search(1, vec.data(), candidates));
      for (std::size_t r = 0; r < res.count(0); ++r) {
        if (static_cast<std::size_t>(res.id(0, r)) == order[c]) {
          ++candidate_hits;
          if (res.similarity(0, r) >= min_candidate) {
            copy_to_original[c] = verifier.similarity(planted[c], records[order[c]]);
          }
        }
      }
      const NearDuplicateMatch m = finder.verify(res, 0, planted[c], lookup);
      checked += static_cast<std::size_t>(m.candidates_checked);
      copy_best[c] = m.similarity;
    }
    const double run_s = seconds_since(t0);
    const double run_cpu = thread_cpu_seconds() - cpu0;

    nlohmann::json curve = nlohmann::json::array();
    double recall_at_default = 0.0;
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
      const double recall = double(hit) / planted.size();
      if (t == default_threshold) recall_at_default = recall;
      curve.push_back({{"threshold", t},
                       {"recall", recall},
                       {"recall_any_match", double(any) / planted.size()},
                       {"fp_rate", double(fp) / n},
                       {"fp_rate_untouched", double(fp_untouched) / double(n - planted.size())}});
    }
    return nlohmann::json{
        {"index", index->config()},
        {"candidate_recall", double(candidate_hits) / planted.size()},
        {"candidates_checked_mean", double(checked) / double(n + planted.size())},
        {"recall_at_default_threshold", recall_at_default},
        {"curve", curve},
        {"run_s", run_s},
        {"run_cpu_s", run_cpu},
        {"samples_per_s", double(n + planted.size()) / run_s},
    };
  };

  const nlohmann::json first = measure(index_config);
  nlohmann::json out = {
      {"benchmark", "near_duplicates"},
      {"images", images},
      {"originals", n},
      {"copies", planted.size()},
      {"edits", {{"shift_px", 1}, {"brightness", brightness}, {"noise_sigma", noise}, {"seed", seed}}},
      {"embedder", embedder->spec()},
      {"verifier", verifier.name()},
      {"candidates", candidates},
      {"min_candidate_similarity", min_candidate},
      {"candidate_margin", candidate_margin},
      {"default_threshold", default_threshold},
      {"raw_pixel_cosine_copy_mean", raw_cos_sum / planted.size()},
      {"load_average", load_average()},
  };
  for (const auto& [key, value] : first.items()) out[key] = value;
  if (!compare_index.empty()) {
    const nlohmann::json second = measure(compare_index);
    const double base = first["recall_at_default_threshold"].get<double>();
    out["comparison"] = second;
    out["comparison"]["recall_ratio_at_default_threshold"] =
        base > 0.0 ? second["recall_at_default_threshold"].get<double>() / base : 0.0;
  }
  out["total_s"] = seconds_since(start);
  return emit(out, json_path);
}
