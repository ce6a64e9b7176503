// bench_near_duplicates: recall and false positives of the near-duplicate
// finder on real images.
//
// Takes the 10,000 Fashion-MNIST test images, plants re-submitted copies of
// `--copies` of them (each shifted by one pixel in a random one of the 8
// directions, brightness scaled by a factor in [0.9, 1.1], Gaussian pixel
// noise of a sigma uniform in [--noise-min, --noise-max] on 0-255, rounded
// and clipped), then runs the pipeline's order: every original is checked
// against the originals accepted before it and inserted; then every copy is
// checked against all of them. Once per seed (`--seeds`), each its own copies.
// Every setting defaults to the CLI's (`winnow init` with no options:
// CurationConfig), so the figures are the ones a user of the defaults gets;
// bench/near_duplicates_cli.py measures the same through the CLI itself.
// For each verifier threshold it reports
//   recall            share of copies whose own original verified >= threshold
//                     among the index candidates
//   fp_rate           share of originals matched (>= threshold) to an
//                     earlier, different original
// plus the candidate recall (original among the top-k index candidates).
// Candidates are verified as the ingest pipeline does: only those with index
// cosine >= --min-candidate and within --candidate-margin of the best one;
// candidates_checked_mean is the verifier calls per sample.
//
// --compare-index CONFIG runs the same images and copies through a second
// index (e.g. "hnsw", HNSW at its default settings) and reports its recall
// relative to the first index's at the verifier's default threshold.
//
//   bench_near_duplicates --seeds 1 2 3 --compare-index hnsw
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <unordered_map>

#include <CLI/CLI.hpp>

#include "bench_util.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/version.h"

using namespace winnow::curation;
using namespace winnow::curation::dedup;
using namespace winnow::curation::embed;
using namespace winnow::curation::readers;
using namespace winnow::curation::bench;

