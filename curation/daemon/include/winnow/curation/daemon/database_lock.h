// DatabaseLock: at most one daemon per dataset. An advisory lock (flock) on
// DB.serve.lock, holding the owner's pid, taken for the daemon's lifetime and
// released by the kernel however the process ends.
#pragma once

#include <string>

namespace winnow::curation::daemon {

class DatabaseLock {
 public:
  // Takes the lock of database `db`, or throws winnow::Error (kind busy)
  // naming the pid of the process that holds it.
  explicit DatabaseLock(const std::string& db);
  ~DatabaseLock();
  DatabaseLock(const DatabaseLock&) = delete;
  DatabaseLock& operator=(const DatabaseLock&) = delete;

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace winnow::curation::daemon
