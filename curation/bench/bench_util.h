// Shared helpers for the curation benchmarks: timing, the Fashion-MNIST
// paths and JSON output.
#pragma once

#include <time.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <string>

#include <nlohmann/json.hpp>

namespace winnow::curation::bench {

inline const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

using Clock = std::chrono::steady_clock;

inline double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of this thread (less disturbed than wall time on a shared machine).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Prints the JSON and writes it to `path` when given.
inline int emit(const nlohmann::json& out, const std::string& path) {
  std::cout << out.dump(2) << std::endl;
  if (!path.empty()) {
    std::ofstream f(path);
    if (!f) {
      std::cerr << "cannot write " << path << "\n";
      return 1;
    }
    f << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace winnow::curation::bench
