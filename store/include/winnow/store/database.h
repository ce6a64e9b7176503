// Database: one open SQLite connection (RAII), configured for winnow and
// migrated to the latest schema when opened.
//
// A Database belongs to one thread at a time; give each thread or process its
// own. WAL mode lets readers on other connections run while one writer writes.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

struct sqlite3;

namespace winnow::store {

class Statement;

struct DatabaseOptions {
  int busy_timeout_ms = 5000;  // how long to wait for another writer's lock
  // Open an existing file for reading only (the commands that only read:
  // status, export, report), so that a database the user may not write is
  // still read: no WAL switch. A file of an older schema is migrated when
  // it may be written (as before); one that may not is read as it is only
  // if its schema is this build's.
  bool read_only = false;
};

class Database {
 public:
  // Opens (creating if missing) the file at `path`, turns on WAL mode,
  // foreign keys, synchronous=FULL and the busy timeout, then applies every
  // pending schema migration. Throws winnow::Error naming the file on failure,
  // including when the file's schema is newer than this build knows.
  explicit Database(std::string path, const DatabaseOptions& options = {});
  ~Database();

  Database(const Database&) = delete;
  Database& operator=(const Database&) = delete;

  const std::string& path() const { return path_; }
  sqlite3* handle() const { return db_; }

  // Runs fixed SQL without parameters (pragmas, DDL, BEGIN/COMMIT). Never
  // pass text built from input: use a Statement with bound values for that.
  void exec(const char* sql);

  // A prepared statement kept for the connection's lifetime and reused, so
  // hot paths prepare their SQL once.
  Statement& cached(std::string_view sql);

  int schema_version();  // PRAGMA user_version
  std::int64_t last_insert_rowid() const;
  int changes() const;  // rows changed by the last INSERT/UPDATE/DELETE
  bool in_transaction() const;

  // Throws winnow::Error: "<path>: <action> failed: <sqlite message> (<code>)",
  // of kind busy (a lock), io, corrupt, invalid_input (a constraint) or internal.
  [[noreturn]] void fail(int rc, std::string_view action) const;
  // The same with SQLite's message read earlier (before a reset could replace it).
  [[noreturn]] void fail(int rc, std::string_view action, std::string_view message) const;

 private:
  void open(const DatabaseOptions& options);  // db_, configured and migrated
  void close();
  void configure(const DatabaseOptions& options);

  std::string path_;
  sqlite3* db_ = nullptr;
  std::unordered_map<std::string, std::unique_ptr<Statement>> cache_;
};

}  // namespace winnow::store
