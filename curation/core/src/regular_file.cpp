#include "winnow/curation/core/regular_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "winnow/error.h"

namespace winnow::curation {

namespace fs = std::filesystem;

namespace {

constexpr int kOpenFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

int open_flags(const FileLimits& limits) {
  return limits.follow_links ? kOpenFlags : kOpenFlags | O_NOFOLLOW;
}

[[noreturn]] void throw_open_error(int error, const std::string& path, const char* what) {
  if (error == ENOENT || error == ENOTDIR) {
    WINNOW_THROW_KIND(not_found, "{} '{}' does not exist", what, path);
  }
  if (error == ELOOP) {
    WINNOW_THROW_KIND(invalid_input, "{} '{}' is a symbolic link; links are not followed", what,
                      path);
  }
  if (error == EXDEV) {
    WINNOW_THROW_KIND(invalid_input, "{} '{}' leads outside its content root", what, path);
  }
  WINNOW_THROW_KIND(io, "cannot open {} '{}': {}", what, path, std::strerror(error));
}

const char* file_type(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

// The root `path` lies beneath (lexically, after making both absolute), and
// the path relative to it; nothing when it lies beneath none.
bool find_root(const fs::path& path, const std::vector<fs::path>& roots, fs::path& root,
               fs::path& relative) {
  std::error_code ec;
  const fs::path target = fs::absolute(path, ec).lexically_normal();
  if (ec) return false;
  for (const fs::path& r : roots) {
    const fs::path base = fs::absolute(r, ec).lexically_normal();
    if (ec) continue;
    const fs::path rel = target.lexically_relative(base);
    if (rel.empty() || rel == "." || *rel.begin() == "..") continue;
    root = base;
    relative = rel;
    return true;
  }
  return false;
}

// openat2 beneath `root`: the kernel refuses any step (a "..", an absolute
// symbolic link, a link pointing outside) that leaves the root, atomically.
int open_beneath(const fs::path& root, const fs::path& relative, int flags) {
  const int dir = ::open(root.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  open_how how{};
  how.flags = static_cast<std::uint64_t>(flags);
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const int fd = static_cast<int>(::syscall(SYS_openat2, dir, relative.c_str(), &how, sizeof how));
  const int error = errno;
  ::close(dir);
  errno = error;
  return fd;
}

}  // namespace

RegularFile::RegularFile(const std::string& path, const FileLimits& limits, const char* what)
    : path_(path), what_(what), max_bytes_(limits.max_bytes) {
  if (limits.roots.empty()) {
    fd_ = ::open(path.c_str(), open_flags(limits));
  } else {
    fs::path root, relative;
    if (!find_root(path, limits.roots, root, relative)) {
      WINNOW_THROW_KIND(invalid_input, "{} '{}' is outside the content roots", what, path);
    }
    fd_ = open_beneath(root, relative, open_flags(limits));
  }
  if (fd_ < 0) throw_open_error(errno, path, what);
  struct stat st {};
  if (::fstat(fd_, &st) != 0) {
    const int error = errno;
    ::close(fd_);
    WINNOW_THROW_KIND(io, "cannot stat {} '{}': {}", what, path, std::strerror(error));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd_);
    WINNOW_THROW_KIND(invalid_input, "{} '{}' is {}, not a regular file", what, path,
                      file_type(st.st_mode));
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
  if (size_ > max_bytes_) {
    ::close(fd_);
    WINNOW_THROW_KIND(invalid_input, "{} '{}' is {} bytes, more than the limit of {} bytes", what,
                      path, size_, max_bytes_);
  }
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      path_(std::move(other.path_)),
      what_(std::move(other.what_)),
      size_(other.size_),
      max_bytes_(other.max_bytes_),
      read_(other.read_) {}

std::size_t RegularFile::read(void* buffer, std::size_t n) {
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, n);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) {
      WINNOW_THROW_KIND(io, "cannot read {} '{}': {}", what_, path_, std::strerror(errno));
    }
    read_ += static_cast<std::uint64_t>(got);
    // The file may grow after the size check: the cap holds for what is read.
    WINNOW_THROW_IF_NOT_KIND(read_ <= max_bytes_, invalid_input,
                             "{} '{}' grew past the limit of {} bytes while being read", what_,
                             path_, max_bytes_);
    return static_cast<std::size_t>(got);
  }
}

std::vector<unsigned char> read_regular_file(const std::string& path, const FileLimits& limits,
                                             const char* what) {
  RegularFile file(path, limits, what);
  std::vector<unsigned char> bytes(static_cast<std::size_t>(file.size_at_open()));
  std::size_t got = 0;
  while (const std::size_t n = file.read(bytes.data() + got, bytes.size() - got)) {
    got += n;
    if (got == bytes.size()) {
      // The file may have grown since it was opened: read on (read() enforces max_bytes).
      bytes.resize(bytes.size() + (std::size_t{1} << 16));
    }
  }
  bytes.resize(got);
  return bytes;
}

RegularFileStreamBuf::RegularFileStreamBuf(RegularFile file)
    : file_(std::move(file)), buffer_(1 << 16) {
  setg(buffer_.data(), buffer_.data(), buffer_.data());
}

RegularFileStreamBuf::int_type RegularFileStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  const std::size_t n = file_.read(buffer_.data(), buffer_.size());
  if (n == 0) return traits_type::eof();
  setg(buffer_.data(), buffer_.data(), buffer_.data() + n);
  return traits_type::to_int_type(*gptr());
}

}  // namespace winnow::curation
