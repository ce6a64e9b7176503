// bench_confident_learning: confident learning's flags against planted label
// flips, beside the kNN label-quality flag on the same flips.
//
// Flips `--noise` (default 10%) of the Fashion-MNIST TRAIN labels to another
// class chosen uniformly, with the same seed and draw order as
// bench_label_quality (so both benchmarks flip the same samples). The
// out-of-sample pred_probs come from `--folds`-fold cross-validation of a
// simple torch-free model: a kNN class vote over the embedding, with the flat
// index holding the other folds (noisy labels, as in real use):
//
//   p̂[j] = (sum of max(cos, 0) over the k neighbours labelled j + alpha)
//          / (sum of max(cos, 0) over the k neighbours + K alpha)
//
// Then find_label_issues runs once per filter_by, and each flag set is scored
// (precision, recall, F1) against the flips. The kNN label-quality flag
// (LabelQuality, quality < 0.1 over the k nearest OTHER samples of the whole
// set, as in bench_label_quality) is measured in the same run.
//
//   bench_confident_learning --embedder 'pixels(dim=128)' --vote-k 15 --folds 5 --json cl.json
#include <algorithm>
#include <numeric>
#include <random>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench_util.h"
#include "winnow/curation/confident_learning.h"
#include "winnow/curation/embedder.h"
#include "winnow/curation/idx_importer.h"
#include "winnow/curation/label_quality.h"
#include "winnow/index/vector_index_factory.h"

using namespace winnow::curation;
using namespace winnow::curation::bench;

namespace {

constexpr int kClasses = 10;

struct Score {
  std::size_t flagged = 0;
  double precision = 0.0, recall = 0.0, f1 = 0.0;
};

Score score(const std::vector<bool>& flags, const std::vector<bool>& flipped, std::size_t flips) {
  Score s;
  std::size_t tp = 0;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    if (!flags[i]) continue;
    ++s.flagged;
    tp += flipped[i];
  }
  s.precision = s.flagged > 0 ? double(tp) / double(s.flagged) : 0.0;
  s.recall = flips > 0 ? double(tp) / double(flips) : 0.0;
  s.f1 = s.precision + s.recall > 0 ? 2 * s.precision * s.recall / (s.precision + s.recall) : 0.0;
  return s;
}

