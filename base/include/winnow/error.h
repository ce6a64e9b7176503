// winnow's one error type: an exception that says what went wrong, where, and
// of which kind.
//
// Library code throws; only command-line front ends catch and turn errors into
// exit codes (by kind: docs/cli.md, "Subcommands"). Checks on caller input use
// WINNOW_THROW_IF_NOT, so a bad argument never aborts the process. The kind
// lets a caller decide what to do: the daemon retries a busy or I/O error and
// sends only invalid input to failed/.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace winnow {

enum class ErrorKind {
  invalid_input,  // the caller's argument or file content is wrong: retrying cannot help
  not_found,      // a named file, key or dataset does not exist
  busy,           // another process holds a lock: retrying later can succeed
  io,             // the operating system refused a read or write (disk full, permissions)
  corrupt,        // stored state (a checkpoint, an index file, a database) is damaged
  internal,       // a bug or an unexpected state inside winnow
};

// "invalid_input", "not_found", "busy", "io", "corrupt" or "internal".
constexpr const char* to_string(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::invalid_input:
      return "invalid_input";
    case ErrorKind::not_found:
      return "not_found";
    case ErrorKind::busy:
      return "busy";
    case ErrorKind::io:
      return "io";
    case ErrorKind::corrupt:
      return "corrupt";
    case ErrorKind::internal:
      return "internal";
  }
  return "internal";
}

class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* function, const char* file, int line,
        ErrorKind kind = ErrorKind::invalid_input)
      : std::runtime_error(message), function_(function), file_(file), line_(line), kind_(kind) {}

  const char* function() const noexcept { return function_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }
  ErrorKind kind() const noexcept { return kind_; }

 private:
  const char* function_;
  const char* file_;
  int line_;
  ErrorKind kind_;
};

}  // namespace winnow

// Throws winnow::Error (kind invalid_input) with a fmt-formatted message when
// `cond` is false.
#define WINNOW_THROW_IF_NOT(cond, ...)                                                 \
  do {                                                                                 \
    if (!(cond)) {                                                                     \
      throw ::winnow::Error(::fmt::format(__VA_ARGS__), __func__, __FILE__, __LINE__); \
    }                                                                                  \
  } while (false)

#define WINNOW_THROW(...) \
  throw ::winnow::Error(::fmt::format(__VA_ARGS__), __func__, __FILE__, __LINE__)

// The same with an explicit kind: WINNOW_THROW_KIND(io, "cannot write '{}'", path).
#define WINNOW_THROW_KIND(kind, ...)                                              \
  throw ::winnow::Error(::fmt::format(__VA_ARGS__), __func__, __FILE__, __LINE__, \
                        ::winnow::ErrorKind::kind)

#define WINNOW_THROW_IF_NOT_KIND(cond, kind, ...) \
  do {                                            \
    if (!(cond)) {                                \
      WINNOW_THROW_KIND(kind, __VA_ARGS__);       \
    }                                             \
  } while (false)