namespace {

// The CLI's defaults: what `winnow init` records without options.
const CurationConfig kDefaults;

struct BenchOptions {
  std::string images = kFashionDir + "/t10k-images-idx3-ubyte.gz";
  std::string embedder_spec = kDefaults.embedder;
  std::string index_config = kDefaults.index;
  std::string json_path;
  int copies = 1000;
  int candidates = kDefaults.candidates;
  double min_candidate = kDefaults.min_candidate_similarity;
  double candidate_margin = kDefaults.candidate_margin;
  std::string compare_index;
  int max_shift = kDefaults.image_max_shift;
  double threshold = kDefaults.image_threshold;
  double noise_min = 2.0;
  double noise_max = 5.0;
  double brightness = 0.10;
  std::vector<unsigned> seeds = {1, 2, 3};
};

void add_options(CLI::App& app, BenchOptions& o) {
  app.add_option("--images", o.images, "IDX images file");
  app.add_option("--embedder", o.embedder_spec, "embedder spec for candidate retrieval");
  app.add_option("--index", o.index_config, "vector index config");
  app.add_option("--copies", o.copies, "number of planted copies");
  app.add_option("--candidates", o.candidates, "index candidates verified per sample");
  app.add_option("--min-candidate", o.min_candidate,
                 "verify only candidates with index cosine >= this (pipeline: "
                 "min_candidate_similarity)");
  app.add_option("--candidate-margin", o.candidate_margin,
                 "verify only candidates within this of the best cosine (pipeline: "
                 "candidate_margin)");
  app.add_option("--compare-index", o.compare_index,
                 "also run through this index config and report its recall relative to --index");
  app.add_option("--max-shift", o.max_shift, "verifier shift range");
  app.add_option("--threshold", o.threshold,
                 "the verifier threshold whose recall is reported as the default's");
  app.add_option("--noise-min", o.noise_min, "smallest pixel noise sigma (0-255 scale)");
  app.add_option("--noise-max", o.noise_max, "largest pixel noise sigma (0-255 scale)");
  app.add_option("--brightness", o.brightness, "max relative brightness change");
  app.add_option("--seeds", o.seeds, "random seeds: one run each");
  app.add_option("--json", o.json_path, "also write the JSON here");
}

// The originals and their planted copies: planted[c] is an edited copy of
// records[order[c]].
struct PlantedSet {
  std::vector<ManifestRecord> records;
  std::vector<std::size_t> order;
  std::vector<ManifestRecord> planted;
  std::vector<bool> copied;  // per original: has a planted copy
  std::size_t width = 0;
  std::size_t height = 0;
};

// `src` shifted by one pixel in direction d, brightness scaled by f, plus
// Gaussian noise, rounded and clipped.
ManifestRecord edited_copy(const ManifestRecord& src, int d, double f, double noise,
                           std::normal_distribution<double>& gauss, std::mt19937_64& rng,
                           std::size_t w, std::size_t h) {
  static const int kDx[8] = {-1, 0, 1, -1, 1, -1, 0, 1};
  static const int kDy[8] = {-1, -1, -1, 0, 0, 1, 1, 1};
  ManifestRecord copy = src;
  copy.key = "copy-of-" + src.key;
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
  return copy;
}

PlantedSet plant_copies(const BenchOptions& o, const std::vector<ManifestRecord>& originals,
                        unsigned seed) {
  PlantedSet set;
  set.records = originals;
  const std::size_t n = set.records.size();
  set.width = set.records[0].width;
  set.height = set.records[0].height;

  std::mt19937_64 rng(seed);
  set.order.resize(n);
  std::iota(set.order.begin(), set.order.end(), 0);
  std::shuffle(set.order.begin(), set.order.end(), rng);
  set.order.resize(static_cast<std::size_t>(o.copies));
  std::uniform_int_distribution<int> dir(0, 7);
  std::uniform_real_distribution<double> bright(1.0 - o.brightness, 1.0 + o.brightness);
  std::uniform_real_distribution<double> sigma(o.noise_min, o.noise_max);
  std::normal_distribution<double> gauss(0.0, 1.0);
  for (std::size_t c = 0; c < set.order.size(); ++c) {
    const int d = dir(rng);
    const double f = bright(rng);
    const double noise = sigma(rng);
    set.planted.push_back(
        edited_copy(set.records[set.order[c]], d, f, noise, gauss, rng, set.width, set.height));
  }
  set.copied.assign(n, false);
  for (const std::size_t i : set.order) {
    set.copied[i] = true;
  }
  return set;
}

// Raw-pixel cosine of each copy to its original (the baseline that fails),
// summed.
double raw_pixel_cosine_sum(const PlantedSet& set) {
  double raw_cos_sum = 0.0;
  for (std::size_t c = 0; c < set.planted.size(); ++c) {
    const auto& a = set.records[set.order[c]].pixels;
    const auto& b = set.planted[c].pixels;
    double ab = 0, aa = 0, bb = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      ab += double(a[i]) * b[i];
      aa += double(a[i]) * a[i];
      bb += double(b[i]) * b[i];
    }
    raw_cos_sum += ab / std::sqrt(aa * bb);
  }
  return raw_cos_sum;
}

// The candidates the pipeline would verify: at or above the cosine floor and
// within the margin of the best candidate.
winnow::index::SearchResults pipeline_candidates(winnow::index::SearchResults res,
                                                 double candidate_margin) {
  const float floor_sim =
      res.count(0) > 0 ? res.similarity(0, 0) - static_cast<float>(candidate_margin) : 0.0f;
  for (std::size_t r = 1; r < res.k; ++r) {
    if (res.ids[r] >= 0 && res.similarities[r] < floor_sim) {
      res.ids[r] = -1;
      res.similarities[r] = -std::numeric_limits<float>::infinity();
    }
  }
  return res;
}

// What one run of the experiment measured, per sample.
struct Similarities {
  std::vector<double> original_best;     // best verified earlier original, per original
  std::vector<double> copy_to_original;  // a copy's own original, when a candidate
  std::vector<double> copy_best;         // best verified match of a copy
  std::size_t candidate_hits = 0;        // copies whose original was a candidate
  std::size_t checked = 0;               // verifier calls
};

// Everything a run shares, whichever index it goes through.
struct Experiment {
  const BenchOptions& options;
  const PlantedSet& set;
  const Embedder& embedder;
  const ImageNearDuplicateVerifier& verifier;
  RecordLookup lookup;
};

