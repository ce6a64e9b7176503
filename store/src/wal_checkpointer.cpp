#include "winnow/store/wal_checkpointer.h"

#include <sqlite3.h>

#include <string>

#include <fmt/format.h>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

int auto_checkpoint_of(Database& db) {
  Statement pragma(db, "PRAGMA wal_autocheckpoint");
  WINNOW_THROW_IF_NOT(pragma.step(), "{}: PRAGMA wal_autocheckpoint returned no row", db.path());
  return static_cast<int>(pragma.column_int64(0));
}

void set_auto_checkpoint(Database& db, int pages) {
  db.exec(fmt::format("PRAGMA wal_autocheckpoint = {}", pages).c_str());
}

// The path is checked before the second connection opens: Database(":memory:")
// would open a database of its own, empty.
std::string file_of(const Database& db) {
  WINNOW_THROW_IF_NOT(db.path() != ":memory:",
                      "an in-memory database has no WAL file to checkpoint");
  return db.path();
}

}  // namespace

WalCheckpointer::WalCheckpointer(Database& writer) : writer_(writer), connection_(file_of(writer)) {
  writer_auto_checkpoint_ = auto_checkpoint_of(writer);
  set_auto_checkpoint(writer, 0);
  thread_ = std::thread([this] { run(); });
}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  // The writer checkpoints at its commits again. A destructor cannot
  // report; a failure leaves automatic checkpoints off, and the last
  // connection's close still copies the WAL.
  try {
    set_auto_checkpoint(writer_, writer_auto_checkpoint_);
  } catch (const std::exception&) {
  }
}

void WalCheckpointer::request() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    requested_ = true;
  }
  changed_.notify_all();
}

void WalCheckpointer::wait_idle() {
  std::unique_lock<std::mutex> lock(mutex_);
  changed_.wait(lock, [&] { return stopping_ || (!requested_ && !running_); });
}

std::size_t WalCheckpointer::completed() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_;
}

WalCheckpointResult WalCheckpointer::last() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_;
}

void WalCheckpointer::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    changed_.wait(lock, [&] { return stopping_ || requested_; });
    if (stopping_) break;
    requested_ = false;
    running_ = true;
    lock.unlock();
    WalCheckpointResult result = checkpoint();
    lock.lock();
    running_ = false;
    ++completed_;
    last_ = std::move(result);
    changed_.notify_all();
  }
  changed_.notify_all();  // a wait_idle() returns once stopping
}

// PASSIVE: copies what no reader still needs and never waits for a lock, so
// the writer is never held up by it. SQLITE_BUSY (another process's
// checkpoint under way) leaves the frames for the next one.
WalCheckpointResult WalCheckpointer::checkpoint() {
  WalCheckpointResult result;
  const int rc = sqlite3_wal_checkpoint_v2(connection_.handle(), nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                           &result.wal_frames, &result.checkpointed);
  if (rc != SQLITE_OK) {
    result.error = fmt::format("{}: WAL checkpoint failed: {} ({})", writer_.path(),
                               sqlite3_errmsg(connection_.handle()), sqlite3_errstr(rc));
    result.wal_frames = -1;
    result.checkpointed = -1;
  }
  return result;
}

}  // namespace winnow::store
