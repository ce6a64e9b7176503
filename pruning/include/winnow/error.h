// winnow's one error type: an exception that says what went wrong and where.
//
// Library code throws; only command-line front ends catch and turn errors into
// exit codes. Checks on caller input use WINNOW_THROW_IF_NOT, so a bad argument
// never aborts the process.
#pragma once

#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace winnow {

class Error : public std::runtime_error {
 public:
  Error(const std::string& message, const char* function, const char* file, int line)
      : std::runtime_error(message),
        function_(function),
        file_(file),
        line_(line) {}

  const char* function() const noexcept { return function_; }
  const char* file() const noexcept { return file_; }
  int line() const noexcept { return line_; }

 private:
  const char* function_;
  const char* file_;
  int line_;
};

}  // namespace winnow

// Throws winnow::Error with a fmt-formatted message when `cond` is false.
#define WINNOW_THROW_IF_NOT(cond, ...)                                              \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      throw ::winnow::Error(::fmt::format(__VA_ARGS__), __func__, __FILE__, __LINE__); \
    }                                                                               \
  } while (false)

#define WINNOW_THROW(...) \
  throw ::winnow::Error(::fmt::format(__VA_ARGS__), __func__, __FILE__, __LINE__)
