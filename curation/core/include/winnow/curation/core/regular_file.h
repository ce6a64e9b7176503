// RegularFile: a file named by untrusted input (a manifest, a record's
// `path`), opened so that it cannot hang, flood or escape the process.
//
// Only regular files are read (a FIFO, a device or a directory is refused
// without blocking: O_NONBLOCK, then fstat), a symbolic link as the last
// component is followed only when the caller says so (a user's own files;
// never an inbox writer's manifest), the size is capped, and with content
// roots the file must lie beneath one of them with no symbolic link or ".."
// leading out (openat2 with RESOLVE_BENEATH). docs/security.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <streambuf>
#include <string>
#include <vector>

namespace winnow::curation {

struct FileLimits {
  std::uint64_t max_bytes = UINT64_MAX;
  // Folders a file must lie beneath; empty: anywhere the process may read.
  std::vector<std::filesystem::path> roots;
  // Follow a symbolic link as the last component (git-annex and DVC caches,
  // Debian's packages keep files behind links). With roots, only a link
  // whose whole resolution stays beneath its root is followed.
  bool follow_links = false;
};

class RegularFile {
 public:
  // Opens `path` for reading under `limits`. Throws winnow::Error naming the
  // path and `what` it is: kind not_found (missing), invalid_input (not a
  // regular file, a symbolic link not followed, too large, outside the roots)
  // or io.
  RegularFile(const std::string& path, const FileLimits& limits, const char* what = "file");
  ~RegularFile();
  RegularFile(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  RegularFile& operator=(RegularFile&&) = delete;

  // Reads up to `n` bytes; 0 at the end. Throws winnow::Error (io) on a read
  // error, and (invalid_input) once the file has grown past max_bytes.
  std::size_t read(void* buffer, std::size_t n);

  std::uint64_t size_at_open() const { return size_; }
  const std::string& path() const { return path_; }

 private:
  int fd_ = -1;
  std::string path_;
  std::string what_;
  std::uint64_t size_ = 0;
  std::uint64_t max_bytes_ = UINT64_MAX;
  std::uint64_t read_ = 0;
};

// The whole of `path`, opened as a RegularFile under `limits` (so at most
// max_bytes). Throws winnow::Error as RegularFile does.
std::vector<unsigned char> read_regular_file(const std::string& path, const FileLimits& limits,
                                             const char* what = "file");

// A std::streambuf reading a RegularFile through a fixed buffer, so that
// std::istream readers (the manifest reader) get the same guarantees.
class RegularFileStreamBuf : public std::streambuf {
 public:
  explicit RegularFileStreamBuf(RegularFile file);

 protected:
  int_type underflow() override;

 private:
  RegularFile file_;
  std::vector<char> buffer_;
};

}  // namespace winnow::curation
