#include "winnow/curation/readers/folder_importer.h"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::curation::readers {

namespace fs = std::filesystem;

namespace {

// `root` made absolute, without a trailing separator (so that its file name
// is the folder's name).
fs::path absolute_folder(const fs::path& root) {
  fs::path p = fs::absolute(root).lexically_normal();
  if (!p.has_filename() && p.has_parent_path() && p != p.root_path()) p = p.parent_path();
  return p;
}

}  // namespace

FolderImporter::FolderImporter(const fs::path& root, FolderImportOptions options,
                               const ImportedTest& already_imported)
    : root_(absolute_folder(root)), options_(std::move(options)) {
  std::error_code ec;
  WINNOW_THROW_IF_NOT_KIND(fs::exists(root_, ec), not_found, "folder '{}' does not exist",
                           printable_text(root.string()));
  WINNOW_THROW_IF_NOT(fs::is_directory(root_, ec), "'{}' is not a folder",
                      printable_text(root.string()));
  if (options_.source.empty()) options_.source = printable_text(root_.filename().string());
  // The user's own folder, read with the user's rights: a file behind a
  // symbolic link is read wherever the link leads (git-annex, DVC, Debian's
  // packages keep files so), as every tool does.
  options_.content.roots = {};
  options_.content.follow_links = true;
  walk(root_, "", std::nullopt);
  // Set aside what an earlier import of this folder already brought in.
  auto imported = [&](const FolderFile& f) { return already_imported(key_of(f), options_.source); };
  const auto kept = std::stable_partition(files_.begin(), files_.end(),
                                          [&](const FolderFile& f) { return !imported(f); });
  already_imported_ = static_cast<std::size_t>(files_.end() - kept);
  files_.erase(kept, files_.end());
}

// Depth first, each folder's names in byte order. `label` is the class of
// everything beneath `folder` (none at the root, or when unlabelled).
void FolderImporter::walk(const fs::path& folder, const std::string& relative,
                          const std::optional<std::string>& label) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  if (ec) {
    WINNOW_THROW_IF_NOT_KIND(!relative.empty(), io, "cannot list folder '{}': {}",
                             printable_text(folder.string()), ec.message());
    // A subfolder that cannot be listed is reported as one rejected record.
    files_.push_back({relative, label, 0, 0, ec.message()});
    return;
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name.empty() || name[0] == '.') {
      ++hidden_;
      continue;
    }
    const fs::path path = folder / name;
    const std::string rel = relative.empty() ? name : relative + "/" + name;
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0) {
      files_.push_back({rel, label, 0, 0, std::strerror(errno)});  // vanished meanwhile
      continue;
    }
    if (S_ISLNK(st.st_mode)) {
      struct stat target {};
      if (::stat(path.c_str(), &target) != 0) {
        files_.push_back({rel, label, 0, 0,
                          "a symbolic link whose target cannot be reached: " +
                              std::string(std::strerror(errno))});
        continue;
      }
      if (S_ISDIR(target.st_mode)) {  // a link to a folder is not entered: no cycles
        files_.push_back(
            {rel, label, 0, 0, "a symbolic link to a folder; such links are not entered", false});
        continue;
      }
      st = target;  // a link to a file: the file's size and time
    } else if (S_ISDIR(st.st_mode)) {
      const bool class_folder = relative.empty() && options_.labelled;
      walk(path, rel, class_folder ? std::optional<std::string>(printable_key(name)) : label);
      continue;
    }
    files_.push_back({rel,
                      label,
                      static_cast<std::uint64_t>(st.st_size),
                      std::int64_t{st.st_mtim.tv_sec} * 1000000000 + st.st_mtim.tv_nsec,
                      {}});
  }
}

bool FolderImporter::next(ManifestEntry& entry) {
  if (!next_deferred(entry)) return false;
  entry.complete();
  return true;
}

bool FolderImporter::next_deferred(ManifestEntry& entry) {
  if (next_ == files_.size()) return false;
  const FolderFile& file = files_[next_++];
  entry = ManifestEntry{};
  Rejection rejection{next_, key_of(file), {}, options_.source};
  if (!file.unreadable.empty()) {
    rejection.reason =
        fmt::format("'{}' cannot be read: {}", printable_text(file.relative, 240), file.unreadable);
    rejection.passing = file.passing;
    entry.rejection = std::move(rejection);
    return true;
  }
  ManifestRecord record;
  record.line = next_;  // the file's place in the walk
  record.key = rejection.key;
  record.kind = ContentKind::path;
  record.path = file.relative;
  record.resolved_path = (root_ / file.relative).string();
  record.label = file.label;
  record.source = options_.source;
  entry.deferred = [this, record = std::move(record),
                    rejection = std::move(rejection)](ManifestEntry& e) mutable {
    try {
      if (auto refusal = load_path_content(record, options_.content, options_.image)) {
        rejection.reason = std::move(*refusal);
      }
    } catch (const Error& err) {                      // a link, a FIFO, a device, too large, gone
      rejection.reason = printable_text(err.what());  // it quotes the path as on disk
      rejection.passing = err.kind() == ErrorKind::io || err.kind() == ErrorKind::not_found;
    }
    if (!rejection.reason.empty()) {
      e.rejection = std::move(rejection);
    } else {
      e.record = std::move(record);
    }
  };
  return true;
}

// Keys and labels are text (stored in SQLite, printed as JSON): a name's
// control bytes and invalid UTF-8 are written as \xNN.
std::string FolderImporter::key_of(const FolderFile& file) const {
  return options_.key_prefix + printable_key(file.relative);
}

std::string FolderImporter::checksum() const {
  std::string text = fmt::format("folder\n{}\nlabelled={}\nsource={}\nprefix={}\n", root_.string(),
                                 options_.labelled, options_.source, options_.key_prefix);
  for (const FolderFile& f : files_) {
    text += fmt::format("{}\t{}\t{}\n", f.relative, f.size, f.mtime_ns);
  }
  return "folder:" + dedup::content_hash(ContentKind::text, text.data(), text.size());
}

}  // namespace winnow::curation::readers
