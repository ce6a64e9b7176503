// Saving and loading vector indexes, and opening one with a rebuild fallback.
// Saves are atomic (temporary file, fsync, rename): readers see the old file
// or the new one. Loading verifies magic, version, checksums, size and the
// FAISS data, and throws winnow::Error naming the path on any mismatch.
// Details: docs/index.md#persistence
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "winnow/index/vector_index.h"

namespace winnow::index {

// What the index was built from, supplied by the caller (e.g. the store's
// number of accepted samples and its last sample id). A file whose
// fingerprint differs from the caller's current one is stale.
struct IndexFingerprint {
  std::uint64_t sample_count = 0;
  std::int64_t last_sample_id = -1;

  friend bool operator==(const IndexFingerprint& a, const IndexFingerprint& b) {
    return a.sample_count == b.sample_count && a.last_sample_id == b.last_sample_id;
  }
  friend bool operator!=(const IndexFingerprint& a, const IndexFingerprint& b) { return !(a == b); }
};

// Writes the index atomically (temp file + fsync + rename).
void save_vector_index(const VectorIndex& index, const std::string& path,
                       const IndexFingerprint& fingerprint = {});

struct LoadedVectorIndex {
  std::unique_ptr<VectorIndex> index;
  IndexFingerprint fingerprint;
};

// Reads and verifies a whole file. Throws winnow::Error naming the path if it
// is missing, truncated, corrupt or of an unknown version.
LoadedVectorIndex load_vector_index(const std::string& path);

// The header of an index file, read and verified without the payload.
struct VectorIndexFileInfo {
  std::uint32_t version = 0;
  std::string config;
  std::size_t dim = 0;
  std::uint64_t rows = 0;
  std::uint64_t live = 0;
  IndexFingerprint fingerprint;
  std::uint64_t payload_size = 0;
};
VectorIndexFileInfo read_vector_index_info(const std::string& path);

enum class RebuildReason {
  none,            // loaded from the file
  missing,         // no file at path
  corrupt,         // unreadable, truncated, bad checksum, ...
  config_changed,  // file holds another index type/parameters or dimension
  stale,           // file's fingerprint differs from the expected one
  foreign,         // the catch-up found vectors that are not its source's
};
const char* to_string(RebuildReason reason);

// One batch of rebuild input: ids.size() rows of vectors (row-major).
struct VectorBatch {
  std::vector<std::int64_t> ids;
  std::vector<float> vectors;
};

// Called repeatedly with an emptied batch to fill; returns false when there is
// nothing more (the batch of that call is ignored).
using RebuildSource = std::function<bool(VectorBatch& batch)>;

struct OpenResult {
  std::unique_ptr<VectorIndex> index;
  bool rebuilt = false;
  RebuildReason reason = RebuildReason::none;
  std::string detail;         // human-readable cause of the rebuild (empty if loaded)
  bool saved = false;         // the rebuilt index was written to path
  double save_seconds = 0.0;  // how long that took
  std::string save_error;     // why saving failed, if it did (the index is still returned)
};

// The fingerprint of an index's own contents: its live vectors and largest id.
IndexFingerprint fingerprint_of(const VectorIndex& index);

// What a catch-up changed in a loaded index.
struct CatchUpCounts {
  std::size_t added = 0;
  std::size_t removed = 0;
  // Set by a catch-up that finds the file is not a snapshot of its source
  // (another dataset's index under the expected name): open_or_catch_up then
  // rebuilds, with reason `foreign` and this as the detail.
  std::string foreign;
};
// Brings a loaded index up to date with the caller's source of truth (adds
// what is missing, removes what is gone); returns what it changed.
using CatchUp = std::function<CatchUpCounts(VectorIndex& index)>;

struct CaughtUpIndex {
  OpenResult open;       // loaded (reason none) or rebuilt (and why)
  CatchUpCounts counts;  // of the catch-up of a loaded file
};

// The incremental way to open: a file that is intact and of `config` and
// `dim` is loaded however old it is and handed to `catch_up`, so a file saved
// some batches ago costs only those batches' vectors; a missing, corrupt or
// reconfigured file is rebuilt from `rebuild` and saved with its own
// fingerprint (fingerprint_of), as is one whose catch-up reports it foreign.
// Errors from `rebuild` and `catch_up` propagate.
CaughtUpIndex open_or_catch_up(const std::string& path, const std::string& config, std::size_t dim,
                               const RebuildSource& rebuild, const CatchUp& catch_up);

// Loads the index at `path` if it exists, is intact, matches `config` and
// `dim` and carries `fingerprint`; otherwise builds a new index from `rebuild`
// batches and saves it to `path` with `fingerprint`. Errors from `rebuild` or
// in its batches propagate.
OpenResult open_or_rebuild(const std::string& path, const std::string& config, std::size_t dim,
                           const IndexFingerprint& fingerprint, const RebuildSource& rebuild);

}  // namespace winnow::index
