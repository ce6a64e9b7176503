// _winnow: the Python binding of the pruning core (winnow::pruning only, no
// LibTorch). The Python package `winnow` (plugins/python/winnow/) builds its
// torch Sampler and loss helper on this thin layer.
//
// Arrays cross as numpy buffers: ids as int64, losses and weights as float32.
// Every winnow::Error, of any kind, becomes winnow.Error (a ValueError) with the
// same message and its kind as the attribute `kind` ("corrupt", "io", ...).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "winnow/error.h"
#include "winnow/pruning/training_record.h"
#include "winnow/pruning/dynamic_pruner.h"
#include "winnow/pruning/policy_registry.h"
#include "winnow/pruning/pruner_io.h"
#include "winnow/version.h"

namespace py = pybind11;

namespace {

using winnow::DynamicPruner;
using IdArray = py::array_t<std::int64_t, py::array::c_style>;
using FloatArray = py::array_t<float, py::array::c_style>;

// A 1-D integer array as contiguous int64 ids, each checked against
// [0, num_samples): the message names the first bad id and its position.
IdArray checked_ids(const py::array& raw, std::uint64_t num_samples, const char* what) {
  const char kind = raw.dtype().kind();
  WINNOW_THROW_IF_NOT(kind == 'i' || kind == 'u', "{}: ids must be integers, got dtype {}", what,
                      std::string(py::str(raw.dtype())));
  WINNOW_THROW_IF_NOT(raw.ndim() == 1, "{}: ids must be 1-D, got {} dimensions", what, raw.ndim());
  if (kind == 'u' && raw.itemsize() == 8) {
    // uint64 above 2^63 would wrap to negative int64: check before converting.
    const auto u =
        py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>::ensure(raw);
    const std::uint64_t* p = u.data();
    for (py::ssize_t i = 0; i < u.size(); ++i) {
      WINNOW_THROW_IF_NOT(p[i] < num_samples,
                          "{}: sample id {} at position {} is out of range (the data set has {} "
                          "samples)",
                          what, p[i], i, num_samples);
    }
  }
  IdArray ids = IdArray::ensure(raw);
  WINNOW_THROW_IF_NOT(ids, "{}: cannot read the ids as int64", what);
  const std::int64_t* p = ids.data();
  for (py::ssize_t i = 0; i < ids.size(); ++i) {
    WINNOW_THROW_IF_NOT(p[i] >= 0 && static_cast<std::uint64_t>(p[i]) < num_samples,
                        "{}: sample id {} at position {} is out of range (the data set has {} "
                        "samples)",
                        what, p[i], i, num_samples);
  }
  return ids;
}

const std::uint64_t* as_unsigned(const IdArray& ids) {
  // Checked non-negative, so the bit patterns are the same ids.
  return reinterpret_cast<const std::uint64_t*>(ids.data());
}

FloatArray checked_losses(const py::array& raw, py::ssize_t count, const char* what) {
  const char kind = raw.dtype().kind();
  WINNOW_THROW_IF_NOT(kind == 'f', "{}: losses must be floating point, got dtype {}", what,
                      std::string(py::str(raw.dtype())));
  WINNOW_THROW_IF_NOT(raw.ndim() == 1, "{}: losses must be 1-D (one per sample), got {} dimensions",
                      what, raw.ndim());
  WINNOW_THROW_IF_NOT(raw.shape(0) == count, "{}: {} losses but {} ids; each sample needs its id",
                      what, raw.shape(0), count);
  return py::array_t<float, py::array::c_style | py::array::forcecast>::ensure(raw);
}

IdArray copy_ids(const std::uint64_t* ids, std::size_t count) {
  IdArray out(static_cast<py::ssize_t>(count));
  std::copy(ids, ids + count, reinterpret_cast<std::uint64_t*>(out.mutable_data()));
  return out;
}

py::dict stats_dict(const winnow::EpochStats& e) {
  py::dict d;
  d["epoch"] = e.epoch;
  d["kind"] = winnow::to_string(e.kind);
  d["planned_samples"] = e.planned_samples;
  d["forward_samples"] = e.forward_samples;
  d["full_forward_samples"] = e.full_forward_samples;
  d["candidates"] = e.candidates;
  d["saved_fraction"] = e.saved_fraction();
  return d;
}

py::bytes to_bytes(DynamicPruner& pruner) {
  pruner.sync_scores();  // scores kept on a device come home first
  std::ostringstream out;
  winnow::write_pruner(pruner, out);
  return py::bytes(out.str());
}

DynamicPruner from_bytes(const py::bytes& data, const std::string& source) {
  std::istringstream in{std::string(data)};
  return winnow::read_pruner(in, source);
}

// The class object the bind_* steps below add methods to.
using PrunerClass = py::class_<DynamicPruner>;

// winnow::Error of every kind becomes winnow.Error (a ValueError) with `kind` set.
void bind_error_type(py::module_& m) {
  static py::exception<winnow::Error> error_type(m, "Error", PyExc_ValueError);
  error_type.attr("kind") = "invalid_input";  // for errors raised in Python
  py::register_exception_translator([](std::exception_ptr thrown) {
    try {
      if (thrown) std::rethrow_exception(thrown);
    } catch (const winnow::Error& e) {
      py::object error = py::reinterpret_borrow<py::object>(error_type.ptr())(e.what());
      error.attr("kind") = winnow::to_string(e.kind());
      PyErr_SetObject(error_type.ptr(), error.ptr());
    }
  });
}

void bind_constructor(PrunerClass& pruner) {
  pruner.def(py::init([](std::uint64_t num_samples, std::uint64_t num_epochs,
                         const std::string& policy, std::uint64_t seed, float initial_score,
                         std::uint64_t step_budget, std::uint64_t batch_size,
                         std::uint64_t world_size, std::uint64_t rank, bool allow_negative_losses) {
               winnow::PrunerOptions o;
               o.num_samples = num_samples;
               o.num_epochs = num_epochs;
               o.policy = policy;
               o.seed = seed;
               o.initial_score = initial_score;
               o.step_budget = step_budget;
               o.batch_size = batch_size;
               o.world_size = world_size;
               o.rank = rank;
               o.allow_negative_losses = allow_negative_losses;
               return DynamicPruner(o);
             }),
             py::arg("num_samples"), py::arg("num_epochs"), py::arg("policy") = "infobatch",
             py::arg("seed") = 0, py::arg("initial_score") = 1.0f, py::arg("step_budget") = 0,
             py::arg("batch_size") = 0, py::arg("world_size") = 1, py::arg("rank") = 0,
             py::kw_only(), py::arg("allow_negative_losses") = false,
             "world_size > 1 makes this pruner rank `rank` of a data-parallel run: it builds the "
             "same global plan as every rank and serves its shard (see shard_ids). update() "
             "rejects negative losses unless allow_negative_losses is True.");
}

// Building, serving and finishing an epoch's plan.
void bind_epoch_lifecycle(PrunerClass& pruner) {
  pruner
      .def(
          "begin_epoch", [](DynamicPruner& p) { return p.begin_epoch().size(); },
          "Builds the coming epoch's plan (idempotent until some of it is served); returns its "
          "length.")
      .def(
          "plan_size", [](DynamicPruner& p) { return p.plan().size(); },
          "Length of the current epoch's plan (built on first use).")
      .def("plan_kind",
           [](DynamicPruner& p) { return std::string(winnow::to_string(p.plan().kind)); })
      .def(
          "plan_ids",
          [](DynamicPruner& p) {
            const winnow::EpochPlan& plan = p.plan();
            return copy_ids(plan.ids.data(), plan.ids.size());
          },
          "A copy of the current plan's ids, in visiting order (int64).")
      .def(
          "shard_ids",
          [](DynamicPruner& p) {
            const std::vector<std::uint64_t>& shard = p.shard();
            return copy_ids(shard.data(), shard.size());
          },
          "A copy of this rank's shard of the current plan (int64): ceil(P / W) ids, the plan "
          "wrapped around; the plan itself when world_size is 1.")
      .def(
          "shard_size", [](DynamicPruner& p) { return p.shard().size(); },
          "Length of this rank's shard of the current plan (built on first use).")
      .def("plan_hash", &DynamicPruner::plan_hash,
           "XXH64 of the current plan (ids, weight codes, palette), equal on ranks that serve "
           "the same plan.")
      .def(
          "plan_weights",
          [](DynamicPruner& p) {
            const winnow::EpochPlan& plan = p.plan();
            FloatArray out(static_cast<py::ssize_t>(plan.size()));
            float* w = out.mutable_data();
            for (std::uint64_t i = 0; i < plan.size(); ++i) w[i] = plan.weight_at(i);
            return out;
          },
          "The current plan's weights, position by position (float32).")
      .def(
          "next_batch",
          [](DynamicPruner& p, std::uint64_t batch_size) -> py::object {
            const auto batch = p.next_batch(batch_size);
            if (!batch) return py::none();
            return copy_ids(batch->ids, batch->size);
          },
          py::arg("batch_size"),
          "The next ids of the current plan (int64 array), or None once it is served.")
      .def("finish_epoch", &DynamicPruner::finish_epoch);
}

// Scores, step by step: losses recorded, label issues flagged.
void bind_score_updates(PrunerClass& pruner) {
  pruner
      .def(
          "update",
          [](DynamicPruner& p, const py::array& ids, const py::array& losses) {
            const IdArray id = checked_ids(ids, p.num_samples(), "update");
            const FloatArray loss = checked_losses(losses, id.size(), "update");
            p.update(as_unsigned(id), loss.data(), static_cast<std::size_t>(id.size()));
          },
          py::arg("ids"), py::arg("losses"),
          "Records raw per-sample losses as scores; checks everything first (ids in range, "
          "losses finite and, unless allowed, not negative) and changes nothing on error.")
      .def(
          "update_batch_loss",
          [](DynamicPruner& p, const py::array& ids, const py::array& batch_losses,
             float momentum) {
            const IdArray id = checked_ids(ids, p.num_samples(), "update_batch_loss");
            const FloatArray loss = checked_losses(batch_losses, id.size(), "update_batch_loss");
            p.update_batch_losses(as_unsigned(id), loss.data(), static_cast<std::size_t>(id.size()),
                                  momentum);
          },
          py::arg("ids"), py::arg("batch_losses"),
          py::arg("momentum") = DynamicPruner::kDefaultBatchLossMomentum,
          "Batch-loss-score mode: blends batch_losses[i], the mean loss of the batch ids[i] was "
          "in, into its score: score = momentum * score + (1 - momentum) * batch_loss.")
      .def(
          "flag_label_issues",
          [](DynamicPruner& p, const py::array& ids) {
            const IdArray id = checked_ids(ids, p.num_samples(), "flag_label_issues");
            p.flag_label_issues(as_unsigned(id), static_cast<std::size_t>(id.size()));
          },
          py::arg("ids"),
          "Noise-aware policies (noisy=P in the spec): down-weights these samples (label "
          "issues) from the next plan on.")
      .def(
          "trust_labels",
          [](DynamicPruner& p, const py::array& ids) {
            const IdArray id = checked_ids(ids, p.num_samples(), "trust_labels");
            p.trust_labels(as_unsigned(id), static_cast<std::size_t>(id.size()));
          },
          py::arg("ids"),
          "Noise-aware policies: these samples' labels were confirmed by a person; they are "
          "never down-weighted, and a flag on them is dropped.");
}

// The current plan's loss weights.
void bind_weights(PrunerClass& pruner) {
  pruner
      .def(
          "mean_weight",
          [](const DynamicPruner& p, const py::array& ids) {
            const IdArray id = checked_ids(ids, p.num_samples(), "mean_weight");
            return p.mean_weight(as_unsigned(id), static_cast<std::size_t>(id.size()));
          },
          py::arg("ids"), "The mean loss weight of a batch (its mean loss's rescaling).")
      .def(
          "weights",
          [](const DynamicPruner& p, const py::array& ids) {
            const IdArray id = checked_ids(ids, p.num_samples(), "weights");
            FloatArray out(id.size());
            p.weights(as_unsigned(id), static_cast<std::size_t>(id.size()), out.mutable_data());
            return out;
          },
          py::arg("ids"), "The current plan's loss weights of `ids` (float32).")
      .def(
          "weighted_update",
          [](DynamicPruner& p, const py::array& ids, const py::array& losses) {
            const IdArray id = checked_ids(ids, p.num_samples(), "update");
            const FloatArray loss = checked_losses(losses, id.size(), "update");
            const auto count = static_cast<std::size_t>(id.size());
            FloatArray out(id.size());
            p.weights(as_unsigned(id), count, out.mutable_data());
            p.update(as_unsigned(id), loss.data(), count);
            return out;
          },
          py::arg("ids"), py::arg("losses"),
          "weights(ids) then update(ids, losses), in one call; returns the weights.")
      .def(
          "all_weights",
          [](const DynamicPruner& p) {
            FloatArray out(static_cast<py::ssize_t>(p.num_samples()));
            float* w = out.mutable_data();
            const winnow::WeightTable& table = p.weight_table();
            for (std::uint64_t id = 0; id < p.num_samples(); ++id) w[id] = table[id];
            return out;
          },
          "Every sample's weight under the current plan (float32, N entries).");
}

// The scores read and assigned whole.
void bind_scores(PrunerClass& pruner) {
  pruner
      .def(
          "scores",
          [](const DynamicPruner& p) {
            return FloatArray(static_cast<py::ssize_t>(p.num_samples()), p.scores().data());
          },
          "A copy of every sample's score (float32, N entries).")
      .def(
          "scores_of",
          [](const DynamicPruner& p, const py::array& ids) {
            const IdArray id = checked_ids(ids, p.num_samples(), "scores_of");
            FloatArray out(id.size());
            float* o = out.mutable_data();
            for (py::ssize_t i = 0; i < id.size(); ++i) o[i] = p.scores()[as_unsigned(id)[i]];
            return out;
          },
          py::arg("ids"))
      .def(
          "assign_scores",
          [](DynamicPruner& p, const py::array& scores) {
            const FloatArray s =
                checked_losses(scores, static_cast<py::ssize_t>(p.num_samples()), "assign_scores");
            p.assign_scores(s.data(), static_cast<std::uint64_t>(s.size()));
          },
          py::arg("scores"));
}

// Scores and weights, step by step.
void bind_per_step(PrunerClass& pruner) {
  bind_score_updates(pruner);
  bind_weights(pruner);
  bind_scores(pruner);
}

// Sizes, options and statistics.
void bind_read_only_state(PrunerClass& pruner) {
  pruner.def("steps_this_epoch", &DynamicPruner::steps_this_epoch, py::arg("batch_size"))
      .def("total_planned_steps", &DynamicPruner::total_planned_steps, py::arg("batch_size"))
      // read-only state
      .def_property_readonly("num_samples", &DynamicPruner::num_samples)
      .def_property_readonly("num_epochs", &DynamicPruner::num_epochs)
      .def_property_readonly("epoch", &DynamicPruner::epoch)
      .def_property_readonly("seed", &DynamicPruner::seed)
      .def_property_readonly("world_size", &DynamicPruner::world_size)
      .def_property_readonly("rank", &DynamicPruner::rank)
      .def_property_readonly("allow_negative_losses", &DynamicPruner::allows_negative_losses)
      .def_property_readonly("delta", &DynamicPruner::delta)
      .def_property_readonly("fixed_step", &DynamicPruner::fixed_step)
      .def_property_readonly("steps_served", &DynamicPruner::steps_served)
      .def_property_readonly("position", &DynamicPruner::position)
      .def_property_readonly("epoch_finished", &DynamicPruner::epoch_finished)
      .def_property_readonly("annealing_epoch", &DynamicPruner::annealing_epoch)
      .def_property_readonly("plan_generation", &DynamicPruner::plan_generation)
      .def_property_readonly("state_bytes", &DynamicPruner::state_bytes)
      .def("policy_spec", &DynamicPruner::policy_spec,
           "The policy spec with every parameter spelled out, delta included.")
      .def("budget_note", &DynamicPruner::budget_note,
           "For a saving budget too large for the run's length, what that costs; else ''.")
      .def(
          "history",
          [](const DynamicPruner& p) {
            py::list out;
            for (const winnow::EpochStats& e : p.history()) out.append(stats_dict(e));
            return out;
          },
          "Statistics of every finished epoch, as dicts.")
      .def("totals", [](const DynamicPruner& p) {
        const winnow::RunStats t = p.totals();
        py::dict d;
        d["epochs"] = t.epochs;
        d["forward_samples"] = t.forward_samples;
        d["full_forward_samples"] = t.full_forward_samples;
        d["saved_fraction"] = t.saved_fraction();
        return d;
      });
}

// Scores kept elsewhere (a device).
void bind_score_sync(PrunerClass& pruner) {
  pruner
      .def(
          "set_score_sync",
          [](DynamicPruner& p, py::object hook) {
            if (hook.is_none()) {
              p.set_score_sync(nullptr);
              return;
            }
            // The hook takes no argument: it calls assign_scores on its own
            // reference to this pruner.
            py::function f = hook;
            p.set_score_sync([f](DynamicPruner&) {
              py::gil_scoped_acquire gil;
              f();
            });
          },
          py::arg("hook"),
          "Registers a callable run before every plan and on sync_scores() (None removes it).")
      .def_property_readonly("has_score_sync", &DynamicPruner::has_score_sync)
      .def("sync_scores", &DynamicPruner::sync_scores);
}

// The whole state as bytes or a file.
void bind_persistence(PrunerClass& pruner) {
  pruner.def("to_bytes", &to_bytes, "The whole state (write_pruner format, checksummed).")
      .def_static("from_bytes", &from_bytes, py::arg("data"), py::arg("source") = "bytes",
                  "A pruner restored from to_bytes() output; corrupt data raises winnow.Error.")
      .def(
          "restore",
          [](DynamicPruner& p, const py::bytes& data, const std::string& source) {
            p.restore(from_bytes(data, source));
          },
          py::arg("data"), py::arg("source") = "bytes",
          "Takes over the state in `data`, keeping this pruner's score-sync hook.")
      .def("save", &DynamicPruner::save, py::arg("path"))
      .def_static("load", &DynamicPruner::load, py::arg("path"));
}

// TrainingRecord: per-sample statistics of a run's losses (training_record.h).
void bind_training_record(py::module_& m) {
  py::class_<winnow::TrainingRecord>(m, "TrainingRecord",
                                     "Per-sample statistics of the losses a run saw.")
      .def(py::init<std::size_t>(), py::arg("num_samples"))
      .def("__len__", &winnow::TrainingRecord::size)
      .def(
          "add",
          [](winnow::TrainingRecord& r, std::uint64_t epoch, const py::array& ids,
             const py::array& losses, const std::optional<py::array>& predicted) {
            const IdArray id = checked_ids(ids, r.size(), "TrainingRecord.add");
            const FloatArray loss = checked_losses(losses, id.size(), "TrainingRecord.add");
            IdArray classes;
            if (predicted) {
              WINNOW_THROW_IF_NOT(
                  predicted->dtype().kind() == 'i' || predicted->dtype().kind() == 'u',
                  "TrainingRecord.add: predicted classes must be integers");
              classes = IdArray::ensure(*predicted);
              WINNOW_THROW_IF_NOT(classes && classes.ndim() == 1 && classes.size() == id.size(),
                                  "TrainingRecord.add: {} predicted classes for {} ids",
                                  predicted->size(), id.size());
            }
            r.add(epoch, as_unsigned(id), loss.data(), static_cast<std::size_t>(id.size()),
                  predicted ? classes.data() : nullptr);
          },
          py::arg("epoch"), py::arg("ids"), py::arg("losses"), py::arg("predicted") = py::none(),
          "Records the losses of samples `ids` seen in `epoch`, and the classes the model "
          "predicted for them when given.")
      .def(
          "stats",
          [](const winnow::TrainingRecord& r, std::uint64_t id) {
            const winnow::SampleTrainingStats s = r.stats(id);
            py::dict out;
            out["seen"] = s.seen;
            out["mean_loss"] = s.mean_loss;
            out["loss_trend"] = s.loss_trend;
            out["last_loss"] = s.last_loss;
            out["last_epoch"] = s.last_epoch;
            out["predicted"] = s.predicted >= 0 ? py::object(py::int_(s.predicted)) : py::none();
            return out;
          },
          py::arg("id"),
          "Sample `id`'s seen, mean_loss, loss_trend, last_loss, last_epoch, predicted.");
}

}  // namespace

PYBIND11_MODULE(_winnow, m) {
  m.doc() = "winnow's pruning core (DynamicPruner) for Python; use the `winnow` package";
  m.attr("__version__") = winnow::kVersion;  // the C++ build's version: one number for both

  bind_error_type(m);

  m.def(
      "policy_names", [] { return winnow::PolicyRegistry::instance().names(); },
      "Names of the registered pruning policies.");

  PrunerClass pruner(m, "DynamicPruner",
                     "One pruning run: scores, epoch plans, batches, weights, statistics.");
  bind_constructor(pruner);
  bind_epoch_lifecycle(pruner);
  bind_per_step(pruner);
  bind_read_only_state(pruner);
  bind_score_sync(pruner);
  bind_persistence(pruner);
  bind_training_record(m);
}
