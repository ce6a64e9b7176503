#include "winnow/curation/core/thread_pool.h"

#include <sched.h>

#include <algorithm>
#include <utility>

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/task_arena.h>
#include <tbb/task_group.h>

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

struct ThreadPool::Task::Group {
  explicit Group(tbb::task_arena& in) : arena(in) {}
  tbb::task_arena& arena;
  tbb::task_group group;
};

ThreadPool::Task::Task(std::unique_ptr<Group> group) : group_(std::move(group)) {}

ThreadPool::Task::~Task() {
  try {
    wait();
  } catch (...) {  // a destructor must not throw; wait() is where errors surface
  }
}

void ThreadPool::Task::wait() {
  if (group_) {
    // The group is gone once waited for: TBB requires one wait per run.
    const std::unique_ptr<Group> group = std::move(group_);
    group->arena.execute([&] { group->group.wait(); });
  }
  if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
}

std::unique_ptr<ThreadPool::Task> ThreadPool::start(std::function<void()> work) const {
  if (!arena_) {
    std::unique_ptr<Task> task(new Task(nullptr));
    try {
      work();
    } catch (...) {
      task->error_ = std::current_exception();
    }
    return task;
  }
  auto group = std::make_unique<Task::Group>(arena_->arena);
  Task::Group& g = *group;
  arena_->arena.execute([&] { g.group.run(std::move(work)); });
  return std::unique_ptr<Task>(new Task(std::move(group)));
}

}  // namespace winnow::curation
