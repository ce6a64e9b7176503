// What the last `rejudge --consensus` estimated of each annotator, kept in
// meta (`curation.consensus_estimates`) so that the report can rate the
// annotators as the consensus did.
//
// The consensus weighs the annotators together with the extra voters (the
// neighbours' suggested label, a training run's predictions), which see
// every item alike. Dawid-Skene over the annotations alone cannot: where the
// items sent back for more labels are the hard ones, the later answers land
// on items whose other labels are wrong, and it blames whoever gave them
// (docs/annotations.md, "Which estimate the report gives"). The estimates hold as long as the
// annotations do: they carry a fingerprint of every annotation row, and the report takes them only
// while it still matches.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "winnow/store/metadata_store.h"

namespace winnow::curation::review {

// A set of annotation rows, as read in order: their count and a 64-bit
// FNV-1a over every row's id, annotator and label. A new, removed or
// relabelled annotation changes it.
struct AnnotationsFingerprint {
  std::int64_t annotations = 0;
  std::uint64_t fingerprint = 14695981039346656037ull;  // FNV-1a's offset basis
  void add(const store::MetadataStore::AnnotationRow& row);
  bool operator==(const AnnotationsFingerprint& o) const {
    return annotations == o.annotations && fingerprint == o.fingerprint;
  }
};

struct ConsensusEstimates {
  static constexpr const char* kMetaKey = "curation.consensus_estimates";

  std::int64_t revision = 0;                // the revision the consensus wrote
  AnnotationsFingerprint read;              // the annotation rows it read
  std::map<std::int64_t, double> accuracy;  // expected, by contributor id (-1: none)

  std::string to_json() const;
  // Throws winnow::Error naming the meta key when `text` is not what
  // to_json writes.
  static ConsensusEstimates from_json(const std::string& text);
};

// Writes `estimates` under kMetaKey (inside the caller's transaction).
void store_consensus_estimates(store::MetadataStore& store, const ConsensusEstimates& estimates);

// The stored estimates, if any; those of annotations that changed since are
// returned too (the caller compares fingerprints and says why it set them
// aside).
std::optional<ConsensusEstimates> stored_consensus_estimates(store::MetadataStore& store);

}  // namespace winnow::curation::review
