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
#include "winnow/curation/labels/confident_learning.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/version.h"

using namespace winnow::curation;
using namespace winnow::curation::labels;
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

struct BenchOptions {
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
};

void add_options(CLI::App& app, BenchOptions& o) {
  app.add_option("--images", o.images, "IDX images file");
  app.add_option("--labels", o.labels_path, "IDX labels file");
  app.add_option("--embedder", o.embedder_spec, "embedder spec")->capture_default_str();
  app.add_option("--noise", o.noise, "share of labels flipped")->capture_default_str();
  app.add_option("--k", o.k, "neighbours of the kNN label-quality flag")->capture_default_str();
  app.add_option("--vote-k", o.vote_k, "neighbours of the cross-validated kNN vote")
      ->capture_default_str();
  app.add_option("--folds", o.folds, "cross-validation folds")->capture_default_str();
  app.add_option("--alpha", o.alpha, "vote smoothing per class")->capture_default_str();
  app.add_option("--knn-flag-below", o.knn_flag_below, "kNN label-quality flag")
      ->capture_default_str();
  app.add_option("--limit", o.limit, "use only the first N images (0: all)");
  app.add_option("--seed", o.seed, "random seed")->capture_default_str();
  app.add_option("--json", o.json_path, "also write the JSON here");
}

// Folds: a seeded shuffle cut into `folds` parts.
std::vector<int> fold_assignment(std::size_t n, int folds, unsigned seed) {
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 fold_rng(seed + 1);
  std::shuffle(order.begin(), order.end(), fold_rng);
  std::vector<int> fold_of(n);
  for (std::size_t r = 0; r < n; ++r) {
    fold_of[order[r]] = static_cast<int>(r % static_cast<std::size_t>(folds));
  }
  return fold_of;
}

// Predicts fold f's samples by the kNN vote over the index of the others,
// into their rows of pred_probs.
void predict_fold(const NoisyEmbeddedImages& data, const std::vector<int>& fold_of, int f,
                  const BenchOptions& o, std::vector<float>& pred_probs) {
  const std::vector<int>& labels = data.flip.labels;
  const std::vector<float>& vecs = data.vectors;
  const std::size_t n = data.n, d = data.embedder->dim();
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
    const auto res = index->search(m, queries.data() + b * d, o.vote_k);
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
        p[j] = static_cast<float>((votes[j] + o.alpha) / (total + kClasses * o.alpha));
      }
    }
  }
}

// Out-of-sample pred_probs (n x kClasses): each fold predicted by the others.
std::vector<float> cross_validated_pred_probs(const NoisyEmbeddedImages& data,
                                              const BenchOptions& o) {
  const std::vector<int> fold_of = fold_assignment(data.n, o.folds, o.seed);
  std::vector<float> pred_probs(data.n * kClasses, 0.0f);
  for (int f = 0; f < o.folds; ++f) {
    predict_fold(data, fold_of, f, o, pred_probs);
  }
  return pred_probs;
}

// How often the cross-validated argmax hits the true and the given labels.
struct CvAccuracy {
  double true_labels = 0.0;
  double given_labels = 0.0;
};

CvAccuracy cv_accuracy(const NoisyEmbeddedImages& data, const std::vector<float>& pred_probs) {
  const std::size_t n = data.n;
  std::size_t correct_true = 0, correct_given = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float* p = pred_probs.data() + i * kClasses;
    const int pred = static_cast<int>(std::max_element(p, p + kClasses) - p);
    correct_true += pred == data.truth[i];
    correct_given += pred == data.flip.labels[i];
  }
  return {double(correct_true) / double(n), double(correct_given) / double(n)};
}

// Confident learning's scores, once per filter; `last` keeps the issue counts
// of the last filter run.
nlohmann::json score_confident_learning(const FlippedLabels& flip,
                                        const std::vector<float>& pred_probs,
                                        ConfidentLearningResult& last) {
  nlohmann::json filters = nlohmann::json::object();
  for (LabelIssueFilter f :
       {LabelIssueFilter::prune_by_noise_rate, LabelIssueFilter::prune_by_class,
        LabelIssueFilter::both, LabelIssueFilter::confident_learning,
        LabelIssueFilter::predicted_neq_given}) {
    ConfidentLearningOptions o;
    o.filter_by = f;
    const auto t_cl = Clock::now();
    ConfidentLearningResult r = find_label_issues(flip.labels, pred_probs, kClasses, o);
    const double cl_s = seconds_since(t_cl);
    nlohmann::json j = to_json(score(r.is_label_issue, flip.flipped, flip.count));
    j["seconds"] = cl_s;
    filters[std::string(to_string(f))] = j;
    last = std::move(r);
  }
  return filters;
}

