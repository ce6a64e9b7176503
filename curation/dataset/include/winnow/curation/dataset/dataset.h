// Dataset: one curated dataset as a process holds it open. It owns the
// SQLite MetadataStore, the vector index of the judged samples persisted
// beside it (a cache, rebuilt from the store's curation_vectors when missing
// or stale), the embedder and the look-up caches over the store. Writers
// (ingest/ingester.h, the review/ functions) change it inside their own write
// transactions. Schema and durability: docs/ingest.md, "Where the vectors
// live", and docs/store.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/dedup/colour_image_verifier.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/readers/image_file.h"
#include "winnow/index/vector_index.h"
#include "winnow/index/vector_index_io.h"
#include "winnow/store/metadata_store.h"

namespace winnow::store {
class WalCheckpointer;
}  // namespace winnow::store

namespace winnow::curation {

class ThreadPool;
struct AcceptedLabelCache;  // lookup/accepted_labels.h
class StoredContentCache;   // lookup/stored_content_cache.h
class StoredTextSketches;   // lookup/stored_text_sketches.h
class StoredSampleFilter;   // lookup/stored_sample_filter.h

struct IndexInfo {
  std::string type;
  std::string config;
  std::size_t vectors = 0;
  std::string file;
  bool rebuilt = false;  // at open
  std::string rebuild_reason;
  // At open, a loaded snapshot brought up to date from the store:
  index::CatchUpCounts caught_up;
};

// When the index file (a snapshot of the judged samples' vectors, accepted
// and label_issue; the store is the truth) is saved after a batch. by_cost:
// once the index insertions since the last snapshot, which the next process
// to open it would redo, took kSnapshotCostRatio times as long as loading
// or saving the snapshot did; so saving costs at most a quarter as much as
// inserting, whatever the store's size, and a process that dies redoes at
// most about four snapshots' time of insertions when the next one opens.
// A clean end of a process saves what is left (save_index_if_behind), so
// the next one usually opens without catching up. The others are for tests
// and benchmarks.
enum class IndexSnapshots { by_cost, every_batch, never };

// How a Dataset opens its store: to write, or only to read (status, export:
// a database the user may not write is still read; the index is rebuilt in
// memory when needed, and a failed save of it is only noted).
enum class OpenMode { read_write, read_only };
inline constexpr double kSnapshotCostRatio = 4.0;

// What after_index_insertions did with the index file.
struct IndexSaveOutcome {
  bool saved = false;
  double seconds = 0.0;  // of the save, when it ran
  std::string error;     // why a save failed (a warning: the index is a cache)
};

class Dataset {
 public:
  // Creates (or re-initialises an empty) database with `config`; throws
  // winnow::Error when the file already holds samples with another config.
  // With `asked_keys` (the config's JSON keys the caller set on purpose: the
  // options a user gave `winnow init`), a database that holds samples keeps
  // its stored value of every other key, so that a default changed by a
  // later winnow does not refuse an init that asks for nothing new.
  static void init(const std::string& db_path, const CurationConfig& config,
                   const std::optional<std::set<std::string>>& asked_keys = std::nullopt);

  // Opens an initialised database (winnow::Error if it is missing or was
  // never initialised) and its index, rebuilding the index when needed.
  explicit Dataset(const std::string& db_path, OpenMode mode = OpenMode::read_write);
  ~Dataset();
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;

  const std::string& path() const { return db_path_; }
  store::MetadataStore& store() { return *store_; }
  const CurationConfig& config() const { return config_; }
  const embed::Embedder& embedder() const { return *embedder_; }
  // How a reader decodes image files for this dataset: the embedder's
  // working image size and the config's max_image_pixels (image_file.h).
  readers::ImageReading image_reading() const;
  // Label text <-> stored integer label (integers map to themselves; other
  // names get ids recorded in meta).
  const LabelNames& label_names() const { return label_names_; }
  LabelNames& label_names() { return label_names_; }

  IndexInfo index_info() const;
  const std::string& index_path() const { return index_path_; }
  void set_index_snapshots(IndexSnapshots when) { snapshots_ = when; }
  // Saves the index file now (atomically, with the index's own fingerprint).
  void save_index_snapshot();
  // Saves it if insertions since the last snapshot are not in it: what a
  // process does when it ends cleanly (ingest, import-*, the daemon when
  // stopped or idle), so that the next one opens without catching up.
  // Returns whether it saved. Throws if the save fails; nothing is lost then
  // (the index is a cache: the next open catches up from the store).
  bool save_index_if_behind();

  // Threads for the work of a micro-batch that does not depend on its
  // decisions (parsing, reading and decoding files, embedding, searching,
  // verifying stored candidates): 0 for every core, 1 (the default) for the
  // calling thread alone. FAISS's own OpenMP loops are then kept to one
  // thread. Decisions do not depend on it.
  void set_threads(int threads);
  int threads() const;
  const ThreadPool& pool() const { return *pool_; }

