#include "winnow/curation/thread_pool.h"

#include <sched.h>

#include <algorithm>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>

#include "winnow/error.h"

namespace winnow::curation {

struct ThreadPool::Arena {
  explicit Arena(int threads) : arena(threads) {}
  tbb::task_arena arena;
};

int ThreadPool::available_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof(set), &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

ThreadPool::ThreadPool(int threads) {
  WINNOW_THROW_IF_NOT(threads >= 0 && threads <= 1024,
                      "threads={} must be 0 (every core) or in [1, 1024]", threads);
  threads_ = threads == 0 ? available_cores() : threads;
  if (threads_ > 1) arena_ = std::make_unique<Arena>(threads_);
}

ThreadPool::~ThreadPool() = default;

void ThreadPool::for_each(std::size_t n, const std::function<void(std::size_t)>& body) const {
  if (!arena_ || n < 2) {
    for (std::size_t i = 0; i < n; ++i) body(i);
    return;
  }
  // TBB cancels the remaining chunks and rethrows the first exception.
  arena_->arena.execute([&] {
    tbb::parallel_for(tbb::blocked_range<std::size_t>(0, n), [&](const auto& range) {
      for (std::size_t i = range.begin(); i != range.end(); ++i) body(i);
    });
  });
}

}  // namespace winnow::curation
