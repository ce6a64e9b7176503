// Shared helpers for the curation benchmarks: the Fashion-MNIST paths, plus
// bench/bench_support.h (timing, JSON output).
#pragma once

#include <string>

#include "bench_support.h"

namespace winnow::curation::bench {

inline const std::string kFashionDir = "/usr/share/datasets/fashion-mnist";

// Timing, medians and JSON output are shared with every winnow benchmark.
using namespace winnow::bench;

}  // namespace winnow::curation::bench