// The pipeline's order: every original against the originals before it,
// then every copy against all of them.
Similarities run_through(const Experiment& e, winnow::index::VectorIndex& index,
                         const NearDuplicateFinder& finder) {
  const std::size_t n = e.set.records.size();
  const std::size_t copies = e.set.planted.size();
  const int candidates = e.options.candidates;
  Similarities s{std::vector<double>(n, -2.0), std::vector<double>(copies, -2.0),
                 std::vector<double>(copies, -2.0)};
  std::vector<float> vec(e.embedder.dim());
  for (std::size_t i = 0; i < n; ++i) {
    e.embedder.embed(e.set.records[i], vec.data());
    if (index.size() > 0) {
      const NearDuplicateMatch m = finder.verify(
          pipeline_candidates(index.search(1, vec.data(), candidates), e.options.candidate_margin),
          0, e.set.records[i], e.lookup);
      s.checked += static_cast<std::size_t>(m.candidates_checked);
      if (m.id >= 0) {
        s.original_best[i] = m.similarity;
      }
    }
    const auto id = static_cast<std::int64_t>(i);
    index.add(1, &id, vec.data());
  }
  for (std::size_t c = 0; c < copies; ++c) {
    const ManifestRecord& copy = e.set.planted[c];
    const std::size_t original = e.set.order[c];
    e.embedder.embed(copy, vec.data());
    const auto res =
        pipeline_candidates(index.search(1, vec.data(), candidates), e.options.candidate_margin);
    for (std::size_t r = 0; r < res.count(0); ++r) {
      if (static_cast<std::size_t>(res.id(0, r)) == original) {
        ++s.candidate_hits;
        if (res.similarity(0, r) >= e.options.min_candidate) {
          s.copy_to_original[c] = e.verifier.similarity(copy, e.set.records[original]);
        }
      }
    }
    const NearDuplicateMatch m = finder.verify(res, 0, copy, e.lookup);
    s.checked += static_cast<std::size_t>(m.candidates_checked);
    s.copy_best[c] = m.similarity;
  }
  return s;
}

// Recall and false positives per verifier threshold (the default one among
// them); sets the recall at the default threshold.
nlohmann::json threshold_curve(const PlantedSet& set, const Similarities& s,
                               double default_threshold, double& recall_at_default) {
  const std::size_t n = set.records.size();
  const std::size_t copies = set.planted.size();
  std::vector<double> thresholds = {0.80, 0.85, 0.88, 0.90, 0.92,  0.93, 0.94,
                                    0.95, 0.96, 0.97, 0.98, 0.985, 0.99, 0.995};
  if (std::find(thresholds.begin(), thresholds.end(), default_threshold) == thresholds.end()) {
    thresholds.insert(std::upper_bound(thresholds.begin(), thresholds.end(), default_threshold),
                      default_threshold);
  }
  nlohmann::json curve = nlohmann::json::array();
  for (const double t : thresholds) {
    std::size_t hit = 0, any = 0, fp = 0, fp_untouched = 0;
    for (std::size_t c = 0; c < copies; ++c) {
      hit += s.copy_to_original[c] >= t;
      any += s.copy_best[c] >= t;
    }
    for (std::size_t i = 0; i < n; ++i) {
      if (s.original_best[i] >= t) {
        ++fp;
        fp_untouched += !set.copied[i];
      }
    }
    const double recall = double(hit) / copies;
    if (t == default_threshold) recall_at_default = recall;
    curve.push_back({{"threshold", t},
                     {"recall", recall},
                     {"recall_any_match", double(any) / copies},
                     {"fp_rate", double(fp) / n},
                     {"fp_rate_untouched", double(fp_untouched) / double(n - copies)}});
  }
  return curve;
}

// One run of the experiment through the index made from `config`.
nlohmann::json measure(const Experiment& e, const std::string& config, double default_threshold) {
  auto index = winnow::index::make_vector_index(config, e.embedder.dim());
  NearDuplicateFinderOptions fopt;
  fopt.candidates = e.options.candidates;
  fopt.min_candidate_similarity = e.options.min_candidate;
  const NearDuplicateFinder finder(*index, e.verifier, fopt);

  const double cpu0 = thread_cpu_seconds();
  const auto t0 = Clock::now();
  const Similarities s = run_through(e, *index, finder);
  const double run_s = seconds_since(t0);
  const double run_cpu = thread_cpu_seconds() - cpu0;

  const std::size_t n = e.set.records.size();
  const std::size_t copies = e.set.planted.size();
  double recall_at_default = 0.0;
  const nlohmann::json curve = threshold_curve(e.set, s, default_threshold, recall_at_default);
  return nlohmann::json{
      {"index", index->config()},
      {"candidate_recall", double(s.candidate_hits) / copies},
      {"candidates_checked_mean", double(s.checked) / double(n + copies)},
      {"recall_at_default_threshold", recall_at_default},
      {"curve", curve},
      {"run_s", run_s},
      {"run_cpu_s", run_cpu},
      {"samples_per_s", double(n + copies) / run_s},
  };
}

