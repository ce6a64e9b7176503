// A pred-probs file (`winnow ingest --pred-probs FILE`): JSON Lines of
// out-of-sample predicted probabilities, {"key": "k1", "pred_probs": [0.1, 0.9]},
// one per sample key, optionally preceded by a header line
// {"classes": ["cat", "dog"]} naming class j of every row (without it, class j
// is the integer label j).
#pragma once

#include <cstddef>
#include <string>
#include <unordered_map>
#include <vector>

namespace winnow::curation::readers {

// Out-of-sample predicted probabilities by external key (`ingest --pred-probs`):
// class j of every row is the label named class_names[j].
struct PredProbsTable {
  std::vector<std::string> class_names;
  std::unordered_map<std::string, std::vector<float>> rows;
};

// A pred-probs file: the table, and the line of every key (for messages).
struct PredProbsFile {
  PredProbsTable table;
  std::unordered_map<std::string, std::size_t> line_of_key;
};

// Reads the pred-probs file at `path`. Blank lines are skipped. Throws
// winnow::Error, naming the file and line, when the file cannot be read, a
// line is not a JSON object, the "classes" header has fewer than 2 names or
// a name that is not a string, a row has no non-empty string "key" or no
// "pred_probs" array, a row's length differs from K (the header's class
// count, else the first row's), a value is not a finite number >= 0, a row
// does not sum to 1 within `sum_tolerance` (the caller passes
// labels::kPredProbsSumTolerance), a key has two rows, or there is no row
// with at least 2 classes. Without a header, class_names are "0".."K-1".
PredProbsFile read_pred_probs(const std::string& path, double sum_tolerance);

}  // namespace winnow::curation::readers
