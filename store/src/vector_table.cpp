#include "winnow/store/vector_table.h"

#include <cstring>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

constexpr const char* kJudgedVectors =
    "SELECT v.sample_id, v.embedding FROM curation_vectors v JOIN samples s ON s.id = v.sample_id"
    " WHERE s.status IN ('accepted', 'label_issue') ORDER BY v.sample_id";

constexpr const char* kJudgedRows =
    "SELECT v.sample_id, s.status, s.label, v.embedding, v.kind, v.width,"
    " v.height, v.content FROM curation_vectors v JOIN samples s"
    " ON s.id = v.sample_id WHERE s.status IN ('accepted', 'label_issue')"
    " ORDER BY v.sample_id";
constexpr const char* kJudgedRowsBetween =
    "SELECT v.sample_id, s.status, s.label, v.embedding, v.kind, v.width,"
    " v.height, v.content FROM curation_vectors v JOIN samples s"
    " ON s.id = v.sample_id WHERE s.status IN ('accepted', 'label_issue')"
    " AND v.sample_id BETWEEN ?1 AND ?2 AND (?3 IS NULL OR s.status = 'label_issue'"
    " OR s.label_quality IS NULL OR s.label_quality < ?3) ORDER BY v.sample_id";

// Appends a stored embedding of `dim` floats to `out`; throws, appending
// nothing, when its size says it has another dimension.
void append_embedding(const Database& db, std::int64_t sample_id, std::string_view blob,
                      std::size_t dim, std::vector<float>& out) {
  WINNOW_THROW_IF_NOT(blob.size() == dim * sizeof(float),
                      "{}: stored embedding of sample {} has {} bytes, expected {}", db.path(),
                      sample_id, blob.size(), dim * sizeof(float));
  const std::size_t at = out.size();
  out.resize(at + dim);
  if (dim > 0) std::memcpy(out.data() + at, blob.data(), blob.size());
}

BlobView embedding_blob(const float* embedding, std::size_t dim) {
  return {embedding, dim * sizeof(float)};
}

// Steps a statement that returns no rows through Database::fail, then resets it.
void run_or_fail(Statement& statement) {
  StatementScope scope(statement);
  while (statement.step()) {
  }
}

}  // namespace

// --- VectorReader ----------------------------------------------------------

VectorReader::VectorReader(Database& db, std::size_t dim)
    : db_(db), dim_(dim), query_(std::make_unique<Statement>(db, kJudgedVectors)) {
  query_->bind_all();
}

VectorReader::~VectorReader() = default;

std::size_t VectorReader::read(std::size_t limit, std::vector<std::int64_t>& ids,
                               std::vector<float>& vectors) {
  std::size_t rows = 0;
  // (SQLite restarts a finished statement on the next step: stop for good.)
  while (!done_ && rows < limit) {
    if (!query_->step()) {
      done_ = true;
      query_->reset();
      break;
    }
    const std::int64_t id = query_->column_int64(0);
    append_embedding(db_, id, query_->column_blob(1), dim_, vectors);
    ids.push_back(id);
    ++rows;
  }
  return rows;
}

// --- VectorTable -----------------------------------------------------------

