// What every winnow benchmark needs: wall and thread-CPU timing, medians, the
// machine's load and peak memory (recorded with each result, since the
// reference machine is shared and noisy), the machine itself, and JSON output.
#pragma once

#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
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

// Memory of this process on transparent huge pages now (AnonHugePages of
// /proc/self/smaps_rollup), in MB; -1 where the kernel does not say. 0 while
// the big tables are alive means they sit on 4 KB pages (THP off, refused,
// or not offered by the virtual machine).
inline double huge_pages_mb();

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

// Free blocks of 2 MB or more in /proc/buddyinfo, counted in 2 MB pages (-1
// where unreadable): what a fault can take a huge page from without compacting.
inline long free_2mb_blocks() {
  std::ifstream in("/proc/buddyinfo");
  if (!in) return -1;
  long count = 0;
  for (std::string line; std::getline(in, line);) {
    const std::size_t zone = line.find("zone");
    if (zone == std::string::npos) continue;
    std::istringstream orders(line.substr(zone + 4));
    std::string zone_name;
    orders >> zone_name;
    long free_blocks = 0;
    for (int order = 0; orders >> free_blocks; ++order) {
      if (order >= 9) count += free_blocks << (order - 9);
    }
  }
  return count;
}

// Read once as the benchmark starts, before it takes any memory.
inline const long free_2mb_blocks_at_start = free_2mb_blocks();

}  // namespace detail

inline double huge_pages_mb() {
  const std::string kb = detail::first_field("/proc/self/smaps_rollup", "AnonHugePages");
  return kb.empty() ? -1.0 : std::stod(kb) / 1024.0;
}

// The machine a figure was measured on (docs/benchmarks.md names it for
// every figure): CPU model, cores, the SIMD flags winnow's kernels choose by,
// transparent huge pages (the selected mode), the kernel (MADV_COLLAPSE needs
// 6.1), the free 2 MB blocks when the benchmark started (none: faults may get
// 4 KB pages) and memory. bench/machine.py prints the same for the Python
// benchmarks.
inline nlohmann::json machine_json() {
  const std::string flags = " " + detail::first_field("/proc/cpuinfo", "flags") + " ";
  nlohmann::json simd = nlohmann::json::array();
  for (const char* f :
       {"sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_vnni"}) {
    if (flags.find(" " + std::string(f) + " ") != std::string::npos) simd.push_back(f);
  }
  auto selected = [](const char* path) {
    std::string choice;
    std::ifstream in(path);
    std::getline(in, choice);
    const std::size_t open = choice.find('['), close = choice.find(']');
    if (open != std::string::npos && close > open) return choice.substr(open + 1, close - open - 1);
    return choice;
  };
  const std::string thp = selected("/sys/kernel/mm/transparent_hugepage/enabled");
  const std::string defrag = selected("/sys/kernel/mm/transparent_hugepage/defrag");
  const std::string mem = detail::first_field("/proc/meminfo", "MemTotal");
  utsname name{};
  const std::string kernel = ::uname(&name) == 0 ? name.release : "";
  return {{"cpu", detail::first_field("/proc/cpuinfo", "model name")},
          {"cores", std::thread::hardware_concurrency()},
          {"simd", simd},
          {"transparent_hugepages", thp},
          {"transparent_hugepages_defrag", defrag},
          {"kernel", kernel},
          {"free_2mb_blocks", detail::free_2mb_blocks_at_start},
          {"virtual_machine", flags.find(" hypervisor ") != std::string::npos},
          {"memory_gib", mem.empty() ? 0.0 : std::round(std::stod(mem) / (1 << 20) * 10) / 10}};
}

// Two figures of the memory a plan streams through, so that a plan's time
// on one machine can be told apart from another's (docs/benchmarks.md, "The
// sampler"): one core's copy bandwidth over 128 MiB (GB/s, best of three)
// and the latency of dependent random reads over 256 MiB (ns, on whatever
// pages the kernel gives: 4 KB pages add a TLB miss to each).
inline nlohmann::json memory_probe_json() {
  constexpr std::size_t kCopyBytes = std::size_t{128} << 20;
  std::vector<char> from(kCopyBytes, 1), to(kCopyBytes, 0);
  double best = 1e30;
  for (int run = 0; run < 3; ++run) {
    const auto start = Clock::now();
    std::copy(from.begin(), from.end(), to.begin());
    best = std::min(best, seconds_since(start));
  }
  const double copy_gbps = 2.0 * static_cast<double>(kCopyBytes) / best / 1e9;  // read + write
  constexpr std::size_t kSlots = (std::size_t{256} << 20) / sizeof(std::uint32_t);
  std::vector<std::uint32_t> next(kSlots);
  // One random cycle through every slot (Sattolo's algorithm), so each read
  // depends on the one before and no prefetcher can guess it.
  for (std::size_t i = 0; i < kSlots; ++i) next[i] = static_cast<std::uint32_t>(i);
  std::uint64_t x = 0x9E3779B97F4A7C15ULL;
  for (std::size_t i = kSlots - 1; i > 0; --i) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    std::swap(next[i], next[x % i]);
  }
  constexpr std::size_t kSteps = 2'000'000;
  std::uint32_t at = 0;
  const auto start = Clock::now();
  for (std::size_t i = 0; i < kSteps; ++i) at = next[at];
  const double latency_ns = seconds_since(start) * 1e9 / kSteps;
  return {{"copy_gbps_one_core", std::round(copy_gbps * 10) / 10},
          {"random_read_ns", std::round(latency_ns * 10) / 10},
          {"probe_end_slot", at}};  // keeps the chase from being optimised away
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
