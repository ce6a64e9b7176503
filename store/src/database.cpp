#include "winnow/store/database.h"

#include <unistd.h>

#include <sqlite3.h>

#include <fmt/format.h>

#include <cerrno>
#include <filesystem>
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
  open(options);
  // A file of an older schema opened to read is migrated as a writing open
  // would, when it may be written; otherwise the error says what to do.
  if (options.read_only && schema_version() < latest_schema_version()) {
    const int version = schema_version();
    close();
    WINNOW_THROW_IF_NOT(::access(path_.c_str(), W_OK) == 0,
                        "{}: database schema version {} is older than this build's ({}) and "
                        "the file may not be written to migrate it; open it once as its owner "
                        "(winnow status does), or use the winnow that wrote it",
                        path_, version, latest_schema_version());
    DatabaseOptions writing = options;
    writing.read_only = false;
    open(writing);
  }
}

// A read-only open of a WAL database needs its shared-memory file (-shm),
// which SQLite cannot create in a folder the user may not write: such a file
// is opened immutable (no locks, the -wal file ignored), which is how a
// database one may only read is read.
static bool needs_immutable_open(const std::string& path) {
  const std::filesystem::path file(path);
  const std::filesystem::path folder = file.has_parent_path() ? file.parent_path() : ".";
  std::error_code ignored;
  return ::access(folder.c_str(), W_OK) != 0 && !std::filesystem::exists(path + "-shm", ignored);
}

// "file:PATH?immutable=1", PATH with the URI's special characters escaped.
static std::string immutable_uri(const std::string& path) {
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#') {
      uri += fmt::format("%{:02x}", static_cast<unsigned char>(c));
    } else {
      uri += c;
    }
  }
  return uri + "?immutable=1";
}

void Database::open(const DatabaseOptions& options) {
  int flags =
      (options.read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) |
      SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE;
  std::string name = path_;
  if (options.read_only && needs_immutable_open(path_)) {
    flags |= SQLITE_OPEN_URI;
    name = immutable_uri(path_);
  }
  const int rc = sqlite3_open_v2(name.c_str(), &db_, flags, nullptr);
  if (rc != SQLITE_OK) {
    // sqlite3_open_v2 usually hands back a handle even on failure, carrying
    // the message; it must be closed all the same.
    const std::string message = db_ != nullptr ? sqlite3_errmsg(db_) : sqlite3_errstr(rc);
    close();
    throw Error(
        fmt::format("{}: cannot open database: {} ({})", path_, message, sqlite3_errstr(rc)),
        __func__, __FILE__, __LINE__, kind_of(rc));
  }
  try {
    configure(options);
    if (!options.read_only) {
      migrate(*this);
    } else if (schema_version() > latest_schema_version()) {
      migrate(*this);  // says that the file is newer than this build
    }
  } catch (...) {
    close();
    throw;
  }
}

void Database::close() {
  cache_.clear();
  sqlite3_close_v2(db_);
  db_ = nullptr;
}

Database::~Database() {
  // Statements are finalized before the connection closes (close() clears
  // the cache). Cannot report from a destructor; with every statement
  // finalized the close only fails on misuse, and the OS reclaims the file
  // handle at exit anyway. errno is kept: a destructor run while an error is
  // on its way (a failed write to standard output) must not change its reason.
  const int saved = errno;
  close();
  errno = saved;
}

void Database::configure(const DatabaseOptions& options) {
  WINNOW_THROW_IF_NOT(options.busy_timeout_ms >= 0, "{}: busy timeout {} ms is negative", path_,
                      options.busy_timeout_ms);
  const int rc = sqlite3_busy_timeout(db_, options.busy_timeout_ms);
  if (rc != SQLITE_OK) {
    fail(rc, "setting the busy timeout");
  }

  if (!options.read_only) {
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
