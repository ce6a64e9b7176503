// What every winnow benchmark needs: wall and thread-CPU timing, medians, the
// machine's load and peak memory (recorded with each result, since the
// reference machine is shared and noisy), and JSON output.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winnow/clock.h"

namespace winnow::bench {

using Clock = std::chrono::steady_clock;

using winnow::seconds_since;  // winnow/clock.h, for code that uses this namespace

// CPU time of this thread: less disturbed than wall time when other
// processes share the cores (benchmarks report both).
inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Minor page faults of this thread so far: a plan that reuses its buffers
// takes none.
inline long thread_minor_faults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

inline double load_average() {
  double load[1] = {0.0};
  return getloadavg(load, 1) == 1 ? load[0] : -1.0;
}

inline double peak_rss_mb() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

// Prints the JSON and also writes it to `path` when one is given; returns
// the process exit code (1 when the file cannot be written).
inline int emit(const nlohmann::json& out, const std::string& path) {
  std::cout << out.dump(2) << std::endl;
  if (!path.empty()) {
    std::ofstream file(path);
    if (!file) {
      std::cerr << "cannot write " << path << "\n";
      return 1;
    }
    file << out.dump(2) << "\n";
  }
  return 0;
}

}  // namespace winnow::bench
