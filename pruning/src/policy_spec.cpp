#include "winnow/pruning/policy_spec.h"

#include <fmt/format.h>

namespace winnow {

// The shortest text that reads back as the same double, so spec() round-trips.
std::string format_number(double value) {
  return fmt::format("{}", value);
}

}  // namespace winnow
