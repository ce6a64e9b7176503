// Reading JSON Lines manifests one line at a time.
//
// Every non-blank line yields either a ManifestRecord or a Rejection with the
// line number, the key when it could be read and the reason (valid UTF-8,
// with the input quoted only in short cleaned excerpts). Bad records never
// throw; only a manifest that cannot be read as text does (winnow::Error): an
// I/O error, a directory, or a NUL byte in its first 4 KiB (a binary file).
// Lines are read through a fixed buffer: a line longer than
// max_line_bytes is skipped to its end without being stored and rejected.
// Blank (whitespace-only) lines are skipped silently. Unknown fields are
// ignored.
#pragma once

#include <cstddef>
#include <istream>
#include <memory>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "winnow/curation/readers/image_file.h"
#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/core/regular_file.h"

namespace winnow::curation::readers {

struct Rejection {
  std::size_t line = 0;  // 1-based
  std::string key;       // empty when the key could not be read
  std::string reason;
  std::string source;  // the rejected sample's source, when known (import-folder); else empty
  // The reason may pass: the file could not be opened or read, or was gone
  // (an I/O error, permissions, removed mid-import). The rejected sample
  // then leaves the key free, so that a later import tries the file again.
  bool passing = false;
};

struct ManifestReaderOptions {
  std::size_t max_line_bytes = 16u << 20;  // longer lines are rejected
  // Required length of `embedding` when present (0: any non-empty length).
  std::size_t expected_embedding_dim = 0;
  // Compute ManifestRecord::content_hash (reads the file of `path` records;
  // an unreadable file is then a rejection).
  bool hash_content = true;
  // Directory that relative `path` values are resolved against. Empty: the
  // manifest's own directory (file constructor) or the working directory.
  std::string base_dir;
  // The files `path` records name: at most this many bytes, and, when roots
  // are given (winnow serve --content-root), only beneath them. With roots, a
  // refused path's reason does not say whether the file exists.
  FileLimits content{kDefaultMaxContentBytes, {}};
  // Image files among the `path` records: decoded into a working image of
  // this size while hashing (IngestPipeline::image_reading gives the
  // dataset's); off by default.
  ImageReading image;
  // Refuse the input as binary when a NUL byte comes among its first bytes
  // (kBinarySniffBytes). Off for a part of a manifest that does not start it
  // (winnow.dask's partitions): the sniff belongs to the file's start.
  bool check_binary = true;
  // Open the manifest itself through a symbolic link (a user's own manifest,
  // `winnow ingest`); the daemon's inbox manifests never are.
  bool follow_manifest_link = false;
  static constexpr std::uint64_t kDefaultMaxContentBytes = std::uint64_t{256} << 20;  // 256 MiB
};

// Either a record or a rejection.
struct ManifestEntry {
  std::optional<ManifestRecord> record;
  std::optional<Rejection> rejection;
  // Work left to make the entry (parse its line, read and decode its file),
  // handed out by next_deferred so that the ingest can run several entries'
  // work on its threads; it sets record or rejection. It reads only state
  // that stays fixed while it may run (the reader's options, the line).
  std::function<void(ManifestEntry&)> deferred;
  bool ok() const { return record.has_value(); }
  // Runs and clears `deferred`, if any.
  void complete();
};

// The file of a `path` record (record.resolved_path), read once under
// `limits`: sets its content hash and, for an image file, its working image
// (attach_working_image). Returns the reason when the file is an image that
// cannot be decoded; throws winnow::Error (RegularFile's message: missing, a
// symbolic link, a FIFO, too large, outside the roots) when it cannot be read.
std::optional<std::string> load_path_content(ManifestRecord& record, const FileLimits& limits,
                                             const ImageReading& image);

// Parses one manifest line (without its newline). Never throws for bad
// input; reads the file of a `path` record when options.hash_content.
ManifestEntry parse_manifest_line(std::string_view line, std::size_t line_number,
                                  const ManifestReaderOptions& options = {});

class ManifestReader {
 public:
  // Opens a manifest file (a regular file, never through a symbolic link:
  // RegularFile); throws winnow::Error naming the path if it cannot.
  explicit ManifestReader(const std::string& path, ManifestReaderOptions options = {});
  // Reads from a stream the caller keeps alive; `name` appears in errors.
  ManifestReader(std::istream& in, std::string name, ManifestReaderOptions options = {});

  // Reads the next non-blank line into `entry`; returns false at the end of
  // the input. Throws winnow::Error on a read error of the manifest.
  bool next(ManifestEntry& entry);
  // The same, with the parsing left in entry.deferred (a line over the length
  // limit is rejected at once). The reader must outlive the deferred work.
  bool next_deferred(ManifestEntry& entry);

  // Lines consumed so far (including blank ones), and their bytes.
  std::size_t lines_read() const { return line_; }
  std::size_t bytes_read() const { return bytes_read_; }
  const std::string& name() const { return name_; }

 private:
  // Reads one raw line into line_buf_; returns false at EOF with no data.
  // Sets too_long_ when the line exceeded the limit (its bytes are dropped).
  bool read_line();

  std::unique_ptr<RegularFileStreamBuf> owned_buf_;
  std::unique_ptr<std::istream> owned_;
  std::istream* in_ = nullptr;
  std::string name_;
  ManifestReaderOptions options_;
  std::string line_buf_;
  std::size_t line_length_ = 0;  // full length, even when too long
  bool too_long_ = false;
  std::size_t line_ = 0;
  std::size_t bytes_read_ = 0;  // of the whole manifest

  // A NUL byte among the first this many bytes: the manifest is binary.
  static constexpr std::size_t kBinarySniffBytes = 4096;
};

// Hex checksum of a file (the manifest's batch identity); through a symbolic
// link when follow_link (a user's own manifest, not an inbox's).
std::string file_checksum(const std::string& path, bool follow_link = false);

// Reads a whole manifest (records and rejections); throws winnow::Error if the
// file cannot be read.
std::vector<ManifestEntry> read_manifest(const std::string& path,
                                         const ManifestReaderOptions& options = {});

}  // namespace winnow::curation::readers
