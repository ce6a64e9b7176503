#include "winnow/store/statement.h"

#include <sqlite3.h>

#include "winnow/store/database.h"

namespace winnow::store {

Statement::Statement(Database& db, std::string_view sql) : db_(db) {
  const char* tail = nullptr;
  const int rc = sqlite3_prepare_v3(db_.handle(), sql.data(), static_cast<int>(sql.size()),
                                    SQLITE_PREPARE_PERSISTENT, &stmt_, &tail);
  if (rc != SQLITE_OK) {
    db_.fail(rc, fmt::format("preparing `{}`", sql));
  }
  WINNOW_THROW_IF_NOT(stmt_ != nullptr, "{}: `{}` contains no SQL statement", db_.path(), sql);
  const std::string_view rest(tail, static_cast<std::size_t>(sql.data() + sql.size() - tail));
  if (rest.find_first_not_of(" \t\r\n;") != std::string_view::npos) {
    sqlite3_finalize(stmt_);
    WINNOW_THROW("{}: `{}` holds more than one SQL statement; prepare them one by one", db_.path(),
                 sql);
  }
}

Statement::~Statement() {
  sqlite3_finalize(stmt_);
}

const char* Statement::sql() const {
  return sqlite3_sql(stmt_);
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK) {
    db_.fail(rc, fmt::format("binding parameter {} of `{}`", index, sql()));
  }
}

void Statement::bind(int index, std::nullptr_t) {
  check_bind(sqlite3_bind_null(stmt_, index), index);
}

void Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(stmt_, index, value), index);
}

void Statement::bind(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(stmt_, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
}

void Statement::bind(int index, BlobView value) {
  check_bind(sqlite3_bind_blob64(stmt_, index, value.data, value.size, SQLITE_TRANSIENT), index);
}

void Statement::bind_int64(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(stmt_, index, value), index);
}

void Statement::clear_bindings() {
  const int rc = sqlite3_clear_bindings(stmt_);
  if (rc != SQLITE_OK) {
    db_.fail(rc, fmt::format("clearing the bindings of `{}`", sql()));
  }
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    return true;
  }
  if (rc == SQLITE_DONE) {
    return false;
  }
  // Read the message before reset() can replace it. The error's kind comes
  // from the code (busy, io, corrupt, ...), so a caller can retry a lock.
  const std::string message = sqlite3_errmsg(db_.handle());
  const std::string statement = sql();
  reset();
  db_.fail(rc, fmt::format("executing `{}`", statement), message);
}

void Statement::run() {
  while (step()) {
  }
  reset();
}

void Statement::reset() noexcept {
  // The return value repeats the last step()'s error, which step() reported.
  static_cast<void>(sqlite3_reset(stmt_));
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(stmt_, column) == SQLITE_NULL;
}

std::int64_t Statement::column_int64(int column) const {
  return sqlite3_column_int64(stmt_, column);
}

double Statement::column_double(int column) const {
  return sqlite3_column_double(stmt_, column);
}

std::string Statement::column_text(int column) const {
  const unsigned char* text = sqlite3_column_text(stmt_, column);
  if (text == nullptr) {
    // NULL, or SQLite ran out of memory converting the value.
    WINNOW_THROW_IF_NOT(sqlite3_errcode(db_.handle()) != SQLITE_NOMEM,
                        "{}: out of memory reading column {} of `{}`", db_.path(), column, sql());
    return {};
  }
  return std::string(reinterpret_cast<const char*>(text),
                     static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column)));
}

std::string_view Statement::column_blob(int column) const {
  const void* data = sqlite3_column_blob(stmt_, column);
  const auto size = static_cast<std::size_t>(sqlite3_column_bytes(stmt_, column));
  if (data == nullptr) {
    // NULL, an empty BLOB, or SQLite ran out of memory reading the value.
    WINNOW_THROW_IF_NOT(size == 0 && sqlite3_errcode(db_.handle()) != SQLITE_NOMEM,
                        "{}: out of memory reading column {} of `{}`", db_.path(), column, sql());
    return {};
  }
  return std::string_view(static_cast<const char*>(data), size);
}

std::optional<std::int64_t> Statement::column_optional_int64(int column) const {
  if (is_null(column)) {
    return std::nullopt;
  }
  return column_int64(column);
}

std::optional<double> Statement::column_optional_double(int column) const {
  if (is_null(column)) {
    return std::nullopt;
  }
  return column_double(column);
}

std::optional<std::string> Statement::column_optional_text(int column) const {
  if (is_null(column)) {
    return std::nullopt;
  }
  return column_text(column);
}

}  // namespace winnow::store
