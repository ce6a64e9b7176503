#include "winnow/curation/review/consensus_labels.h"

#include <algorithm>
#include <vector>

namespace winnow::curation::review {

namespace {

// Every duplicate's original, followed to the end of the chain (an original
// is never itself a duplicate when it is chosen, but a later revisit could
// make it one).
std::unordered_map<std::int64_t, std::int64_t> originals_of_duplicates(
    store::MetadataStore& store) {
  std::unordered_map<std::int64_t, std::int64_t> original;
  for (store::SampleStatus status :
       {store::SampleStatus::duplicate_exact, store::SampleStatus::duplicate_near}) {
    store.for_each_sample([&](const store::SampleRecord& s) { original[s.id] = *s.duplicate_of; },
                          status);
  }
  for (auto& [id, root] : original) {
    for (std::size_t hops = 0; hops < original.size(); ++hops) {  // bounded: no cycles
      auto next = original.find(root);
      if (next == original.end()) break;
      root = next->second;
    }
  }
  return original;
}

}  // namespace

labels::DawidSkeneOptions consensus_options() {
  labels::DawidSkeneOptions options;
  options.diagonal_prior = kConsensusDiagonalPrior;
  return options;
}

int consensus_neighbours(int label_k) {
  return std::min(label_k, kConsensusNeighbours);
}

ConsensusLabels consensus_labels(store::MetadataStore& store,
                                 const labels::DawidSkeneOptions& options,
                                 const std::vector<ExtraVoter>& extra) {
  // A duplicate shows the same image as its original, so its annotations are
  // more opinions on the original: the item is the original, with every
  // annotation of it and of its duplicates (the original's first).
  const std::unordered_map<std::int64_t, std::int64_t> original = originals_of_duplicates(store);
  struct Opinion {
    std::int64_t item_sample;
    int annotator;
    std::int64_t label;
    bool from_duplicate;
  };
  std::vector<Opinion> opinions;
  // Extra voter v is annotator v; the store's annotators (contributor id, -1:
  // unknown) are numbered after them as they are met.
  std::unordered_map<std::int64_t, int> annotator_index;
  AnnotationsFingerprint read;
  store.for_each_annotation([&](const store::MetadataStore::AnnotationRow& row) {
    read.add(row);
    const auto dup = original.find(row.sample_id);
    const std::int64_t who = row.annotator_id.value_or(-1);
    auto [it, fresh] =
        annotator_index.emplace(who, static_cast<int>(extra.size() + annotator_index.size()));
    opinions.push_back({dup == original.end() ? row.sample_id : dup->second, it->second, row.label,
                        dup != original.end()});
  });
  std::stable_sort(opinions.begin(), opinions.end(), [](const Opinion& a, const Opinion& b) {
    return a.item_sample < b.item_sample;
  });

  // Items are the annotated originals in id order: their annotations, then
  // the extra voters' votes on them.
  std::vector<std::int64_t> item_sample;
  std::vector<std::int64_t> labels;  // per annotation, the store's label value
  std::vector<int> annotators;
  std::vector<std::size_t> offsets{0};
  std::vector<std::size_t> duplicate_annotations;  // per item
  std::vector<std::size_t> extra_votes(extra.size(), 0);
  auto close_item = [&] {
    for (std::size_t v = 0; v < extra.size(); ++v) {
      auto vote = extra[v].votes.find(item_sample.back());
      if (vote == extra[v].votes.end()) continue;
      annotators.push_back(static_cast<int>(v));
      labels.push_back(vote->second);
      ++extra_votes[v];
    }
    offsets.push_back(labels.size());
  };
  for (const Opinion& v : opinions) {
    if (item_sample.empty() || item_sample.back() != v.item_sample) {
      if (!item_sample.empty()) close_item();
      item_sample.push_back(v.item_sample);
      duplicate_annotations.push_back(0);
    }
    annotators.push_back(v.annotator);
    labels.push_back(v.label);
    duplicate_annotations.back() += v.from_duplicate;
  }
  if (!item_sample.empty()) close_item();
  ConsensusLabels out;
  out.annotations_read = read;
  if (labels.empty()) return out;

  // Classes: the label values in use, ascending (ties go to the first).
  std::vector<std::int64_t> classes(labels);
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  labels::CrowdLabels crowd;
  crowd.classes = classes.size();
  crowd.annotators = extra.size() + annotator_index.size();
  crowd.offsets = offsets;
  crowd.annotator = annotators;
  crowd.label.reserve(labels.size());
  for (std::int64_t l : labels) {
    crowd.label.push_back(
        static_cast<int>(std::lower_bound(classes.begin(), classes.end(), l) - classes.begin()));
  }

  const labels::DawidSkeneResult ds = labels::dawid_skene(crowd, options);
  out.annotators = crowd.annotators;
  out.extra_votes = extra_votes;
  for (std::size_t v = 0; v < extra.size(); ++v)
    out.extra_accuracy.push_back(ds.expected_accuracy[v]);
  for (const auto& [contributor, index] : annotator_index) {
    out.annotator_accuracy[contributor] = ds.expected_accuracy[static_cast<std::size_t>(index)];
  }
  out.classes = crowd.classes;
  out.iterations = ds.iterations;
  out.converged = ds.converged;
  for (std::size_t i = 0; i < item_sample.size(); ++i) {
    // The item's extra votes are its entries from annotators 0 .. extra.size() - 1.
    const auto votes = static_cast<std::size_t>(
        std::count_if(annotators.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                      annotators.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]),
                      [&](int a) { return static_cast<std::size_t>(a) < extra.size(); }));
    const std::int64_t label = classes[static_cast<std::size_t>(ds.consensus[i])];
    std::map<std::int64_t, std::int64_t> said;  // the annotations' labels (not extra votes)
    for (std::size_t a = offsets[i]; a < offsets[i + 1]; ++a) {
      if (static_cast<std::size_t>(annotators[a]) >= extra.size()) ++said[labels[a]];
    }
    const std::int64_t majority = *labels::majority_label(said, label);  // a tie: the consensus's
    out.by_sample[item_sample[i]] = {label,
                                     ds.consensus_posterior[i],
                                     offsets[i + 1] - offsets[i] - votes,
                                     duplicate_annotations[i],
                                     votes,
                                     majority};
    out.duplicate_annotations += duplicate_annotations[i];
  }
  return out;
}

}  // namespace winnow::curation::review
