// ThreadPool: runs the independent work of a micro-batch (parsing and
// decoding records, embedding them, verifying near-duplicate candidates) on a
// fixed number of threads. oneTBB underneath (a task arena of that size):
// idle workers sleep rather than spin, which matters on a shared 2-core box.
// With one thread, every loop runs on the calling thread, in order.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <memory>

namespace winnow::curation {

class ThreadPool {
 public:
  // `threads` >= 1, or 0 for every core this process may use.
  explicit ThreadPool(int threads = 1);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return threads_; }

  // Calls body(i) for every i in [0, n) and returns when all calls are done.
  // Calls may run concurrently and in any order, so `body` must only write
  // what belongs to its i. The first exception a call throws is rethrown
  // here, after the other calls finished or were skipped.
  void for_each(std::size_t n, const std::function<void(std::size_t)>& body) const;

  // Work started on the pool (start()): wait() returns once it is done and
  // rethrows what it threw. Destroying a task waits for it too (and drops
  // its exception), so nothing it writes to goes before it finishes.
  class Task {
   public:
    ~Task();
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    void wait();

   private:
    friend class ThreadPool;
    struct Group;
    explicit Task(std::unique_ptr<Group> group);
    std::unique_ptr<Group> group_;  // null with one thread, or once waited for
    std::exception_ptr error_;      // what the work threw, with one thread
  };

  // Starts `work` on a thread of the pool and returns while it runs, so the
  // caller can go on with something else; work the task gives the pool
  // (for_each) shares its threads. With one thread, `work` runs here, to the
  // end, before start() returns.
  std::unique_ptr<Task> start(std::function<void()> work) const;

  // The number of cores this process may use (its CPU affinity), at least 1.
  static int available_cores();

 private:
  struct Arena;
  int threads_ = 1;
  std::unique_ptr<Arena> arena_;  // null with one thread
};

}  // namespace winnow::curation
