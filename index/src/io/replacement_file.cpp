#include "io/replacement_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>  // renameat2, RENAME_EXCHANGE
#include <cstring>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::index::detail {
namespace {

std::string spare_path(const std::string& path) {
  return path + ".spare";
}

std::string parent_directory(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool same_file(const struct stat& a, const struct stat& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

}  // namespace

ReplacementFile::ReplacementFile(std::string path) : path_(std::move(path)) {
  if (!open_spare()) open_temporary();
}

ReplacementFile::~ReplacementFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_ && !spare_) ::unlink(name_.c_str());
}

// The spare is used only if it is a regular file of one link (overwriting
// it changes nothing else), opened without following a symlink or blocking
// on a special file, locked against another process's save, and still the
// file at the spare's name once locked (another save may have swapped it
// into `path` in between).
bool ReplacementFile::open_spare() {
  const std::string spare = spare_path(path_);
  struct stat named {};
  if (::lstat(spare.c_str(), &named) == 0 ? !S_ISREG(named.st_mode) : errno != ENOENT) {
    return false;
  }
  const int fd =
      ::open(spare.c_str(), O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  struct stat opened {};
  const bool usable = ::fstat(fd, &opened) == 0 && S_ISREG(opened.st_mode) &&
                      opened.st_nlink == 1 && ::flock(fd, LOCK_EX | LOCK_NB) == 0 &&
                      ::lstat(spare.c_str(), &named) == 0 && same_file(named, opened);
  if (!usable) {
    ::close(fd);
    return false;
  }
  fd_ = fd;
  name_ = spare;
  spare_ = true;
  return true;
}

void ReplacementFile::open_temporary() {
  static std::atomic<unsigned> counter{0};
  name_ = fmt::format("{}.tmp.{}.{}", path_, static_cast<long>(::getpid()), counter.fetch_add(1));
  fd_ = ::open(name_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644);
  WINNOW_THROW_IF_NOT(fd_ >= 0, "cannot create temporary file '{}' for vector index '{}': {}",
                      name_, path_, std::strerror(errno));
}

void ReplacementFile::commit(std::uint64_t size) {
  if (spare_) {
    WINNOW_THROW_IF_NOT(::ftruncate(fd_, static_cast<off_t>(size)) == 0,
                        "cannot cut '{}' to {} bytes: {}", name_, size, std::strerror(errno));
  }
  WINNOW_THROW_IF_NOT(::fsync(fd_) == 0, "cannot fsync '{}': {}", name_, std::strerror(errno));
  // A spare swaps names with a regular file at `path` and so keeps the old
  // snapshot's pages for the next save; anything else (no file yet, a
  // symlink, a file system without RENAME_EXCHANGE) is replaced by rename.
  struct stat current {};
  const bool exchange = spare_ && ::lstat(path_.c_str(), &current) == 0 && S_ISREG(current.st_mode);
  if (!(exchange &&
        ::renameat2(AT_FDCWD, name_.c_str(), AT_FDCWD, path_.c_str(), RENAME_EXCHANGE) == 0) &&
      ::rename(name_.c_str(), path_.c_str()) != 0) {
    WINNOW_THROW("cannot rename '{}' to vector index file '{}': {}", name_, path_,
                 std::strerror(errno));
  }
  committed_ = true;
  // Closing releases the spare's lock only now that the names are swapped.
  // The data is on disk already (fsync), so close's result adds nothing.
  ::close(fd_);
  fd_ = -1;
  // Make the rename itself durable.
  const int dfd = ::open(parent_directory(path_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

}  // namespace winnow::index::detail