// One seed's planted set through the index (and the comparison index).
nlohmann::json run_seed(const BenchOptions& o, const std::vector<ManifestRecord>& originals,
                        const Embedder& embedder, const ImageNearDuplicateVerifier& verifier,
                        unsigned seed) {
  const PlantedSet set = plant_copies(o, originals, seed);
  const std::size_t n = set.records.size();
  const RecordLookup lookup = [&](std::int64_t id) -> const ManifestRecord* {
    return id >= 0 && static_cast<std::size_t>(id) < n ? &set.records[static_cast<std::size_t>(id)]
                                                       : nullptr;
  };
  const Experiment experiment{o, set, embedder, verifier, lookup};
  nlohmann::json out = {
      {"seed", seed},
      {"raw_pixel_cosine_copy_mean", raw_pixel_cosine_sum(set) / set.planted.size()}};
  const nlohmann::json first = measure(experiment, o.index_config, o.threshold);
  for (const auto& [key, value] : first.items()) out[key] = value;
  if (!o.compare_index.empty()) {
    const nlohmann::json second = measure(experiment, o.compare_index, o.threshold);
    const double base = first["recall_at_default_threshold"].get<double>();
    out["comparison"] = second;
    out["comparison"]["recall_ratio_at_default_threshold"] =
        base > 0.0 ? second["recall_at_default_threshold"].get<double>() / base : 0.0;
  }
  return out;
}

// The share of untouched originals flagged at the default threshold.
double fp_untouched_at(const nlohmann::json& run, double threshold) {
  for (const auto& point : run["curve"]) {
    if (point["threshold"].get<double>() == threshold) {
      return point["fp_rate_untouched"].get<double>();
    }
  }
  return std::numeric_limits<double>::quiet_NaN();
}

int run(const BenchOptions& o) {
  const auto start = Clock::now();
  const std::vector<ManifestRecord> originals = import_idx(o.images, "", "test");

  EmbedderOptions eopt;
  eopt.width = originals[0].width;
  eopt.height = originals[0].height;
  const auto embedder = make_embedder(o.embedder_spec, eopt);
  ImageVerifierOptions vopt;
  vopt.max_shift = o.max_shift;
  vopt.threshold = 0.0;  // the curve is computed from the raw similarities
  const ImageNearDuplicateVerifier verifier(vopt);

  nlohmann::json runs = nlohmann::json::array();
  double recall_min = 1.0, recall_sum = 0.0, fp_max = 0.0;
  for (const unsigned seed : o.seeds) {
    nlohmann::json r = run_seed(o, originals, *embedder, verifier, seed);
    const double recall = r["recall_at_default_threshold"].get<double>();
    recall_min = std::min(recall_min, recall);
    recall_sum += recall;
    fp_max = std::max(fp_max, fp_untouched_at(r, o.threshold));
    runs.push_back(std::move(r));
  }
  nlohmann::json out = {
      {"benchmark", "near_duplicates"},
      {"images", o.images},
      {"originals", originals.size()},
      {"copies", o.copies},
      {"edits",
       {{"shift_px", 1},
        {"brightness", o.brightness},
        {"noise_sigma", {o.noise_min, o.noise_max}},
        {"seeds", o.seeds}}},
      {"embedder", embedder->spec()},
      {"index", o.index_config},
      {"verifier", verifier.name()},
      {"candidates", o.candidates},
      {"min_candidate_similarity", o.min_candidate},
      {"candidate_margin", o.candidate_margin},
      {"default_threshold", o.threshold},
      {"recall_at_default_threshold_min", recall_min},
      {"recall_at_default_threshold_mean", recall_sum / double(o.seeds.size())},
      {"fp_rate_untouched_at_default_threshold_max", fp_max},
      {"runs", runs},
      {"load_average", load_average()},
  };
  out["total_s"] = seconds_since(start);
  return emit(out, o.json_path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"near-duplicate recall / false positives on Fashion-MNIST test images"};
  app.set_version_flag("--version", std::string("bench_near_duplicates ") + winnow::kVersion);
  BenchOptions options;
  add_options(app, options);
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
