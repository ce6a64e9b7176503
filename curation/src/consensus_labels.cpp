#include "winnow/curation/consensus_labels.h"

#include <algorithm>
#include <vector>

namespace winnow::curation {

ConsensusLabels consensus_labels(MetadataStore& store, const DawidSkeneOptions& options,
                                 const std::vector<ExtraVoter>& extra) {
  // Items are the annotated samples, in the order annotations arrive (by sample).
  std::vector<std::int64_t> item_sample;
  std::vector<std::int64_t> labels;  // per annotation, the store's label value
  std::vector<int> annotators;
  std::vector<std::size_t> offsets{0};
  // Extra voter v is annotator v; the store's annotators (contributor id, -1:
  // unknown) are numbered after them as they are met.
  std::unordered_map<std::int64_t, int> annotator_index;
  std::vector<std::size_t> extra_votes(extra.size(), 0);
  auto close_item = [&] {  // the extra votes of the last item, after its annotations
    if (item_sample.empty()) return;
    for (std::size_t v = 0; v < extra.size(); ++v) {
      auto vote = extra[v].votes.find(item_sample.back());
      if (vote == extra[v].votes.end()) continue;
      annotators.push_back(static_cast<int>(v));
      labels.push_back(vote->second);
      ++extra_votes[v];
    }
  };
  store.for_each_annotation([&](const MetadataStore::AnnotationRow& row) {
    if (item_sample.empty() || item_sample.back() != row.sample_id) {
      close_item();
      if (!item_sample.empty()) offsets.push_back(labels.size());
      item_sample.push_back(row.sample_id);
    }
    const std::int64_t who = row.annotator_id.value_or(-1);
    auto [it, fresh] =
        annotator_index.emplace(who, static_cast<int>(extra.size() + annotator_index.size()));
    annotators.push_back(it->second);
    labels.push_back(row.label);
  });
  close_item();
  ConsensusLabels out;
  if (labels.empty()) return out;
  offsets.push_back(labels.size());

  // Classes: the label values in use, ascending (ties go to the first).
  std::vector<std::int64_t> classes(labels);
  std::sort(classes.begin(), classes.end());
  classes.erase(std::unique(classes.begin(), classes.end()), classes.end());
  CrowdLabels crowd;
  crowd.classes = classes.size();
  crowd.annotators = extra.size() + annotator_index.size();
  crowd.offsets = offsets;
  crowd.annotator = annotators;
  crowd.label.reserve(labels.size());
  for (std::int64_t l : labels) {
    crowd.label.push_back(static_cast<int>(std::lower_bound(classes.begin(), classes.end(), l) -
                                           classes.begin()));
  }

  const DawidSkeneResult ds = dawid_skene(crowd, options);
  out.annotators = crowd.annotators;
  out.extra_votes = extra_votes;
  for (std::size_t v = 0; v < extra.size(); ++v) out.extra_accuracy.push_back(ds.expected_accuracy[v]);
  out.classes = crowd.classes;
  out.iterations = ds.iterations;
  out.converged = ds.converged;
  for (std::size_t i = 0; i < item_sample.size(); ++i) {
    // The item's extra votes are its entries from annotators 0 .. extra.size() - 1.
    const auto votes = static_cast<std::size_t>(
        std::count_if(annotators.begin() + static_cast<std::ptrdiff_t>(offsets[i]),
                      annotators.begin() + static_cast<std::ptrdiff_t>(offsets[i + 1]),
                      [&](int a) { return static_cast<std::size_t>(a) < extra.size(); }));
    out.by_sample[item_sample[i]] = {classes[static_cast<std::size_t>(ds.consensus[i])],
                                     ds.consensus_posterior[i], offsets[i + 1] - offsets[i] - votes,
                                     votes};
  }
  return out;
}

}  // namespace winnow::curation
