// ReviewRecord: a person's verdict on one sample (`winnow review`), kept in
// the reviews table (schema migration 8) beside the review event that
// applied it. The latest verdict on a sample is its row; the events keep
// every one. Machine re-judging leaves a reviewed sample as the person left
// it (docs/review.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace winnow::store {

enum class Verdict {
  keep,           // the sample is part of the dataset as it is (accepted)
  drop,           // the sample is no part of the dataset (rejected)
  relabel,        // the sample's label is `label` (accepted)
  not_duplicate,  // the sample is not a copy of its original (accepted)
};

// The stored name: "keep", "drop", "relabel", "not_duplicate".
std::string_view to_string(Verdict verdict);
// Inverse of to_string; empty when `name` is none of them.
std::optional<Verdict> parse_verdict(std::string_view name);

struct ReviewRecord {
  std::int64_t sample_id = 0;
  Verdict verdict = Verdict::keep;
  std::optional<std::int64_t> label;  // relabel only
  std::string reviewer;               // empty when not given
  std::string note;
  std::string created_at;  // ISO-8601 UTC; set by the store
};

}  // namespace winnow::store
