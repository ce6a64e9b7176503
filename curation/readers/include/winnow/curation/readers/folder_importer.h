// A folder tree of files as one batch of `path` records (`winnow
// import-folder`, docs/cli.md, "Importing a folder").
//
// Labelled (the ImageFolder layout, DIR/<class>/.../<file>): the first folder
// level under the root is the label, files directly in the root have none.
// Unlabelled: every file, at any depth, without a label. Either way:
//   - the key is the file's path relative to the root ('/'-separated, after
//     an optional prefix), so importing the same folder again finds the same
//     keys; in keys and labels, control bytes and invalid UTF-8 of a name are
//     written as \xNN and a backslash as \\ (printable_key, printable_text.h),
//     so two names never share a key;
//   - the walk is sorted (byte order of names, folder by folder), so the
//     order never depends on readdir;
//   - names starting with '.' (files and folders: .git, .DS_Store) are
//     skipped and counted;
//   - a file behind a symbolic link is read wherever the link leads (the
//     user's own folder, as every tool reads it); a folder reached through a
//     link is not entered (no cycles) and a dangling link is rejected with
//     the reason; every other entry (a FIFO, a socket, a device) becomes a
//     record whose file is read as a RegularFile, which refuses it without
//     blocking: it is rejected with the reason;
//   - a file counts as already imported when the dataset has its key from the
//     same source: it is skipped and counted, not rejected as a key clash.
// Only names, sizes and times are held for the whole tree; contents are read
// one file at a time as the pipeline asks (next), so memory does not grow
// with the folder.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/readers/manifest_reader.h"

namespace winnow::curation::readers {

struct FolderImportOptions {
  bool labelled = true;    // false: no labels, every file at any depth
  std::string source;      // of every record; empty: the root folder's name
  std::string key_prefix;  // put before every key (e.g. "train/")
  // How files are read and image files decoded (the root is added as the
  // only content root).
  FileLimits content{ManifestReaderOptions::kDefaultMaxContentBytes, {}};
  ImageReading image;
};

// One entry of the walk: a file (or anything that is not a folder).
struct FolderFile {
  std::string relative;  // path under the root, '/'-separated, as on disk
  std::optional<std::string> label;
  std::uint64_t size = 0;     // from stat (a link's target's)
  std::int64_t mtime_ns = 0;  // from stat (a link's target's)
  std::string unreadable;     // why it cannot be imported (a folder not listed, a link to a folder)
  bool passing = true;        // the reason may pass: a later import tries it again
};

class FolderImporter {
 public:
  // Is `key` already in the dataset from `source`?
  using ImportedTest = std::function<bool(const std::string& key, const std::string& source)>;

  // Walks `root` (winnow::Error if it is not a folder that can be listed)
  // and sets aside the files already imported.
  FolderImporter(const std::filesystem::path& root, FolderImportOptions options,
                 const ImportedTest& already_imported);

  // The next file to import as a record (content hashed, image decoded) or
  // a rejection; false after the last. Never throws for a bad file.
  bool next(ManifestEntry& entry);
  // The same, with the reading and decoding of the file left in
  // entry.deferred. The importer must outlive the deferred work.
  bool next_deferred(ManifestEntry& entry);

  std::size_t total() const { return files_.size(); }  // files to import
  std::size_t done() const { return next_; }           // handed out by next()
  std::size_t already_imported() const { return already_imported_; }
  std::size_t hidden() const { return hidden_; }  // names starting with '.', skipped
  const std::string& source() const { return options_.source; }
  // The batch's identity: the root, the options and every file to import
  // with its size and time, so a failed import of the same files is
  // retried as the same batch.
  std::string checksum() const;

 private:
  void walk(const std::filesystem::path& folder, const std::string& relative,
            const std::optional<std::string>& label);
  std::string key_of(const FolderFile& file) const;

  std::filesystem::path root_;
  FolderImportOptions options_;
  std::vector<FolderFile> files_;
  std::size_t next_ = 0;
  std::size_t already_imported_ = 0;
  std::size_t hidden_ = 0;
};

}  // namespace winnow::curation::readers
