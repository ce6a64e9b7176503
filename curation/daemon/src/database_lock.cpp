#include "winnow/curation/daemon/database_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "winnow/error.h"

namespace winnow::curation::daemon {

namespace {

// The pid the holder wrote into the lock file ("unknown" if unreadable).
std::string holder_pid(int fd) {
  char text[32] = {};
  const ssize_t n = ::pread(fd, text, sizeof text - 1, 0);
  if (n <= 0) return "unknown";
  std::string pid(text, static_cast<std::size_t>(n));
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.find_first_not_of("0123456789") == std::string::npos && !pid.empty() ? pid : "unknown";
}

}  // namespace

DatabaseLock::DatabaseLock(const std::string& db) : path_(db + ".serve.lock") {
  fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
  WINNOW_THROW_IF_NOT_KIND(fd_ >= 0, io, "cannot open lock file '{}': {}", path_,
                           std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    const std::string pid = error == EWOULDBLOCK ? holder_pid(fd_) : "";
    ::close(fd_);
    WINNOW_THROW_IF_NOT_KIND(error != EWOULDBLOCK, busy,
                             "database is already served by another `winnow serve` (pid {}; lock "
                             "file '{}'): one daemon per database",
                             pid, path_);
    WINNOW_THROW_KIND(io, "cannot lock '{}': {}", path_, std::strerror(error));
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 ||
      ::pwrite(fd_, pid.data(), pid.size(), 0) != static_cast<ssize_t>(pid.size())) {
    const int error = errno;
    ::close(fd_);
    WINNOW_THROW_KIND(io, "cannot write the pid into lock file '{}': {}", path_,
                      std::strerror(error));
  }
}

DatabaseLock::~DatabaseLock() {
  if (fd_ >= 0) ::close(fd_);  // releases the lock; the file stays (harmless)
}

}  // namespace winnow::curation::daemon
