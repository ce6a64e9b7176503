// train_fashion_mnist: trains a small classifier on Fashion-MNIST with a
// dynamic-pruning policy, through the LibTorch plugin exactly as a user would:
// a torch::data DataLoader fed by winnow::PlanSampler, batches that carry
// their sample ids, and winnow::PrunedLoss for the weighted loss.
//
//   train_fashion_mnist --model mlp --policy infobatch --epochs 15 --json run.json
//
// Progress goes to stderr (one line per epoch); --json writes the results.
//
// Data-parallel on CPU processes (c10d / Gloo), W processes sharing an init file:
//
//   train_fashion_mnist --world-size 2 --rank 0 --init /tmp/init &
//   train_fashion_mnist --world-size 2 --rank 1 --init /tmp/init
//
// Every rank builds the same plan and trains its shard (DistributedPrunedLoss
// keeps the score tables identical); gradients are averaged with one
// allreduce per step (LibTorch 1.13 has no C++ DDP module). Only rank 0
// writes --json.
#include <memory>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <torch/torch.h>

#include "fashion_mnist.h"
#include "models.h"
#include "winnow/pruning/training_record.h"
#include "winnow/clock.h"
#include "winnow/error.h"
#include "winnow/torch/indexed_dataset.h"
#include "winnow/torch/plan_sampler.h"
#include "winnow/torch/pruned_loss.h"
#include "winnow/version.h"
#ifdef WINNOW_TORCH_HAS_DISTRIBUTED
#include "winnow/torch/distributed_pruned_loss.h"
#endif