// The kNN label-quality flag (audit: every sample against all others).
nlohmann::json score_knn_label_quality(const NoisyEmbeddedImages& data, const BenchOptions& o) {
  const std::vector<int>& labels = data.flip.labels;
  const std::size_t n = data.n, d = data.embedder->dim();
  const auto t_knn = Clock::now();
  auto index = winnow::index::make_vector_index("flat", d);
  std::vector<std::int64_t> all_ids(n);
  std::iota(all_ids.begin(), all_ids.end(), 0);
  index->add(n, all_ids.data(), data.vectors.data());
  LabelQualityOptions lopt;
  lopt.k = o.k;
  lopt.flag_below = o.knn_flag_below;
  const LabelQuality lq(lopt);
  const LabelLookup lookup = [&](std::int64_t id) -> std::optional<int> {
    return labels[static_cast<std::size_t>(id)];
  };
  std::vector<bool> knn_flags(n, false);
  for (std::size_t b = 0; b < n; b += 2000) {
    const std::size_t m = std::min<std::size_t>(2000, n - b);
    const auto res = index->search(m, data.vectors.data() + b * d, o.k + 1);
    for (std::size_t q = 0; q < m; ++q) {
      knn_flags[b + q] =
          lq.score(res, q, labels[b + q], lookup, static_cast<std::int64_t>(b + q)).flagged;
    }
  }
  const double knn_s = seconds_since(t_knn);
  nlohmann::json knn = to_json(score(knn_flags, data.flip.flipped, data.flip.count));
  knn["flag_below"] = o.knn_flag_below;
  knn["seconds"] = knn_s;
  return knn;
}

int run(const BenchOptions& o) {
  const auto start = Clock::now();
  // The same flips as bench_label_quality.
  const NoisyEmbeddedImages data = load_noisy_embedded(o.images, o.labels_path, o.limit, o.noise,
                                                       o.seed, kClasses, o.embedder_spec);
  const std::size_t n = data.n;

  const auto t_cv = Clock::now();
  const std::vector<float> pred_probs = cross_validated_pred_probs(data, o);
  const double cv_s = seconds_since(t_cv);
  const CvAccuracy accuracy = cv_accuracy(data, pred_probs);

  ConfidentLearningResult last;
  const nlohmann::json filters = score_confident_learning(data.flip, pred_probs, last);
  const nlohmann::json knn = score_knn_label_quality(data, o);

  nlohmann::json out = {
      {"benchmark", "confident_learning"},
      {"images", o.images},
      {"samples", n},
      {"flipped", data.flip.count},
      {"noise", o.noise},
      {"seed", o.seed},
      {"embedder", data.embedder->spec()},
      {"model",
       fmt::format("kNN vote, k={}, alpha={}, {}-fold CV, flat index", o.vote_k, o.alpha, o.folds)},
      {"cv_accuracy_true_labels", accuracy.true_labels},
      {"cv_accuracy_given_labels", accuracy.given_labels},
      {"num_label_issues", last.num_label_issues},
      {"num_label_issues_calibrated", last.num_label_issues_calibrated},
      {"confident_learning", filters},
      {"knn_label_quality", knn},
      {"embed_s", data.embed_seconds},
      {"cv_s", cv_s},
      {"total_s", seconds_since(start)},
      {"load_average", load_average()},
      {"peak_rss_mb", peak_rss_mb()},
  };
  return emit(out, o.json_path);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"confident learning vs planted flips on Fashion-MNIST train"};
  app.set_version_flag("--version", std::string("bench_confident_learning ") + winnow::kVersion);
  BenchOptions options;
  add_options(app, options);
  CLI11_PARSE(app, argc, argv);
  return run(options);
}