nlohmann::json to_json(const Score& s) {
  return {{"flagged", s.flagged}, {"precision", s.precision}, {"recall", s.recall}, {"f1", s.f1}};
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"confident learning vs planted flips on Fashion-MNIST train"};
  std::string images = kFashionDir + "/train-images-idx3-ubyte.gz";
  std::string labels_path = kFashionDir + "/train-labels-idx1-ubyte.gz";
  std::string embedder_spec = "pixels(dim=128)";
  std::string json_path;
  double noise = 0.10;
  int k = 15;
  int vote_k = 15;
  int folds = 5;
  double alpha = 0.1;
  double knn_flag_below = 0.1;
  std::size_t limit = 0;
  unsigned seed = 11;
  app.add_option("--images", images, "IDX images file");
  app.add_option("--labels", labels_path, "IDX labels file");
  app.add_option("--embedder", embedder_spec, "embedder spec")->capture_default_str();
  app.add_option("--noise", noise, "share of labels flipped")->capture_default_str();
  app.add_option("--k", k, "neighbours of the kNN label-quality flag")->capture_default_str();
  app.add_option("--vote-k", vote_k, "neighbours of the cross-validated kNN vote")->capture_default_str();
  app.add_option("--folds", folds, "cross-validation folds")->capture_default_str();
  app.add_option("--alpha", alpha, "vote smoothing per class")->capture_default_str();
  app.add_option("--knn-flag-below", knn_flag_below, "kNN label-quality flag")->capture_default_str();
  app.add_option("--limit", limit, "use only the first N images (0: all)");
  app.add_option("--seed", seed, "random seed")->capture_default_str();
  app.add_option("--json", json_path, "also write the JSON here");
  CLI11_PARSE(app, argc, argv);

  const auto start = Clock::now();
  // The same flips as bench_label_quality.
  const NoisyEmbeddedImages data =
      load_noisy_embedded(images, labels_path, limit, noise, seed, kClasses, embedder_spec);
  const std::vector<std::uint8_t>& truth = data.truth;
  const auto& [labels, flipped, flips] = data.flip;
  const std::size_t n = data.n, d = data.embedder->dim();
  const std::vector<float>& vecs = data.vectors;

  // Folds: a seeded shuffle cut into `folds` parts; each part is predicted by
  // the kNN vote over the index of the others.
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 fold_rng(seed + 1);
  std::shuffle(order.begin(), order.end(), fold_rng);
  std::vector<int> fold_of(n);
  for (std::size_t r = 0; r < n; ++r) fold_of[order[r]] = static_cast<int>(r % static_cast<std::size_t>(folds));
  std::vector<float> pred_probs(n * kClasses, 0.0f);
  const auto t_cv = Clock::now();
  for (int f = 0; f < folds; ++f) {
    auto index = winnow::index::make_vector_index("flat", d);
    std::vector<std::int64_t> ids;
    std::vector<float> train;
    std::vector<std::size_t> held_out;
    std::vector<float> queries;
    for (std::size_t i = 0; i < n; ++i) {
      if (fold_of[i] == f) {
        held_out.push_back(i);
        queries.insert(queries.end(), vecs.begin() + static_cast<long>(i * d),
                       vecs.begin() + static_cast<long>((i + 1) * d));
      } else {
        ids.push_back(static_cast<std::int64_t>(i));
        train.insert(train.end(), vecs.begin() + static_cast<long>(i * d),
                     vecs.begin() + static_cast<long>((i + 1) * d));
      }
    }
    index->add(ids, train);
    const std::size_t batch = 2000;
    for (std::size_t b = 0; b < held_out.size(); b += batch) {
      const std::size_t m = std::min(batch, held_out.size() - b);
      const auto res = index->search(m, queries.data() + b * d, vote_k);
      for (std::size_t q = 0; q < m; ++q) {
        double votes[kClasses] = {};
        double total = 0.0;
        for (std::size_t r = 0; r < res.k; ++r) {
          if (res.id(q, r) < 0) break;
          const double w = std::max(0.0, static_cast<double>(res.similarity(q, r)));
          votes[labels[static_cast<std::size_t>(res.id(q, r))]] += w;
          total += w;
        }
        float* p = pred_probs.data() + held_out[b + q] * kClasses;
        for (int j = 0; j < kClasses; ++j) {
          p[j] = static_cast<float>((votes[j] + alpha) / (total + kClasses * alpha));
        }
      }
    }
  }
  const double cv_s = seconds_since(t_cv);
  std::size_t correct_true = 0, correct_given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float* p = pred_probs.data() + i * kClasses;
    const int pred = static_cast<int>(std::max_element(p, p + kClasses) - p);
    correct_true += pred == truth[i];
    correct_given += pred == labels[i];
  }

  // Confident learning, once per filter.
  nlohmann::json filters = nlohmann::json::object();
  std::int64_t num_label_issues = 0, num_label_issues_calibrated = 0;
  for (LabelIssueFilter f :
       {LabelIssueFilter::prune_by_noise_rate, LabelIssueFilter::prune_by_class,
        LabelIssueFilter::both, LabelIssueFilter::confident_learning,
        LabelIssueFilter::predicted_neq_given}) {
    ConfidentLearningOptions o;
    o.filter_by = f;
    const auto t_cl = Clock::now();
    const ConfidentLearningResult r = find_label_issues(labels, pred_probs, kClasses, o);
    const double cl_s = seconds_since(t_cl);
    num_label_issues = r.num_label_issues;
    num_label_issues_calibrated = r.num_label_issues_calibrated;
    nlohmann::json j = to_json(score(r.is_label_issue, flipped, flips));
    j["seconds"] = cl_s;
    filters[std::string(to_string(f))] = j;
  }

  // The kNN label-quality flag (audit: every sample against all others).
  const auto t_knn = Clock::now();
  auto index = winnow::index::make_vector_index("flat", d);
  std::vector<std::int64_t> all_ids(n);
  std::iota(all_ids.begin(), all_ids.end(), 0);
  index->add(n, all_ids.data(), vecs.data());
  LabelQualityOptions lopt;
  lopt.k = k;
  lopt.flag_below = knn_flag_below;
  const LabelQuality lq(lopt);
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  std::vector<bool> knn_flags(n, false);
  for (std::size_t b = 0; b < n; b += 2000) {
    const std::size_t m = std::min<std::size_t>(2000, n - b);
    const auto res = index->search(m, vecs.data() + b * d, k + 1);
    for (std::size_t q = 0; q < m; ++q) {
      knn_flags[b + q] =
          lq.score(res, q, labels[b + q], lookup, static_cast<std::int64_t>(b + q)).flagged;
    }
  }
  const double knn_s = seconds_since(t_knn);
  nlohmann::json knn = to_json(score(knn_flags, flipped, flips));
  knn["flag_below"] = knn_flag_below;
  knn["seconds"] = knn_s;

  nlohmann::json out = {
      {"benchmark", "confident_learning"},
      {"images", images},
      {"samples", n},
      {"flipped", flips},
      {"noise", noise},
      {"seed", seed},
      {"embedder", data.embedder->spec()},
      {"model", fmt::format("kNN vote, k={}, alpha={}, {}-fold CV, flat index", vote_k, alpha, folds)},
      {"cv_accuracy_true_labels", double(correct_true) / double(n)},
      {"cv_accuracy_given_labels", double(correct_given) / double(n)},
      {"num_label_issues", num_label_issues},
      {"num_label_issues_calibrated", num_label_issues_calibrated},
      {"confident_learning", filters},
      {"knn_label_quality", knn},
      {"embed_s", data.embed_seconds},
      {"cv_s", cv_s},
      {"total_s", seconds_since(start)},
      {"load_average", load_average()},
      {"peak_rss_mb", peak_rss_mb()},
  };
  return emit(out, json_path);
}