namespace {

using Clock = std::chrono::steady_clock;
namespace ex = winnow::examples;

using winnow::seconds_since;

struct Options {
  std::string model = "mlp";
  std::string policy = "infobatch";
  std::uint64_t epochs = 15;
  std::optional<double> prune_ratio;    // r; infobatch without it keeps its saving budget
  std::optional<double> target_saving;  // save=F for infobatch and uniform
  double delta = 0.875;
  std::uint64_t seed = 0;
  int threads = 1;
  std::string json;
  std::int64_t batch_size = 128;
  double lr = 0.05;
  std::size_t workers = 0;
  std::int64_t train_limit = 0;
  double flip_labels = 0.0;     // share of training labels replaced by another class
  std::string training_record;  // --training-record: per-sample loss statistics (JSONL)
  std::string data_dir = ex::default_fashion_mnist_dir();
  std::string device = "cpu";
  int world_size = 1;
  int rank = 0;
  std::string init;  // c10d::FileStore path shared by the ranks
};

// The policy spec for the command-line flags: --target-saving is the saving
// budget of infobatch and uniform; --prune-ratio is r for them (infobatch's
// budget of 40% is its default; uniform's r is 0.5) and the hard-pruned
// fraction for ucb and epsilon-greedy (0.5); a policy given with parameters
// is used as written.
std::string policy_spec(const Options& o) {
  if (o.policy.find('(') != std::string::npos || o.policy == "full") return o.policy;
  const std::string delta = fmt::format("delta={}", o.delta);
  if (o.policy == "infobatch" || o.policy == "uniform") {
    if (o.target_saving) return fmt::format("{}(save={},{})", o.policy, *o.target_saving, delta);
    if (o.prune_ratio || o.policy == "uniform") {
      return fmt::format("{}(r={},{})", o.policy, o.prune_ratio.value_or(0.5), delta);
    }
    return fmt::format("{}({})", o.policy, delta);
  }
  if (o.policy == "ucb" || o.policy == "epsilon-greedy") {
    return fmt::format("{}(prune={},{})", o.policy, o.prune_ratio.value_or(0.5), delta);
  }
  return fmt::format("{}({})", o.policy, delta);
}

double test_accuracy(ex::Classifier& model, const ex::LabelledImages& test, torch::Device device) {
  torch::NoGradGuard no_grad;
  model.eval();
  std::int64_t correct = 0;
  for (std::int64_t start = 0; start < test.images.size(0); start += 1000) {
    const std::int64_t count = std::min<std::int64_t>(1000, test.images.size(0) - start);
    const auto logits = model.forward(test.images.narrow(0, start, count).to(device));
    correct += logits.argmax(1)
                   .to(torch::kCPU)
                   .eq(test.labels.narrow(0, start, count))
                   .sum()
                   .item<std::int64_t>();
  }
  model.train();
  return static_cast<double>(correct) / static_cast<double>(test.images.size(0));
}

std::shared_ptr<winnow::DynamicPruner> make_pruner(const Options& o, std::uint64_t n) {
  winnow::PrunerOptions pruner_options;
  pruner_options.num_samples = n;
  pruner_options.num_epochs = o.epochs;
  pruner_options.policy = policy_spec(o);
  pruner_options.seed = o.seed;
  pruner_options.world_size = static_cast<std::uint64_t>(o.world_size);
  pruner_options.rank = static_cast<std::uint64_t>(o.rank);
  return std::make_shared<winnow::DynamicPruner>(pruner_options);
}

// What a training step calls besides the model: the loss helper, and after
// backward the gradient averaging across ranks (nothing with one rank).
struct StepHooks {
  std::function<at::Tensor(const at::Tensor&, const at::Tensor&)> pruned_loss;
  std::function<void(torch::nn::Module&)> average_gradients = [](torch::nn::Module&) {};
};

#ifdef WINNOW_TORCH_HAS_DISTRIBUTED
StepHooks distributed_step_hooks(const Options& o,
                                 const std::shared_ptr<winnow::DynamicPruner>& pruner,
                                 torch::Device device) {
  WINNOW_THROW_IF_NOT(device.is_cpu(), "--world-size {}: data-parallel runs use Gloo on the CPU",
                      o.world_size);
  WINNOW_THROW_IF_NOT(!o.init.empty(), "--world-size {} needs --init FILE (shared by the ranks)",
                      o.world_size);
  auto group = winnow::make_gloo_group(o.init, o.world_size, o.rank);
  StepHooks hooks;
  auto helper = std::make_shared<winnow::DistributedPrunedLoss>(pruner, group);
  hooks.pruned_loss = [helper](const at::Tensor& l, const at::Tensor& ids) {
    return (*helper)(l, ids);
  };
  hooks.average_gradients = [group, world = o.world_size](torch::nn::Module& module) {
    // One allreduce of all gradients, flattened into one buffer.
    std::vector<at::Tensor> grads;
    for (auto& p : module.parameters()) {
      if (p.grad().defined()) grads.push_back(p.grad());
    }
    if (grads.empty()) return;
    std::vector<at::Tensor> flat{torch::cat([&] {
      std::vector<at::Tensor> views;
      for (auto& g : grads) views.push_back(g.reshape({-1}));
      return views;
    }())};
    group->allreduce(flat)->wait();
    flat[0].div_(world);
    std::int64_t offset = 0;
    for (auto& g : grads) {
      g.copy_(flat[0].narrow(0, offset, g.numel()).view_as(g));
      offset += g.numel();
    }
  };
  return hooks;
}
#endif

StepHooks make_step_hooks(const Options& o, const std::shared_ptr<winnow::DynamicPruner>& pruner,
                          torch::Device device) {
  if (o.world_size <= 1) {
    StepHooks hooks;
    auto helper = std::make_shared<winnow::PrunedLoss>(pruner, device);
    hooks.pruned_loss = [helper](const at::Tensor& l, const at::Tensor& ids) {
      return (*helper)(l, ids);
    };
    return hooks;
  }
#ifdef WINNOW_TORCH_HAS_DISTRIBUTED
  return distributed_step_hooks(o, pruner, device);
#else
  WINNOW_THROW("--world-size {}: this build has no c10d/Gloo support (install libgloo-dev)",
               o.world_size);
#endif
}

void print_run_header(const Options& o, winnow::DynamicPruner& pruner, std::uint64_t n,
                      torch::Device device) {
  std::cerr << "train_fashion_mnist: " << o.model << ", policy " << pruner.policy_spec() << ", "
            << n << " samples, " << o.epochs << " epochs, " << o.threads << " thread(s), "
            << device;
  if (o.world_size > 1) {
    std::cerr << ", rank " << o.rank << " of " << o.world_size << " ("
              << pruner.steps_this_epoch(static_cast<std::uint64_t>(o.batch_size))
              << " steps in epoch 1)";
  }
  std::cerr << "\n";
  if (const std::string note = pruner.budget_note(); !note.empty()) {
    std::cerr << "note: " << note << "\n";
  }
}

// Cosine decay by epoch: pruned epochs make fewer steps, so the schedule
// follows epochs rather than a step count fixed in advance.
double set_epoch_learning_rate(const Options& o, std::uint64_t epoch,
                               torch::optim::SGD& optimizer) {
  const double lr =
      0.5 * o.lr *
      (1.0 + std::cos(M_PI * static_cast<double>(epoch) / static_cast<double>(o.epochs)));
  for (auto& group : optimizer.param_groups()) {
    static_cast<torch::optim::SGDOptions&>(group.options()).lr(lr);
  }
  return lr;
}

// One epoch's sums on this rank.
struct EpochTotals {
  at::Tensor loss_sum;
  std::uint64_t steps = 0;
};

// Trains one epoch over the loader's batches; adds the time spent in the
// loss helper to `loss_seconds`.
template <typename Loader>
EpochTotals train_epoch(Loader& loader, ex::Classifier& model, torch::optim::SGD& optimizer,
                        const StepHooks& hooks, torch::Device device, double& loss_seconds,
                        std::uint64_t epoch, winnow::TrainingRecord* record) {
  EpochTotals totals{torch::zeros({}, torch::TensorOptions().device(device))};
  for (winnow::IndexedBatch& batch : loader) {
    const auto logits = model.forward(batch.data.to(device));
    const auto per_sample = torch::nn::functional::cross_entropy(
        logits, batch.target.to(device),
        torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
    const auto loss_start = Clock::now();
    const auto loss = hooks.pruned_loss(per_sample, batch.ids);
    loss_seconds += seconds_since(loss_start);
    optimizer.zero_grad();
    loss.backward();
    hooks.average_gradients(model);
    optimizer.step();
    ++totals.steps;
    totals.loss_sum += per_sample.detach().sum();
    if (record != nullptr) {  // --training-record: every sample's loss, for curation
      const auto ids = batch.ids.to(torch::kInt64).contiguous();
      const auto losses = per_sample.detach().to(torch::kCPU, torch::kFloat32).contiguous();
      const auto predicted = logits.detach().argmax(1).to(torch::kCPU, torch::kInt64).contiguous();
      record->add(epoch, reinterpret_cast<const std::uint64_t*>(ids.data_ptr<std::int64_t>()),
                  losses.data_ptr<float>(), static_cast<std::size_t>(ids.numel()),
                  predicted.data_ptr<std::int64_t>());
    }
  }
  return totals;
}

// --training-record: one JSON line a training image, what `winnow
// import-training` takes (key "train-NNNNNN", as in a manifest of the
// training set), with the label it was given and whether it was flipped.
void write_training_record(const std::string& path, const winnow::TrainingRecord& record,
                           const ex::LabelledImages& train,
                           const std::vector<std::int64_t>& flipped) {
  std::ofstream out(path);
  WINNOW_THROW_IF_NOT(out.good(), "cannot write --training-record file '{}'", path);
  std::vector<bool> is_flipped(record.size(), false);
  for (const std::int64_t i : flipped) is_flipped[static_cast<std::size_t>(i)] = true;
  const auto labels = train.labels.to(torch::kInt64).contiguous();
  for (std::size_t i = 0; i < record.size(); ++i) {
    const winnow::SampleTrainingStats s = record.stats(i);
    nlohmann::json row{{"key", fmt::format("train-{:06d}", i)},
                       {"seen", s.seen},
                       {"mean_loss", s.mean_loss},
                       {"loss_trend", s.loss_trend},
                       {"last_loss", s.last_loss},
                       {"last_epoch", s.last_epoch},
                       {"label", labels[static_cast<std::int64_t>(i)].item<std::int64_t>()},
                       {"flipped", static_cast<bool>(is_flipped[i])}};
    if (s.predicted >= 0) row["predicted"] = s.predicted;  // the class predicted in most epochs
    out << row.dump() << "\n";
  }
  WINNOW_THROW_IF_NOT(out.good(), "cannot write --training-record file '{}'", path);
}

// Prints the epoch's progress line and returns its JSON record.
nlohmann::json report_epoch(const Options& o, std::uint64_t epoch, double lr,
                            const EpochTotals& totals, winnow::DynamicPruner& pruner,
                            std::uint64_t n, double elapsed) {
  const bool distributed = o.world_size > 1;
  const winnow::EpochStats& stats = pruner.history().back();
  // forward_samples counts every rank's samples; this rank served 1/W of them.
  const std::uint64_t local_samples =
      stats.forward_samples / static_cast<std::uint64_t>(o.world_size);
  const double mean_loss = totals.loss_sum.item<double>() / static_cast<double>(local_samples);
  std::cerr << fmt::format(
      "{}epoch {:>3}/{} [{:<9}] samples {:>6} ({:5.1f}%)  loss {:.4f}  elapsed {:.1f}s",
      distributed ? fmt::format("rank {}: ", o.rank) : std::string(), epoch + 1, o.epochs,
      winnow::to_string(stats.kind), stats.forward_samples,
      100.0 * static_cast<double>(stats.forward_samples) / static_cast<double>(n), mean_loss,
      elapsed);
  if (distributed) {
    std::cerr << fmt::format("  plan {} -> {} per rank, {} steps, plan hash {:016x}",
                             stats.planned_samples, local_samples, totals.steps,
                             pruner.plan_hash());
  }
  std::cerr << "\n";
  return {{"epoch", epoch},
          {"kind", winnow::to_string(stats.kind)},
          {"forward_samples", stats.forward_samples},
          {"planned_samples", stats.planned_samples},
          {"steps_per_rank", totals.steps},
          {"full_forward_samples", stats.full_forward_samples},
          {"train_loss", mean_loss},
          {"lr", lr},
          {"elapsed_seconds", elapsed}};
}

// Timings of a whole run, in seconds.
struct RunTimes {
  double wall = 0.0;     // the training loop
  double eval = 0.0;     // the test-set evaluation
  double sampler = 0.0;  // in winnow: the sampler and the loss helper
};

// Prints the run's summary line and writes --json (rank 0 only).
void report_run(const Options& o, winnow::DynamicPruner& pruner, torch::Device device,
                std::uint64_t n, std::size_t flipped_labels, double accuracy, const RunTimes& times,
                const nlohmann::json& per_epoch) {
  const winnow::RunStats totals = pruner.totals();
  const nlohmann::json result = {
      {"policy", pruner.policy_spec()},
      {"model", o.model},
      {"epochs", o.epochs},
      {"seed", o.seed},
      {"threads", o.threads},
      {"batch_size", o.batch_size},
      {"lr", o.lr},
      {"device", device.str()},
      {"train_samples", n},
      {"flipped_labels", flipped_labels},
      {"world_size", o.world_size},
      {"test_accuracy", accuracy},
      {"forward_samples", totals.forward_samples},
      {"full_forward_samples", totals.full_forward_samples},
      {"saved_fraction", totals.saved_fraction()},
      {"wall_seconds", times.wall},
      {"eval_seconds", times.eval},
      {"sampler_seconds", times.sampler},
      {"per_epoch", per_epoch},
  };
  if (o.world_size > 1) std::cout << "rank " << o.rank << ": ";
  std::cout << fmt::format(
      "{} {} seed {}: test accuracy {:.4f}, forward samples {} of {} (saved {:.1f}%), "
      "train {:.1f}s, in winnow {:.2f}s\n",
      o.model, pruner.policy_spec(), o.seed, accuracy, totals.forward_samples,
      totals.full_forward_samples, 100.0 * totals.saved_fraction(), times.wall,
      result["sampler_seconds"].get<double>());
  if (!o.json.empty() && o.rank == 0) {
    std::ofstream file(o.json);
    WINNOW_THROW_IF_NOT(file.good(), "cannot write --json file '{}'", o.json);
    file << result.dump(2) << "\n";
  }
}

int run(const Options& o) {
  torch::set_num_threads(o.threads);
  torch::manual_seed(o.seed);
  const torch::Device device(o.device);
  if (device.is_cuda() && !torch::cuda::is_available()) {
    WINNOW_THROW("--device {}: this LibTorch has no CUDA support or no GPU is visible", o.device);
  }

  ex::LabelledImages train = ex::load_fashion_mnist(o.data_dir, ex::Split::Train, o.train_limit);
  // Each seed flips its own set, the same for every policy run with that seed.
  const auto flipped = ex::flip_labels(train, o.flip_labels, o.seed + 1000);
  const ex::LabelledImages test = ex::load_fashion_mnist(o.data_dir, ex::Split::Test);
  const auto n = static_cast<std::uint64_t>(train.images.size(0));

  auto pruner = make_pruner(o, n);
  winnow::PlanSampler sampler(pruner);
  auto loader = torch::data::make_data_loader(
      winnow::IndexedTensorDataset(train.images, train.labels), sampler,
      torch::data::DataLoaderOptions()
          .batch_size(static_cast<std::size_t>(o.batch_size))
          .workers(o.workers));
  const StepHooks hooks = make_step_hooks(o, pruner, device);

  auto model = ex::make_classifier(o.model);
  model->to(device);
  torch::optim::SGD optimizer(
      model->parameters(),
      torch::optim::SGDOptions(o.lr).momentum(0.9).nesterov(true).weight_decay(5e-4));

  std::unique_ptr<winnow::TrainingRecord> record;
  if (!o.training_record.empty()) record = std::make_unique<winnow::TrainingRecord>(n);
  print_run_header(o, *pruner, n, device);
  nlohmann::json per_epoch = nlohmann::json::array();
  double loss_seconds = 0.0;
  const auto start = Clock::now();
  for (std::uint64_t epoch = 0; epoch < o.epochs; ++epoch) {
    const double lr = set_epoch_learning_rate(o, epoch, optimizer);
    const EpochTotals totals =
        train_epoch(*loader, *model, optimizer, hooks, device, loss_seconds, epoch, record.get());
    per_epoch.push_back(report_epoch(o, epoch, lr, totals, *pruner, n, seconds_since(start)));
  }
  RunTimes times;
  times.wall = seconds_since(start);
  const auto eval_start = Clock::now();
  const double accuracy = test_accuracy(*model, test, device);
  times.eval = seconds_since(eval_start);
  times.sampler = sampler.seconds_spent() + loss_seconds;
  report_run(o, *pruner, device, n, flipped.size(), accuracy, times, per_epoch);
  if (record) write_training_record(o.training_record, *record, train, flipped);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Train a Fashion-MNIST classifier with winnow's dynamic data pruning"};
  app.set_version_flag("--version", std::string("train_fashion_mnist ") + winnow::kVersion);
  app.add_option("--model", o.model, "mlp or cnn")->check(CLI::IsMember({"mlp", "cnn"}));
  app.add_option("--policy", o.policy,
                 "full, infobatch, infobatch-quantile, uniform, ucb, epsilon-greedy, or a full "
                 "spec such as 'infobatch(r=0.6,delta=0.85)'");
  app.add_option("--epochs", o.epochs, "epochs of the full-data run")->check(CLI::PositiveNumber);
  app.add_option("--prune-ratio", o.prune_ratio,
                 "r for infobatch/uniform (infobatch's default is a 40% saving budget, "
                 "uniform's r 0.5), pruned fraction for ucb/epsilon-greedy (0.5)");
  app.add_option("--target-saving", o.target_saving,
                 "saving budget for infobatch/uniform: the share of the run's forward samples "
                 "to skip")
      ->excludes("--prune-ratio");
  app.add_option("--delta", o.delta, "share of epochs that may prune; the rest anneal on all data");
  app.add_option("--seed", o.seed, "seed for the model and the sampler");
  app.add_option("--threads", o.threads, "torch CPU threads")->check(CLI::PositiveNumber);
  app.add_option("--json", o.json, "write the results to this file");
  app.add_option("--training-record", o.training_record,
                 "write each training image's loss statistics (JSON lines) for winnow "
                 "import-training");
  app.add_option("--batch-size", o.batch_size, "samples per step")->check(CLI::PositiveNumber);
  app.add_option("--lr", o.lr, "peak learning rate (SGD, Nesterov momentum 0.9, cosine by epoch)");
  app.add_option("--workers", o.workers, "DataLoader worker threads");
  app.add_option("--train-limit", o.train_limit, "use only the first N training images (0: all)");
  app.add_option("--flip-labels", o.flip_labels,
                 "give this share of the training labels another class (label-noise experiments; "
                 "the test set stays clean)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--data", o.data_dir, "folder with the Fashion-MNIST IDX files");
  app.add_option("--device", o.device, "cpu or cuda");
  app.add_option("--world-size", o.world_size, "data-parallel processes (c10d/Gloo on the CPU)")
      ->check(CLI::PositiveNumber);
  app.add_option("--rank", o.rank, "this process's rank, 0 to world-size - 1")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--init", o.init,
                 "c10d FileStore path shared by the ranks (remove it before a new run)");
  CLI11_PARSE(app, argc, argv);
  if (o.rank >= o.world_size) {
    std::cerr << "train_fashion_mnist: --rank " << o.rank << " is out of range for --world-size "
              << o.world_size << "\n";
    return 1;
  }
  try {
    return run(o);
  } catch (const winnow::Error& e) {
    std::cerr << "train_fashion_mnist: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "train_fashion_mnist: internal error: " << e.what() << "\n";
    return 2;
  }
}
