// Making a write durable: fsync of a file or a folder, named by its path.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

namespace winnow {

// fsyncs `path` (open_flags: O_RDONLY for a file, O_RDONLY | O_DIRECTORY for
// a folder, whose entry list a rename or a new file changed). Returns 0, or
// the errno of the open or the fsync that failed; callers say what failed.
inline int fsync_path(const char* path, int open_flags) noexcept {
  const int fd = ::open(path, open_flags | O_CLOEXEC);
  if (fd < 0) return errno;
  const int error = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  return error;
}

}  // namespace winnow
