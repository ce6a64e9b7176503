// What to annotate next, and by whom (`winnow annotate-next`): the tasks of
// one request, each a sample and, with a pool, an annotator, chosen on one
// scale: the expected gain in the accuracy of the sample's consensus label
// per unit cost (docs/annotation-campaign.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/dataset/dataset.h"

namespace winnow::curation::annotate {

// One annotator a request may give tasks to (POOL.csv: annotator,cost[,capacity]).
struct PoolAnnotator {
  std::string name;
  double cost = 1.0;                    // per label, > 0
  std::optional<std::size_t> capacity;  // most tasks in this request; unset: no limit
};

// The pool file: CSV with a header naming `annotator` and optionally `cost`
// and `capacity`. Throws winnow::Error (invalid_input) naming the file and
// line for a missing column, a cost that is not a positive number, a
// capacity that is not a whole number, or an annotator named twice.
std::vector<PoolAnnotator> read_annotator_pool(const std::string& path);

struct TaskRequest {
  std::size_t budget = 100;  // most tasks
  // The most the tasks may cost together. Unset: the tasks are taken by
  // expected gain per unit cost. Set: the tasks with the largest total gain
  // that cost no more (gain less a price per unit cost, at the lowest price
  // that keeps within it).
  std::optional<double> max_cost;
  std::vector<PoolAnnotator> pool;  // empty: items only, for any annotator
  // What an annotator without history is taken to be: this accuracy on
  // every class (the rest spread evenly), worth prior_labels labels; an
  // annotator's estimated confusion is shrunk towards it by his labels.
  double prior_accuracy = 0.7;
  double prior_labels = 10.0;
  // With a pool: this share of each annotator's tasks goes to calibration
  // items (the surest consensus he has not answered) instead of his last
  // ones, so that his answers keep grading him.
  double calibration = 0.1;
  // A model's out-of-sample predicted probabilities (as `ingest --pred-probs`
  // reads them): its most probable class is one more voter on each sample it
  // covers, weighed by Dawid-Skene like any annotator. Empty: none.
  std::string pred_probs;
};

struct AnnotationTask {
  std::int64_t sample_id = 0;
  std::string item;       // the sample's key
  std::string annotator;  // "" without a pool
  std::string reason;
  double score = 0.0;  // expected gain in consensus accuracy per unit cost
  double gain = 0.0;   // expected gain in the probability the consensus is right
  double cost = 1.0;
  std::string likely_label;  // the consensus label now ("" when none)
  double posterior = 0.0;    // its posterior
  std::size_t annotations = 0;
};

struct TaskPlan {
  std::vector<AnnotationTask> tasks;  // best first
  std::size_t candidates = 0;         // samples considered
  double expected_gain = 0.0;         // sum over the tasks
  double cost = 0.0;                  // sum over the tasks
};

// The request's tasks, deterministic for a given store: the samples that
// may be annotated (accepted and label_issue, not reviewed by a person),
// their annotations' Dawid-Skene consensus with the label each one's
// neighbours suggest (and a sample's own label when it has no annotations)
// as more voters, and for each sample the pool annotator with the largest
// expected gain per cost who has not annotated it yet and has capacity left.
TaskPlan plan_annotation_tasks(Dataset& dataset, const TaskRequest& request);

}  // namespace winnow::curation::annotate
