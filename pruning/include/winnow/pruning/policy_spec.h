// PolicySpec: a policy named by a string, e.g. "infobatch(r=0.5,delta=0.875)".
//
// The grammar is winnow's one spec grammar (winnow/spec.h, docs/specs.md);
// policy values are numbers, or lists of numbers separated by ':' as in
// "infobatch-quantile(percentiles=20:85,keep=0.25:0.5)".
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "winnow/spec.h"
#include "winnow/spec_reader.h"

namespace winnow {

// A Spec whose errors say "policy".
struct PolicySpec : Spec {
  PolicySpec() = default;
  PolicySpec(std::string spec_name, std::map<std::string, std::string> spec_params)
      : Spec{std::move(spec_name), std::move(spec_params)} {}
  // Implicit, as a Spec is a PolicySpec without the "policy" wording.
  PolicySpec(Spec spec) : Spec(std::move(spec)) {}

  // Throws winnow::Error quoting `text` when it cannot be parsed.
  static PolicySpec parse(const std::string& text) { return Spec::parse(text, "policy"); }
};

// Reads a policy's parameters with defaults and bounds (number, numbers, ...),
// then finish() rejects any parameter nobody asked for, so a typo never
// silently falls back to a default. Errors quote the spec's canonical form.
class ParamReader : public SpecReader {
 public:
  explicit ParamReader(const Spec& spec) : SpecReader(spec, "policy") {}
};

std::string format_number(double value);

}  // namespace winnow