void VectorTable::put(std::int64_t sample_id, const float* embedding, std::size_t dim,
                      const StoredContent& content) {
  Statement& insert = db_.cached(
      "INSERT INTO curation_vectors(sample_id, embedding, kind, width, height, content)"
      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  insert.bind_all(sample_id, embedding_blob(embedding, dim), std::string_view(content.kind),
                  content.width, content.height,
                  BlobView{content.bytes.data(), content.bytes.size()});
  run_or_fail(insert);
}

void VectorTable::set_embedding(std::int64_t sample_id, const float* embedding, std::size_t dim) {
  Statement& update = db_.cached("UPDATE curation_vectors SET embedding = ?1 WHERE sample_id = ?2");
  update.bind_all(embedding_blob(embedding, dim), sample_id);
  run_or_fail(update);
}

std::vector<std::int64_t> VectorTable::judged_ids() {
  StatementScope query(
      db_.cached("SELECT v.sample_id FROM curation_vectors v JOIN samples s ON s.id = v.sample_id"
                 " WHERE s.status IN ('accepted', 'label_issue') ORDER BY v.sample_id"));
  query->bind_all();
  std::vector<std::int64_t> ids;
  while (query->step()) ids.push_back(query->column_int64(0));
  return ids;
}

void VectorTable::read_embeddings(const std::vector<std::int64_t>& ids, std::size_t dim,
                                  std::vector<float>& vectors) {
  Statement& query = db_.cached("SELECT embedding FROM curation_vectors WHERE sample_id = ?1");
  for (const std::int64_t id : ids) {
    StatementScope scope(query);
    query.bind_all(id);
    WINNOW_THROW_IF_NOT(query.step(), "{}: sample {} has no stored embedding", db_.path(), id);
    append_embedding(db_, id, query.column_blob(0), dim, vectors);
  }
}

std::optional<StoredContent> VectorTable::content_of(std::int64_t sample_id) {
  StatementScope query(
      db_.cached("SELECT kind, width, height, content FROM curation_vectors WHERE sample_id = ?1"));
  query->bind_all(sample_id);
  if (!query->step()) return std::nullopt;
  StoredContent content;
  content.kind = query->column_text(0);
  content.width = query->column_int64(1);
  content.height = query->column_int64(2);
  content.bytes = std::string(query->column_blob(3));
  return content;
}

namespace {

void visit_judged_rows(const Database& db, Statement& query,
                       std::optional<std::size_t> embedding_dim,
                       const std::function<void(const JudgedVectorRow&)>& visit) {
  JudgedVectorRow row;
  while (query.step()) {
    row.sample_id = query.column_int64(0);
    row.status = parse_sample_status(query.column_text(1));
    row.label = query.column_optional_int64(2);
    if (embedding_dim) {
      row.embedding.clear();
      append_embedding(db, row.sample_id, query.column_blob(3), *embedding_dim, row.embedding);
    }
    row.content.kind = query.column_text(4);
    row.content.width = query.column_int64(5);
    row.content.height = query.column_int64(6);
    row.content.bytes.assign(query.column_blob(7));
    visit(row);
  }
}

}  // namespace

void VectorTable::for_each_judged_row(std::optional<std::size_t> embedding_dim,
                                      const std::function<void(const JudgedVectorRow&)>& visit) {
  // Not a cached statement: `visit` may run other queries.
  Statement query(db_, kJudgedRows);
  visit_judged_rows(db_, query, embedding_dim, visit);
}

void VectorTable::for_each_judged_row_between(
    std::int64_t first_id, std::int64_t last_id, std::optional<std::size_t> embedding_dim,
    const std::function<void(const JudgedVectorRow&)>& visit,
    std::optional<double> accepted_quality_below) {
  Statement query(db_, kJudgedRowsBetween);
  query.bind_all(first_id, last_id, accepted_quality_below);
  visit_judged_rows(db_, query, embedding_dim, visit);
}

std::int64_t VectorTable::count_label_issues_without_row() {
  StatementScope query(
      db_.cached("SELECT count(*) FROM samples s WHERE s.status = 'label_issue' AND"
                 " NOT EXISTS (SELECT 1 FROM curation_vectors v WHERE v.sample_id = s.id)"));
  query->bind_all();
  WINNOW_THROW_IF_NOT(query->step(), "{}: counting label issues without vectors returned no row",
                      db_.path());
  return query->column_int64(0);
}

void VectorTable::remove(std::int64_t sample_id) {
  db_.cached("DELETE FROM curation_vectors WHERE sample_id = ?1").bind_all(sample_id).run();
}

bool VectorTable::any_row() {
  StatementScope query(db_.cached("SELECT EXISTS (SELECT 1 FROM curation_vectors)"));
  query->bind_all();
  WINNOW_THROW_IF_NOT(query->step(), "{}: looking for a stored embedding returned no row",
                      db_.path());
  return query->column_int64(0) != 0;
}

}  // namespace winnow::store
