// The file a save writes and then puts at `path` in one step, so that a
// reader of `path` sees the old file or the new one, never a mix
// (docs/index.md, "Persistence").
//
// A save first tries the spare `<path>.spare`: the snapshot before the
// current one, overwritten in place, then swapped with `path`
// (renameat2 RENAME_EXCHANGE) to become the next save's spare. Overwriting
// pages the page cache already holds is what makes this worth a second file:
// a new file of 530 MB (a million 128-d vectors) needs 530 MB of fresh pages,
// which on a virtual machine that hands freed memory back to its host take
// several times longer to fault in than held pages take to overwrite (save
// times: docs/benchmarks.md, "Persistence").
//
// The spare is skipped, and a new temporary file `<path>.tmp.<pid>.<n>` is
// renamed over `path` instead, when it is anything but a regular file of one
// link (a symlink is not followed, a special file not opened, a hard link's
// other name not overwritten), when another save
// holds it (flock), or when the file system cannot exchange names.
#pragma once

#include <cstdint>
#include <string>

namespace winnow::index::detail {

class ReplacementFile {
 public:
  // Opens the spare or creates a temporary file for writing from offset 0.
  // Throws winnow::Error naming the file if neither can be opened.
  explicit ReplacementFile(std::string path);
  // Without commit: a temporary file is removed; a spare is left (it is
  // never read, only overwritten).
  ~ReplacementFile();
  ReplacementFile(const ReplacementFile&) = delete;
  ReplacementFile& operator=(const ReplacementFile&) = delete;

  int fd() const { return fd_; }
  const std::string& name() const { return name_; }  // the file being written

  // Cuts the file to `size` bytes (a spare may be longer), fsyncs it, puts
  // it at `path` and fsyncs the directory. Throws naming the files on error;
  // `path` is then unchanged.
  void commit(std::uint64_t size);

 private:
  bool open_spare();
  void open_temporary();

  std::string path_;
  std::string name_;
  int fd_ = -1;
  bool spare_ = false;
  bool committed_ = false;
};

}  // namespace winnow::index::detail
