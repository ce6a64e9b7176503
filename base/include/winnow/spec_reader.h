// SpecReader: reads a Spec's parameter values as typed values with defaults and
// bounds, then finish() rejects any parameter nobody asked for, so a typo never
// silently falls back to a default. Every error is winnow::Error (invalid_input)
// naming what is parsed, the whole spec text, the key and the bad value.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "winnow/spec.h"

namespace winnow {

class SpecReader {
 public:
  // `what` names the thing in errors ("policy", "embedder spec", "index
  // config"); `text` is the spec as the user wrote it (empty: spec.to_string()).
  SpecReader(Spec spec, std::string what, std::string text = {});

  const Spec& spec() const { return spec_; }

  // Each reader returns `fallback` when `key` is absent; it throws when the
  // value is present but is not of its type or out of its bounds.

  // A finite number as strtod reads it ("0.5", "1e-3").
  double number(const std::string& key, double fallback);
  // Finite numbers separated by ':' ("20:85").
  std::vector<double> numbers(const std::string& key, const std::vector<double>& fallback);
  // Decimal digits only, at most `max`.
  std::uint64_t integer(const std::string& key, std::uint64_t fallback,
                        std::uint64_t max = std::numeric_limits<std::uint64_t>::max());
  // Decimal digits only, in [1, max].
  int positive_int(const std::string& key, int fallback, int max = std::numeric_limits<int>::max());
  // The value as written (trimmed), e.g. a path.
  std::string string(const std::string& key, const std::string& fallback);

  // Throws naming the first parameter (in key order) that no reader asked for,
  // and the keys that were asked for.
  void finish() const;

 private:
  // The value of `key`, or nullptr when absent; records that `key` was read.
  const std::string* find(const std::string& key);
  double parse_number(const std::string& key, const std::string& value,
                      const std::string& piece) const;
  std::uint64_t parse_digits(const std::string& key, const std::string& value, std::uint64_t min,
                             std::uint64_t max, const char* type) const;

  Spec spec_;
  std::string what_;
  std::string text_;
  std::vector<std::string> read_;  // keys asked for, in the order first asked
};

}  // namespace winnow
