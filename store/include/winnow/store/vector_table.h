// VectorTable: the curation pipeline's table in the store, curation_vectors
// (schema migration 2): the embedding and the content of every accepted and
// label_issue sample, from which the vector index is rebuilt and samples are
// re-embedded (docs/store.md). Embeddings are `dim` float32 values, stored
// little-endian; contents are plain bytes with a kind the store does not
// interpret ("pixels", "text", "path").
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "winnow/store/sample_status.h"

namespace winnow::store {

class Database;
class Statement;

// A sample's content as the table keeps it.
struct StoredContent {
  std::string kind;  // "pixels", "text" or "path"
  std::int64_t width = 0;
  std::int64_t height = 0;
  std::string bytes;  // pixels, text bytes or the resolved path
};

// One accepted or label_issue sample with a row (see for_each_judged_row).
struct JudgedVectorRow {
  std::int64_t sample_id = 0;
  SampleStatus status = SampleStatus::accepted;
  std::optional<std::int64_t> label;
  std::vector<float> embedding;  // empty unless asked for
  StoredContent content;
};

// Reads the embeddings of the judged samples (accepted or label_issue: what
// the vector index holds) in id order, some at a time, from one query kept
// open between calls.
class VectorReader {
 public:
  VectorReader(Database& db, std::size_t dim);
  ~VectorReader();
  VectorReader(const VectorReader&) = delete;
  VectorReader& operator=(const VectorReader&) = delete;

  // Appends up to `limit` rows to `ids` and `vectors` (dim floats each);
  // returns how many. Once it returns 0 the reader stays done. Throws when a
  // stored embedding does not have dim floats.
  std::size_t read(std::size_t limit, std::vector<std::int64_t>& ids, std::vector<float>& vectors);

 private:
  Database& db_;
  std::size_t dim_;
  std::unique_ptr<Statement> query_;
  bool done_ = false;
};

class VectorTable {
 public:
  explicit VectorTable(Database& db) : db_(db) {}

  // Adds the row of `sample_id` (a recorded sample); `embedding` holds `dim`
  // floats. Throws (through Database::fail) when the row cannot be written.
  void put(std::int64_t sample_id, const float* embedding, std::size_t dim,
           const StoredContent& content);
  // Deletes the row of `sample_id` (a judged sample that became a duplicate);
  // none: nothing happens.
  void remove(std::int64_t sample_id);
  // Replaces the embedding of `sample_id`'s row.
  void set_embedding(std::int64_t sample_id, const float* embedding, std::size_t dim);

  // The ids of the judged samples (accepted or label_issue) with a row,
  // ascending: what the vector index must hold (its catch-up compares them
  // with the index's ids).
  std::vector<std::int64_t> judged_ids();
  // Appends the embeddings (`dim` floats each) of `ids`, in that order, to
  // `vectors`; throws naming the sample when one has no row or another size.
  void read_embeddings(const std::vector<std::int64_t>& ids, std::size_t dim,
                       std::vector<float>& vectors);
  // The content of `sample_id`'s row, or nothing when it has none.
  std::optional<StoredContent> content_of(std::int64_t sample_id);
  // Calls `visit` for every accepted and label_issue sample with a row, in id
  // order, from one query. With `embedding_dim`, each row's embedding is read
  // and must have that many floats; without, it is left empty (about to be
  // replaced). `visit` must not write to the table; the row it gets is reused.
  void for_each_judged_row(std::optional<std::size_t> embedding_dim,
                           const std::function<void(const JudgedVectorRow&)>& visit);
  // The same for the samples with ids in [first_id, last_id] only; with
  // `accepted_quality_below`, less the accepted samples whose stored label
  // quality is at least that (label issues and samples without a quality
  // are always visited).
  void for_each_judged_row_between(std::int64_t first_id, std::int64_t last_id,
                                   std::optional<std::size_t> embedding_dim,
                                   const std::function<void(const JudgedVectorRow&)>& visit,
                                   std::optional<double> accepted_quality_below = std::nullopt);
  // label_issue samples without a row (stored before label issues kept theirs).
  std::int64_t count_label_issues_without_row();
  // Whether any sample holds an embedding.
  bool any_row();

 private:
  Database& db_;
};

}  // namespace winnow::store
