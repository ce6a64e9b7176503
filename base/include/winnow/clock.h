// Elapsed time, as the benchmarks, the pipeline and the daemon report it.
#pragma once

#include <chrono>

namespace winnow {

// Seconds on the steady clock since `start`.
inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace winnow
