// A person's verdicts on samples (`winnow review FILE`; the gallery's page
// writes such a file): read from CSV or JSONL, then applied to a Dataset,
// where they stick: no machine re-judgement changes a reviewed sample's
// status or label unless asked to (docs/review.md).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/store/review_record.h"

namespace winnow::curation::review {

// One row of a verdict file: `item` is the sample's key; `verdict` is the
// text as written (checked when applied, so one bad row refuses only itself).
struct VerdictRow {
  std::size_t line = 0;  // 1-based, in the file
  std::string item;
  std::string verdict;
  std::string label;  // relabel only
  std::string reviewer;
  std::string note;
};

// The rows of a verdict file: CSV with a header naming at least `item` and
// `verdict` (and any of `label`, `reviewer`, `note`), or JSON Lines with
// those fields; the format is taken from the first character that is not
// white space ('{': JSONL). At most 64 MiB. Throws winnow::Error
// (invalid_input) naming the file and line when it cannot be read as either.
std::vector<VerdictRow> read_verdict_file(const std::string& path);

// What became of one row.
struct VerdictOutcome {
  std::size_t line = 0;
  std::string item;
  std::string verdict;
  enum class Result { applied, unchanged, refused } result = Result::applied;
  std::string why;  // refused: what is wrong; applied: the status now
};

struct ReviewReport {
  std::size_t applied = 0;
  std::size_t unchanged = 0;  // the same verdict was already recorded
  std::size_t refused = 0;
  std::vector<VerdictOutcome> outcomes;  // one per row, in file order
};

// Applies `rows` in file order (a later row on an item wins) in one
// transaction: each applied verdict is a review event and the item's
// reviews row. A row that cannot apply (unknown item or verdict, relabel
// without a label, not_duplicate on a sample that is not one, keep of a
// record the pipeline refused) is refused with the reason; the others
// still apply. What each verdict does to a sample: docs/review.md.
ReviewReport apply_verdicts(Dataset& dataset, const std::vector<VerdictRow>& rows);

// The ids of the samples a person reviewed: what machine re-judgements leave
// alone (unless told to override them).
std::set<std::int64_t> reviewed_samples(store::MetadataStore& store);

}  // namespace winnow::curation::review
