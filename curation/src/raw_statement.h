// RawStatement: a prepared SQLite statement used directly, for the BLOB
// columns of curation_vectors (the store's Statement binds text only). Every
// step's result is checked; a failure throws winnow::Error through
// Database::fail with the statement's SQL.
#pragma once

#include <sqlite3.h>

#include <string>

#include "winnow/store/database.h"

namespace winnow::curation {

class RawStatement {
 public:
  RawStatement(Database& db, const char* sql) : db_(db) {
    int rc = sqlite3_prepare_v2(db.handle(), sql, -1, &stmt_, nullptr);
    if (rc != SQLITE_OK) db.fail(rc, std::string("preparing ") + sql);
  }
  ~RawStatement() { sqlite3_finalize(stmt_); }
  RawStatement(const RawStatement&) = delete;
  RawStatement& operator=(const RawStatement&) = delete;
  sqlite3_stmt* get() { return stmt_; }
  bool step() {
    int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail(rc, std::string("running ") + sqlite3_sql(stmt_));
  }
  void reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }

 private:
  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace winnow::curation
