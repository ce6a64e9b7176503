// Plain records for samples: what the pipeline hands the store (NewSample,
// Decision) and what the store hands back (SampleRecord, AnnotationRecord...).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/store/sample_status.h"

namespace winnow::store {

// A decision about one sample. Recording it sets the sample's status (and
// duplicate_of) and appends one event with the reason and details.
struct Decision {
  SampleStatus status = SampleStatus::accepted;
  std::optional<std::int64_t> duplicate_of;  // required exactly for duplicate statuses
  std::string reason;                        // human-readable, e.g. "cosine 0.991 > 0.98"
  std::string details_json;                  // JSON object with thresholds etc.; empty = none
};

struct NewAnnotation {
  std::string annotator;  // annotator name; created on first use
  std::int64_t label = 0;
};

// A sample as the pipeline decided it, ready to be recorded.
struct NewSample {
  std::string external_key;  // unique across the dataset
  std::string content_hash;  // exact-dedup key
  std::optional<std::int64_t> label;
  std::string source;  // source name, created on first use; empty = unknown
  std::optional<double> label_quality;
  std::optional<double> gain;
  std::optional<std::int64_t> batch_id;
  std::vector<NewAnnotation> annotations;
  Decision decision;
};

struct SampleRecord {
  std::int64_t id = 0;
  std::string external_key;
  std::string content_hash;
  std::optional<std::int64_t> label;
  std::string source;  // empty when unknown
  SampleStatus status = SampleStatus::accepted;
  std::optional<std::int64_t> duplicate_of;
  std::optional<double> label_quality;
  std::optional<double> gain;
  std::optional<std::int64_t> batch_id;
  std::string created_at;  // ISO-8601 UTC timestamps
  std::string updated_at;
};

struct AnnotationRecord {
  std::int64_t id = 0;
  std::int64_t sample_id = 0;
  std::string annotator;  // empty when unknown
  std::int64_t label = 0;
  std::string created_at;
};

// What an index rebuild needs of each accepted sample.
struct AcceptedSample {
  std::int64_t id = 0;
  std::string external_key;
  std::optional<std::int64_t> label;
  // Has a row in curation_vectors, so it is in the index (an annotations-only
  // sample has none: it was never embedded).
  bool has_vector = true;
};

// One per-sample score for the bulk setters (gain, label quality).
struct SampleScore {
  std::int64_t sample_id = 0;
  double value = 0.0;
};

}  // namespace winnow::store