  // --- What the writers (ingest, review) work on -------------------------
  // The judged samples: accepted and label_issue (a label issue stays a
  // near-duplicate candidate and a label voter; which of the two a neighbour
  // is, accepted_labels() says). Opened (or reopened) when needed.
  index::VectorIndex& index();
  AcceptedLabelCache& accepted_labels() { return *accepted_labels_; }
  const dedup::ColourImageNearDuplicateVerifier& image_verifier() const {  // colour, else grey
    return *image_verifier_;
  }
  const dedup::TextNearDuplicateVerifier& text_verifier() const { return *text_verifier_; }
  // Stored contents read to verify near-duplicate candidates, kept across
  // batches (lookup/stored_content_cache.h).
  StoredContentCache& stored_contents() { return *stored_contents_; }
  // Sketches of the stored texts written or read, for the process's life
  // (lookup/stored_text_sketches.h).
  StoredTextSketches& text_sketches() { return *text_sketches_; }
  // The stored samples' content hashes and keys, which answer most of an
  // ingest's lookups without the store (lookup/stored_sample_filter.h).
  StoredSampleFilter& stored_samples() { return *stored_samples_; }

  // Several processes may write one dataset (the daemon, `winnow ingest`,
  // `winnow rejudge`); each caches the config, embedder, index and labels.
  // Every write transaction bumps the dataset's revision (meta
  // curation.revision) and starts with sync_with_store, which reloads the
  // caches when another process moved the revision. Inside BEGIN IMMEDIATE,
  // nobody else writes until the transaction ends.
  void sync_with_store();
  // Writes the stored revision + 1 (inside the writer's transaction) and
  // returns it; after the commit the writer calls committed() with it.
  std::int64_t next_revision();
  void committed(std::int64_t revision) { revision_ = revision; }
  // The revision the caches reflect.
  std::int64_t revision() const { return revision_; }
  // From two threads on, after a committed batch: its WAL pages are copied
  // into the database file beside the next batch (store/wal_checkpointer.h).
  void request_checkpoint();

  // After a rolled-back write: the caches may hold rolled-back ids, which
  // SQLite hands out again. Drops the stored contents and sketches, and
  // reopens the index and labels from disk (or drops the index, so that the
  // next write reopens it).
  void forget_uncommitted();
  // Reopens the index (and the label and sketch caches) from the index file
  // and the store.
  void reopen_index();
  // Reloads the accepted and flagged labels from the store.
  void reload_accepted_labels();
  // After a committed re-embedding (review/rejudge.h): the new config,
  // embedder and index are the dataset's.
  void replace_embedding(const CurationConfig& config, std::unique_ptr<embed::Embedder> embedder,
                         std::unique_ptr<index::VectorIndex> index);
  // After a committed batch whose index insertions took `add_seconds`:
  // saves the snapshot when the IndexSnapshots rule says so.
  IndexSaveOutcome after_index_insertions(double add_seconds);

 private:
  void open_index();          // and load_accepted_labels, load_text_sketches
  void load_text_sketches();  // text_sketches_ from the store
  std::int64_t stored_revision();
  // Adds to `index` the store's judged vectors (accepted and label_issue) it
  // lacks and removes the ids the store no longer has judged (open_index's
  // catch-up).
  index::CatchUpCounts catch_up_index(index::VectorIndex& index);

  std::string db_path_;
  std::string index_path_;
  std::int64_t revision_ = 0;  // the dataset revision the caches reflect
  std::unique_ptr<store::MetadataStore> store_;
  CurationConfig config_;
  std::unique_ptr<embed::Embedder> embedder_;
  std::unique_ptr<index::VectorIndex> index_;
  IndexInfo open_info_;
  IndexSnapshots snapshots_ = IndexSnapshots::by_cost;
  std::unique_ptr<ThreadPool> pool_;
  double snapshot_seconds_ = 0.0;  // the last load or save of the index file
  double unsaved_seconds_ = 0.0;   // index insertions since (catch-up and batches)
  std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> image_verifier_;
  std::unique_ptr<dedup::TextNearDuplicateVerifier> text_verifier_;
  LabelNames label_names_;
  std::unique_ptr<AcceptedLabelCache> accepted_labels_;  // of the judged samples
  std::unique_ptr<StoredContentCache> stored_contents_;
  std::unique_ptr<StoredTextSketches> text_sketches_;
  std::unique_ptr<StoredSampleFilter> stored_samples_;
  // Declared after store_, so that it ends first and gives the writer its
  // checkpoints back.
  std::unique_ptr<store::WalCheckpointer> checkpointer_;
};

// The index file of the database at `db_path`: beside it, named after it
// (D.index). Never taken from the store, so that a copied or edited database
// cannot make a process write another file; a copy gets its own index,
// rebuilt from its store when it is first opened.
std::string index_path_of(const std::string& db_path);

// How image files are read for a dataset with `config` and its `embedder`:
// the embedder's working image size and the config's max_image_pixels
// (Dataset::image_reading; winnow.dask's workers read the same way).
readers::ImageReading image_reading(const CurationConfig& config, const embed::Embedder& embedder);

}  // namespace winnow::curation
