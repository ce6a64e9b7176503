// Statement: one prepared SQLite statement (RAII) with typed bind and column
// helpers. Every value reaches SQL through a bound parameter.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include "winnow/error.h"

struct sqlite3_stmt;

namespace winnow::store {

class Database;

// Bytes bound as a BLOB (SQLite copies them when bound).
struct BlobView {
  const void* data = nullptr;
  std::size_t size = 0;  // in bytes
};

class Statement {
 public:
  // Prepares exactly one SQL statement; throws naming the SQL on error.
  Statement(Database& db, std::string_view sql);
  ~Statement();

  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  // Resets the statement, clears old bindings and binds values to ?1, ?2, ...
  template <typename... Values>
  Statement& bind_all(const Values&... values) {
    reset();
    clear_bindings();
    int index = 0;
    (bind(++index, values), ...);
    static_cast<void>(index);  // unused when there are no values
    return *this;
  }

  void bind(int index, std::nullptr_t);
  void bind(int index, double value);
  void bind(int index, std::string_view value);
  void bind(int index, BlobView value);
  template <typename T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
  void bind(int index, T value) {
    if constexpr (std::is_unsigned_v<T> && sizeof(T) >= sizeof(std::int64_t)) {
      WINNOW_THROW_IF_NOT(value <= static_cast<T>(std::numeric_limits<std::int64_t>::max()),
                          "statement `{}`: parameter {} = {} does not fit SQLite's int64", sql(),
                          index, value);
    }
    bind_int64(index, static_cast<std::int64_t>(value));
  }
  template <typename T>
  void bind(int index, const std::optional<T>& value) {
    if (value) {
      bind(index, *value);
    } else {
      bind(index, nullptr);
    }
  }

  // Advances to the next row: true when a row is ready, false when done.
  // Throws naming the database file, the SQL and SQLite's message, with the
  // kind SQLite's code gives (busy, io, corrupt, ...; Database::fail).
  bool step();
  // Steps to completion (INSERT/UPDATE/DDL), then resets.
  void run();
  // Makes the statement ready to run again and ends its read snapshot.
  // Errors were already reported by step(), so none is raised here.
  void reset() noexcept;

  bool is_null(int column) const;
  std::int64_t column_int64(int column) const;
  double column_double(int column) const;
  std::string column_text(int column) const;  // "" for NULL
  // The bytes of a BLOB (or text) column, valid until the next step or
  // reset; empty for NULL and for an empty BLOB.
  std::string_view column_blob(int column) const;
  std::optional<std::int64_t> column_optional_int64(int column) const;
  std::optional<double> column_optional_double(int column) const;
  std::optional<std::string> column_optional_text(int column) const;

  const char* sql() const;

 private:
  void bind_int64(int index, std::int64_t value);
  void clear_bindings();
  void check_bind(int rc, int index);

  Database& db_;
  sqlite3_stmt* stmt_ = nullptr;
};

// Resets a statement when the scope ends, so an exception or early return
// never leaves a cached statement mid-query, holding a read snapshot open.
class StatementScope {
 public:
  explicit StatementScope(Statement& statement) : statement_(statement) {}
  ~StatementScope() { statement_.reset(); }
  StatementScope(const StatementScope&) = delete;
  StatementScope& operator=(const StatementScope&) = delete;

  Statement& operator*() const { return statement_; }
  Statement* operator->() const { return &statement_; }

 private:
  Statement& statement_;
};

}  // namespace winnow::store
