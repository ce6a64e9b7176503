#include "winnow/curation/daemon/inbox.h"

#include <fcntl.h>
#include <stdio.h>  // renameat2
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <system_error>
#include <utility>

#include "winnow/error.h"
#include "winnow/file_sync.h"

namespace winnow::curation::daemon {

namespace fs = std::filesystem;

namespace {

bool is_manifest_name(const fs::path& path) {
  const std::string name = path.filename().string();
  return !name.empty() && name[0] != '.' && path.extension() == ".jsonl";
}

// lstat: the entry itself, never what a link points to.
bool entry_stat(const fs::path& path, struct stat& st) {
  return ::lstat(path.c_str(), &st) == 0;
}

std::int64_t mtime_ns(const struct stat& st) {
  return static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
}

// Manifests in `dir`, oldest first (then by name, for files of the same time).
std::vector<fs::path> manifests_in(const fs::path& dir) {
  std::vector<std::pair<std::int64_t, fs::path>> found;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (!is_manifest_name(e.path())) continue;
    struct stat st {};
    if (!entry_stat(e.path(), st) || S_ISDIR(st.st_mode)) continue;  // vanished, or a folder
    found.emplace_back(mtime_ns(st), e.path());
  }
  WINNOW_THROW_IF_NOT_KIND(!ec, io, "cannot list inbox folder '{}': {}", dir.string(),
                           ec.message());
  std::sort(found.begin(), found.end());
  std::vector<fs::path> paths;
  paths.reserve(found.size());
  for (auto& f : found) paths.push_back(std::move(f.second));
  return paths;
}

// The n-th candidate name for `name` in `dir`: dir/name, then dir/stem.N.ext.
fs::path numbered(const fs::path& dir, const fs::path& name, int n) {
  if (n == 0) return dir / name;
  return dir / (name.stem().string() + "." + std::to_string(n) + name.extension().string());
}

// Makes a rename or a new file durable: the folder's entry list is synced.
void sync_folder(const fs::path& dir) {
  const int error = fsync_path(dir.c_str(), O_RDONLY | O_DIRECTORY);
  WINNOW_THROW_IF_NOT_KIND(error == 0, io, "cannot sync folder '{}': {}", dir.string(),
                           std::strerror(error));
}

// Renames `from` to `to` unless `to` exists, then syncs both folders.
// Returns 0, or the errno of the rename (EEXIST: the name is taken).
int rename_no_replace(const fs::path& from, const fs::path& to) {
  if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) != 0) {
    return errno;
  }
  sync_folder(to.parent_path());
  sync_folder(from.parent_path());
  return 0;
}

// Renames `from` into `dir` under its own name or the first free numbered
// one, never replacing a file; nothing when `from` vanished meanwhile.
std::optional<fs::path> move_into(const fs::path& from, const fs::path& dir) {
  for (int n = 0;; ++n) {
    const fs::path target = numbered(dir, from.filename(), n);
    const int error = rename_no_replace(from, target);
    if (error == 0) return target;
    if (error == EEXIST) continue;
    if (error == ENOENT) return std::nullopt;
    WINNOW_THROW_KIND(io, "cannot move '{}' to '{}': {}", from.string(), target.string(),
                      std::strerror(error));
  }
}

fs::path require_moved(std::optional<fs::path> moved, const fs::path& from) {
  WINNOW_THROW_IF_NOT_KIND(moved.has_value(), not_found, "'{}' vanished before it could be moved",
                           from.string());
  return std::move(*moved);
}

// Creates `path` exclusively (never through an existing file or link) with
// `text`, synced; false when the name is taken.
bool create_new_file(const fs::path& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0 && errno == EEXIST) return false;
  WINNOW_THROW_IF_NOT_KIND(fd >= 0, io, "cannot create '{}': {}", path.string(),
                           std::strerror(errno));
  std::size_t written = 0;
  int error = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      error = errno;
      break;
    }
    written += static_cast<std::size_t>(n);
  }
  if (error == 0 && ::fsync(fd) != 0) error = errno;
  ::close(fd);
  if (error != 0) {
    ::unlink(path.c_str());
    WINNOW_THROW_KIND(io, "cannot write '{}': {}", path.string(), std::strerror(error));
  }
  return true;
}

void make_dir(const fs::path& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  WINNOW_THROW_IF_NOT_KIND(!ec, io, "cannot create folder '{}': {}", dir.string(), ec.message());
  // is_directory would follow a link: the inbox's own folders must be real.
  WINNOW_THROW_IF_NOT(fs::is_directory(fs::symlink_status(dir)),
                      "'{}' exists and is not a folder (a symbolic link is not accepted)",
                      dir.string());
}

}  // namespace

Inbox::Inbox(fs::path folder) : folder_(std::move(folder)) {
  make_dir(folder_);
  make_dir(processing_dir());
  make_dir(processed_dir());
  make_dir(failed_dir());
}

std::vector<fs::path> Inbox::waiting() const {
  return manifests_in(folder_);
}

std::vector<fs::path> Inbox::settled(std::chrono::milliseconds hold) {
  const auto now = std::chrono::steady_clock::now();
  std::map<fs::path, Observation> seen;
  std::vector<fs::path> ready;
  for (fs::path& path : waiting()) {
    struct stat st {};
    if (!entry_stat(path, st)) continue;
    Observation o{static_cast<std::uintmax_t>(st.st_size), mtime_ns(st), now};
    const auto before = observed_.find(path);
    if (before != observed_.end() && before->second.size == o.size &&
        before->second.mtime_ns == o.mtime_ns) {
      o.since = before->second.since;
      if (now - o.since >= hold) ready.push_back(path);
    }
    seen.emplace(std::move(path), o);
  }
  observed_ = std::move(seen);  // forget what left the inbox
  return ready;
}

std::vector<fs::path> Inbox::interrupted() const {
  return manifests_in(processing_dir());
}

std::optional<fs::path> Inbox::claim(const fs::path& manifest) {
  return move_into(manifest, processing_dir());
}

fs::path Inbox::put_back(const fs::path& claimed) {
  return require_moved(move_into(claimed, folder_), claimed);
}

fs::path Inbox::mark_processed(const fs::path& claimed) {
  return require_moved(move_into(claimed, processed_dir()), claimed);
}

fs::path Inbox::mark_failed(const fs::path& claimed, const std::string& reason) {
  // The reason first: a crash between the two leaves the manifest in
  // processing/, to be tried again, never a failed manifest without reason.
  for (int n = 0;; ++n) {
    const fs::path target = numbered(failed_dir(), claimed.filename(), n);
    const fs::path reason_file = target.string() + ".reason.txt";
    if (!create_new_file(reason_file, reason + "\n")) continue;
    const int error = rename_no_replace(claimed, target);
    if (error == 0) return target;
    ::unlink(reason_file.c_str());
    if (error == EEXIST) continue;
    throw Error(fmt::format("cannot move '{}' to '{}': {}", claimed.string(), target.string(),
                            std::strerror(error)),
                __func__, __FILE__, __LINE__,
                error == ENOENT ? ErrorKind::not_found : ErrorKind::io);
  }
}

}  // namespace winnow::curation::daemon
