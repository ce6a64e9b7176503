// WalCheckpointer: copies a database's committed WAL frames into the
// database file on a thread and connection of its own, so that the writer's
// COMMIT does not wait for that copy.
//
// In WAL mode a commit appends the transaction's pages to the -wal file; a
// checkpoint later copies them into the database file. By default SQLite runs
// that checkpoint inside the COMMIT that crosses 1,000 WAL pages, on the
// writer's thread, where it is a large part of a big batch's commit
// (docs/benchmarks.md, "Where a batch's time goes"). While a WalCheckpointer lives, the writer's
// automatic checkpoints are off and request() runs a PASSIVE checkpoint on
// the checkpointer's thread instead, beside whatever the writer does next
// (SQLite lets a checkpoint run while another connection writes: it copies
// only frames committed before it started). Durability does not change: a
// commit is durable in the WAL when COMMIT returns (synchronous=FULL), and a
// checkpoint that fails or is cut short leaves the frames in the WAL, where
// every reader finds them and the next checkpoint, or the last connection's
// close, copies them.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

#include "winnow/store/database.h"

namespace winnow::store {

// What the checkpointer's last checkpoint did.
struct WalCheckpointResult {
  int wal_frames = -1;    // frames in the WAL when it ran (-1: none ran yet, or it failed)
  int checkpointed = -1;  // of those, frames now copied into the database file
  std::string error;      // SQLite's message when the checkpoint failed or was busy
};

class WalCheckpointer {
 public:
  // Opens a second connection to `writer`'s file and turns the writer's
  // automatic checkpoints off (restored by the destructor, so `writer` must
  // outlive this object). Throws winnow::Error naming the file when the
  // connection cannot be opened; an in-memory database has no WAL to copy
  // and is refused.
  explicit WalCheckpointer(Database& writer);
  ~WalCheckpointer();  // lets a checkpoint under way finish; skips one not started

  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Asks for a checkpoint of everything committed so far, and returns at
  // once. Requests made while one runs are served by one more checkpoint.
  void request();

  // Blocks until no checkpoint is requested or running (tests; shutdown).
  void wait_idle();

  std::size_t completed() const;  // checkpoints run, failed ones included
  WalCheckpointResult last() const;

 private:
  void run();
  WalCheckpointResult checkpoint();

  Database& writer_;
  int writer_auto_checkpoint_ = 1000;  // the writer's setting, restored at the end
  // The checkpointer's own connection (synchronous=FULL, as the writer's: the
  // checkpoint's fsync of the database file follows it); only thread_ uses it.
  Database connection_;
  mutable std::mutex mutex_;
  std::condition_variable changed_;
  bool requested_ = false;
  bool running_ = false;
  bool stopping_ = false;
  std::size_t completed_ = 0;
  WalCheckpointResult last_;
  std::thread thread_;
};

}  // namespace winnow::store
