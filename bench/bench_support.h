// What every winnow benchmark needs: wall and thread-CPU timing, medians, the
// machine's load and peak memory (recorded with each result, since the
// reference machine is shared and noisy), the machine itself, and JSON output.
#pragma once

#include <sys/resource.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
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

namespace detail {

// The value after "prefix ... :" on the first line of `path` that starts with `prefix`.
inline std::string first_field(const char* path, const std::string& prefix) {
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    const std::size_t colon = line.find(':');
    if (colon == std::string::npos) return "";
    const std::size_t start = line.find_first_not_of(" \t", colon + 1);
    return start == std::string::npos ? "" : line.substr(start);
  }
  return "";
}

}  // namespace detail

// The machine a figure was measured on (docs/benchmarks.md names it for
// every figure): CPU model, cores, the SIMD flags winnow's kernels choose by,
// transparent huge pages (the selected mode) and memory. bench/machine.py
// prints the same for the Python benchmarks.
inline nlohmann::json machine_json() {
  const std::string flags = " " + detail::first_field("/proc/cpuinfo", "flags") + " ";
  nlohmann::json simd = nlohmann::json::array();
  for (const char* f :
       {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"}) {
    if (flags.find(" " + std::string(f) + " ") != std::string::npos) simd.push_back(f);
  }
  std::string thp;
  {
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::getline(in, thp);
    const std::size_t open = thp.find('['), close = thp.find(']');
    if (open != std::string::npos && close > open) thp = thp.substr(open + 1, close - open - 1);
  }
  const std::string mem = detail::first_field("/proc/meminfo", "MemTotal");
  return {{"cpu", detail::first_field("/proc/cpuinfo", "model name")},
          {"cores", std::thread::hardware_concurrency()},
          {"simd", simd},
          {"transparent_hugepages", thp},
          {"memory_gib", mem.empty() ? 0.0 : std::round(std::stod(mem) / (1 << 20) * 10) / 10}};
}

// Prints the JSON (with the machine, when it is an object without one) and
// also writes it to `path` when one is given; returns the process exit code
// (1 when the file cannot be written).
inline int emit(nlohmann::json out, const std::string& path) {
  if (out.is_object() && !out.contains("machine")) out["machine"] = machine_json();
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
