#include "winnow/store/database.h"

#include <sqlite3.h>

#include <utility>

#include "winnow/error.h"
#include "winnow/store/migrations.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

// What a SQLite result code means to a caller (winnow/error.h): a lock is
// worth waiting for, a disk error may pass, a damaged file will not.
ErrorKind kind_of(int rc) {
  switch (rc & 0xff) {  // the primary code of an extended one
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return ErrorKind::busy;
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_READONLY:
    case SQLITE_PROTOCOL:
    case SQLITE_NOLFS:
    case SQLITE_PERM:
      return ErrorKind::io;
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return ErrorKind::corrupt;
    case SQLITE_CONSTRAINT:
    case SQLITE_MISMATCH:
    case SQLITE_TOOBIG:
    case SQLITE_RANGE:
      return ErrorKind::invalid_input;
    default:
      return ErrorKind::internal;
  }
}

}  // namespace

Database::Database(std::string path, const DatabaseOptions& options) : path_(std::move(path)) {
  WINNOW_THROW_IF_NOT(!path_.empty(), "database path is empty");
  const int flags =
      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  const int rc = sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 usually hands back a handle even on failure, carrying
    // the message; it must be closed all the same.
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw Error(
        fmt::format("{}: cannot open database: {} ({})", path_, message, sqlite3_errstr(rc)),
        __func__, __FILE__, __LINE__, kind_of(rc));
  }
  try {
    configure(options);
    migrate(*this);
  } catch (...) {
    cache_.clear();
    sqlite3_close_v2(db_);
    db_ = nullptr;
    throw;
  }
}

Database::~Database() {
  cache_.clear();  // statements must be finalized before the connection closes
  // Cannot report from a destructor; with every statement finalized the close
  // only fails on misuse, and the OS reclaims the file handle at exit anyway.
  sqlite3_close_v2(db_);
}

void Database::configure(const DatabaseOptions& options) {
  WINNOW_THROW_IF_NOT(options.busy_timeout_ms >= 0, "{}: busy timeout {} ms is negative", path_,
                      options.busy_timeout_ms);
  const int rc = sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  if (rc != SQLITE_OK) {
    fail(rc, "setting the busy timeout");
  }

  {
    Statement journal(*this, "PRAGMA journal_mode=WAL");
    WINNOW_THROW_IF_NOT(journal.step(), "{}: PRAGMA journal_mode returned no row", path_);
    const std::string mode = journal.column_text(0);
    const bool in_memory = path_ == ":memory:";
    WINNOW_THROW_IF_NOT(mode == "wal" || (in_memory && mode == "memory"),
                        "{}: cannot switch to WAL journal mode (SQLite kept '{}'); the file "
                        "system must support shared memory and file locks",
                        path_, mode);
  }
  // FULL: a commit is on disk when COMMIT returns (WAL with NORMAL may lose
  // the last commits in a power cut), so the daemon may then move the
  // manifest to processed/ (docs/store.md).
  exec("PRAGMA synchronous=FULL");
  exec("PRAGMA foreign_keys=ON");
  Statement foreign_keys(*this, "PRAGMA foreign_keys");
  WINNOW_THROW_IF_NOT(foreign_keys.step() && foreign_keys.column_int64(0) == 1,
                      "{}: SQLite refused to enable foreign keys", path_);
}

void Database::exec(const char* sql) {
  char* message = nullptr;
  const int rc = sqlite3_exec(db_, sql, nullptr, nullptr, &message);
  if (rc != SQLITE_OK) {
    const std::string text = message != nullptr ? message : sqlite3_errstr(rc);
    sqlite3_free(message);
    throw Error(
        fmt::format("{}: executing `{}` failed: {} ({})", path_, sql, text, sqlite3_errstr(rc)),
        __func__, __FILE__, __LINE__, kind_of(rc));
  }
}

Statement& Database::cached(std::string_view sql) {
  auto found = cache_.find(std::string(sql));
  if (found == cache_.end()) {
    found = cache_.emplace(std::string(sql), std::make_unique<Statement>(*this, sql)).first;
  }
  return *found->second;
}

int Database::schema_version() {
  Statement version(*this, "PRAGMA user_version");
  WINNOW_THROW_IF_NOT(version.step(), "{}: PRAGMA user_version returned no row", path_);
  return static_cast<int>(version.column_int64(0));
}

std::int64_t Database::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(db_);
}

int Database::changes() const {
  return sqlite3_changes(db_);
}

bool Database::in_transaction() const {
  return sqlite3_get_autocommit(db_) == 0;
}

void Database::fail(int rc, std::string_view action) const {
  fail(rc, action, db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc));
}

void Database::fail(int rc, std::string_view action, std::string_view message) const {
  throw Error(fmt::format("{}: {} failed: {} ({})", path_, action, message, sqlite3_errstr(rc)),
              __func__, __FILE__, __LINE__, kind_of(rc));
}

}  // namespace winnow::store
