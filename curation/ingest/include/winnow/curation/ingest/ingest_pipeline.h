// IngestPipeline: one dataset's curation service core. It owns the SQLite
// MetadataStore, the vector index persisted beside it (a cache, rebuilt from
// the store's curation_vectors when missing or stale) and the embedder. Each
// manifest is one batch in one transaction, decided record by record
// (IngestBatch, rules in record_decision.h); regain and revise_label_issues
// re-judge what is stored. Schema and durability: docs/curation.md ("Where
// the vectors live") and docs/store.md.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "winnow/curation/labels/confident_learning.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/curation/labels/label_names.h"
#include "winnow/curation/labels/label_quality.h"
#include "winnow/curation/ingest/image_issues.h"
#include "winnow/curation/ingest/manifest_reader.h"
#include "winnow/curation/ingest/rejection_summary.h"
#include "winnow/curation/dedup/near_duplicate_finder.h"
#include "winnow/curation/dedup/colour_image_verifier.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/curation/ingest/label_judgement_log.h"
#include "winnow/curation/thread_pool.h"
#include "winnow/error.h"
#include "winnow/index/vector_index.h"
#include "winnow/index/vector_index_io.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/wal_checkpointer.h"

namespace winnow::curation::ingest {

struct AcceptedLabelCache;  // accepted_labels.h
class StoredContentCache;   // stored_content_cache.h
class StoredTextSketches;   // stored_text_sketches.h
class StoredSampleFilter;   // stored_sample_filter.h
struct IngestContext;       // ingest_batch.h
class JobPositions;         // job_positions.h

// The dataset's configuration, recorded in meta by init and read back on open.
struct CurationConfig {
  static constexpr const char* kMetaKey = "curation.config";  // its key in the store's meta

  std::string embedder = "pixels(width=28,height=28,fourier=6)";
  // Exact search until 65,536 vectors, then IVF (index/auto_vector_index.h).
  std::string index = "auto";
  int candidates = 10;                     // near-dup candidates from the index
  double min_candidate_similarity = 0.98;  // index cosine below this: not verified
  double candidate_margin = 2.0;           // verify only within this of the best cosine (2: all)
  double image_threshold = 0.99;           // shifted Pearson
  int image_max_shift = 1;
  // Decoded image files are compared on colour working images
  // (dedup::ColourImageNearDuplicateVerifier; docs/images.md).
  double image_colour_threshold = 0.96;
  // The candidate gate of decoded image files (index cosine of the grey
  // working image's embedding): lower than min_candidate_similarity, since a
  // crop of a few percent moves the embedding more than a pixels record's
  // shift or noise does. 0.85: near-copy recall >= 0.958 on six seeds (0.9
  // missed 0.95 on one) at >= 1,000 images/s on one core. Measured:
  // docs/images.md.
  double image_file_min_candidate_similarity = 0.85;
  // Text near duplicates: shingle overlap >= text_threshold with a Jaccard
  // of at least text_min_jaccard (dedup::TextVerifierOptions). A stored
  // config without text_min_jaccard gets text_threshold: the Jaccard-only
  // rule such a database was curated with.
  double text_threshold = 0.8;
  double text_min_jaccard = 0.5;
  int text_shingle = 5;
  // The index cosine below which a text record's candidates are not
  // verified: min_candidate_similarity is the gate of pixels records, tuned
  // for the pixels embedder. 0.7 measured for hashed-ngrams(n=3,dim=256) on
  // man-page prose with the overlap rule above (docs/curation.md, "Text near
  // duplicates"). A stored config without it (written before text had its
  // own gate, and so with the Jaccard-only rule) gets
  // min(min_candidate_similarity, 0.85), 0.85 being the gate measured for
  // that rule: never stricter than the gate such a database used until then.
  static constexpr double kDefaultTextMinCandidateSimilarity = 0.7;
  static constexpr double kJaccardOnlyTextMinCandidateSimilarity = 0.85;
  double text_min_candidate_similarity = kDefaultTextMinCandidateSimilarity;
  // kNN label vote: k labelled neighbours (accepted and label_issue samples),
  // flagged below this share of agreeing weight. 30 and 0.08 (at most about 2
  // of 30 agree): the best measured on Fashion-MNIST streams (docs/curation.md,
  // "Label quality"). A stored config keeps its own values.
  int label_k = 30;
  double label_flag_below = 0.08;
  int min_label_neighbours = 5;  // fewer labelled neighbours: never a label issue
  // After each batch, the doubtful labels judged when the dataset had fewer
  // than labelled / (1 + label_rejudge_growth) labelled samples are judged
  // again against today's, the unsure ones judged below labelled / (1 +
  // label_rejudge_growth)^3, and every label judged below labelled / (1 +
  // label_rejudge_growth)^6 (LabelJudgementLog; 0: never). A stored config
  // without it gets 0: the online-only rule such a database was curated with.
  double label_rejudge_growth = 0.5;
  int micro_batch = 256;  // records embedded, searched and indexed together
  // Image files with more pixels are rejected before decoding (docs/images.md).
  std::uint64_t max_image_pixels = image::DecodeOptions::kDefaultMaxPixels;
  // Image-quality issues of decoded image files: thresholds, flag or reject
  // (image_issues.h). A stored config without it gets the defaults (flag).
  ImageIssuePolicy image_issues;

  // The nearest samples an ingest takes per record: enough for the
  // near-duplicate candidates, the label vote and the gain.
  int neighbours_per_record() const;

  std::string to_json() const;
  // Throws winnow::Error naming the bad field.
  static CurationConfig from_json(const std::string& json);
  void validate() const;
};

// What re-judging the stale labels after a batch did (rejudge_stale_labels).
struct LabelRejudgeCounts {
  std::size_t rejudged = 0;       // labelled samples judged again
  std::size_t newly_flagged = 0;  // accepted -> label_issue
  std::size_t cleared = 0;        // label_issue -> accepted
};

// Records of a bulk job (winnow.dask) whose neighbours came from the prior
// lists its workers computed instead of an index search, and those of them
// searched after all: too few of the listed records were accepted for the
// list to hold the record's nearest accepted ones. Of the near-duplicate
// candidates of the job's records: those whose verdict the workers made
// (ListedVerification) and those the writer verified itself.
struct JobNeighbourCounts {
  std::int64_t listed = 0;
  std::int64_t searched = 0;
  std::int64_t verdicts_taken = 0;
  std::int64_t verified_by_writer = 0;
};

// Where a batch's time went, in seconds. The writer's phases follow one
// another and add up to about the batch's seconds; pool_prepare ran beside
// them on the pool's thread. With one thread the writer prepares each block
// itself before deciding the one before, and that time is both its
// wait_for_pool and the pool_prepare.
struct BatchPhaseSeconds {
  double read = 0.0;                 // writer: manifest lines read (not yet parsed)
  double prepare_first_block = 0.0;  // writer: the first block parsed, embedded, searched
  double decide = 0.0;               // writer: chunks decided and written to the store
  double wait_for_pool = 0.0;        // writer: waiting for (and helping) the next block
  double pool_prepare = 0.0;         // pool: next blocks prepared, the one before indexed
  double rejudge_labels = 0.0;       // writer: stale labels judged again
  double commit = 0.0;               // writer: the batch's transaction committed
  double save_index = 0.0;           // writer: the index snapshot saved, when it was
};

struct BatchReport {
  std::int64_t batch_id = 0;
  std::string name;
  bool skipped = false;        // the manifest (checksum) was already done
  store::StatusCounts counts;  // of this batch (the stored ones when skipped)
  // Why records were rejected: groups of like reasons, most frequent first
  // (empty when skipped); rejections past RejectionSummary::kMaxGroups groups.
  std::vector<RejectionGroup> rejections;
  std::int64_t other_rejections = 0;
  double seconds = 0.0;
  // Whether the index file was saved after the batch (IndexSnapshots), and
  // why not when a save failed (the index is a cache: the next open catches
  // up from the store).
  bool index_saved = false;
  std::string index_save_error;
  // Earlier samples whose labels were judged again after the batch.
  LabelRejudgeCounts labels_rejudged;
  JobNeighbourCounts job_neighbours;  // 0 outside a bulk job
  BatchPhaseSeconds phases;
};

// Thrown by ingest_batch when its stop flag was set: the batch's transaction
// was rolled back and nothing of it kept (kind busy: try again later).
class BatchInterrupted : public Error {
 public:
  explicit BatchInterrupted(const std::string& batch);
};

// The entries of one batch, one at a time: fills `entry` and returns true, or
// returns false at the end (ManifestReader::next has this shape).
using EntrySource = std::function<bool(ManifestEntry& entry)>;

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
inline constexpr double kSnapshotCostRatio = 4.0;

// Out-of-sample predicted probabilities by external key (`ingest --pred-probs`):
// class j of every row is the label named class_names[j].
struct PredProbsTable {
  std::vector<std::string> class_names;
  std::unordered_map<std::string, std::vector<float>> rows;
};

// What revise_label_issues did (label_revision.cpp).
struct LabelRevisionReport {
  labels::ConfidentLearningResult result;  // over `samples`, in id order
  std::vector<std::int64_t> samples;
  std::size_t newly_flagged = 0;  // accepted -> label_issue
  std::size_t confirmed = 0;      // kNN label_issue, now with confident learning's reason
  std::size_t unused_rows = 0;    // rows of no judged, labelled sample
};

// What `regain` redoes, beyond the gains of accepted samples (which it
// always recomputes against the final index).
struct RejudgeOptions {
  // Re-embed every stored accepted and label_issue sample from its stored
  // content with this embedder spec, rebuild the index from the new vectors,
  // and make it the dataset's embedder (later batches use it). Implies labels.
  std::optional<std::string> embedder;
  // With embedder: the index cosine below which a near-duplicate candidate is
  // not verified (config min_candidate_similarity), since cosines mean
  // something else in the new embedding. Unset: kept.
  std::optional<double> min_candidate_similarity;
  // The same for text records (config text_min_candidate_similarity).
  std::optional<double> text_min_candidate_similarity;
  // Re-judge the label quality of every stored accepted and label_issue
  // sample against today's accepted neighbours (leave-one-out): accepted ->
  // label_issue when flagged, kNN label_issue -> accepted when no longer
  // flagged. Confident learning's flags are left as they are.
  bool labels = false;
  // Before re-judging (implies labels): every stored accepted and label_issue
  // sample with annotations gets the Dawid-Skene consensus of all the
  // dataset's annotations as its label (consensus_labels.h), with a relabel
  // event naming the label it replaces. The consensus is taken twice: over
  // the annotations, then with the label each sample's neighbours suggest
  // (under the first consensus) as one more annotator's vote. An annotated
  // sample is then judged by its consensus posterior: flagged below
  // consensus_flag_below, accepted at or above it. Samples without
  // annotations are judged by label quality as with labels alone.
  bool consensus = false;
  double consensus_flag_below = 0.7;
  // The label quality below which this re-judgement flags a label (unset:
  // the dataset's label_flag_below). Not stored: later batches keep the
  // dataset's threshold.
  std::optional<double> flag_below;
  // Called after each chunk of the long searches, with the stage's name
  // ("label neighbours", "gain neighbours"), samples done and the stage's
  // total: for a progress line. Unset: nothing is called.
  using Progress =
      std::function<void(const std::string& stage, std::size_t done, std::size_t total)>;
  Progress progress;
};

struct RejudgeReport {
  std::string embedder;           // the dataset's embedder afterwards
  std::string previous_embedder;  // before (equal unless re-embedded)
  std::size_t re_embedded = 0;
  std::size_t relabelled = 0;             // consensus label differed from the stored one
  std::size_t duplicate_annotations = 0;  // duplicates' annotations counted for their originals
  // With consensus: the neighbours' voters (by agreement), their votes and
  // expected accuracy as Dawid-Skene estimated it.
  struct NeighbourVoter {
    std::string name;
    std::size_t votes = 0;
    double accuracy = 0.0;
  };
  std::vector<NeighbourVoter> neighbour_voters;
  std::size_t judged = 0;                   // label quality recomputed
  std::size_t newly_flagged = 0;            // accepted -> label_issue
  std::size_t cleared = 0;                  // label_issue -> accepted
  std::size_t kept_confident_learning = 0;  // label_issue by confident learning: untouched
  std::size_t without_vector = 0;  // label_issue samples stored before their vectors were kept
  std::size_t gains_updated = 0;
  double seconds = 0.0;
};

class IngestPipeline {
 public:
  // Creates (or re-initialises an empty) database with `config`; throws
  // winnow::Error when the file already holds samples with another config.
  static void init(const std::string& db_path, const CurationConfig& config);

  // Opens an initialised database (winnow::Error if it is missing or was
  // never initialised) and its index, rebuilding the index when needed.
  explicit IngestPipeline(const std::string& db_path);
  ~IngestPipeline();

  // Ingests one manifest as one batch, in one transaction. A checksum
  // already done is skipped. Entries are read and decided micro_batch at a
  // time, so memory does not grow with the manifest. Throws winnow::Error on
  // a store/index failure (the batch is marked failed and nothing of it is
  // kept), and BatchInterrupted when `stop` is set meanwhile.
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           const EntrySource& next_entry, const std::atomic<bool>* stop = nullptr);
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           ManifestReader& reader, const std::atomic<bool>* stop = nullptr);
  BatchReport ingest_batch(const std::string& name, const std::string& checksum,
                           std::vector<ManifestEntry> entries);

  // Confident learning over the accepted and label_issue samples that have a
  // label and a row in `pred_probs`; flagged accepted samples become
  // label_issue (they stay in the index, as voters), and every such sample's
  // label_quality becomes confident learning's score (label_revision.cpp).
  LabelRevisionReport revise_label_issues(const PredProbsTable& pred_probs,
                                          const labels::ConfidentLearningOptions& options,
                                          std::optional<std::int64_t> batch_id = std::nullopt);

  // Recomputes the gain of every accepted sample against the final accepted
  // samples (excluding itself) and, as `options` say, re-embeds and re-judges labels
  // (rejudge.cpp). All in one transaction: on any error (e.g. a stored sample
  // the new embedder cannot embed) nothing changes.
  RejudgeReport rejudge(const RejudgeOptions& options = {});

  store::MetadataStore& store() { return *store_; }
  const CurationConfig& config() const { return config_; }
  // How a reader decodes image files for this dataset: the embedder's
  // working image size and the config's max_image_pixels (image_file.h).
  ImageReading image_reading() const;
  const embed::Embedder& embedder() const { return *embedder_; }
  IndexInfo index_info() const;
  const std::string& index_path() const { return index_path_; }
  void set_index_snapshots(IndexSnapshots when) { snapshots_ = when; }
  // Begins a bulk job of `records` records (winnow.dask, phase 2), numbered
  // 0 .. records-1 in the job's order by ManifestRecord::job_position: from
  // now on a chunk whose records bring prior neighbour lists takes its
  // neighbours from them instead of searching the index. Only a dataset with
  // no accepted or flagged sample can begin one (the lists know nothing of
  // earlier samples): returns false otherwise, and the lists are ignored.
  // The job ends when a batch fails or another process writes the dataset
  // (later lists are ignored: every record is searched, exact either way).
  bool start_job(std::size_t records);
  bool can_start_job();
  bool job_under_way() const { return job_ != nullptr; }
  // Threads for the work of a micro-batch that does not depend on its
  // decisions (parsing, reading and decoding files, embedding, searching an
  // HNSW index, verifying stored candidates): 0 for every core, 1 (the
  // default) for the calling thread alone. FAISS's own OpenMP loops are then
  // kept to one thread. Decisions do not depend on it.
  void set_threads(int threads);
  int threads() const { return pool_->threads(); }
  // Saves the index file now (atomically, with the index's own fingerprint).
  void save_index_snapshot();
  // Saves it if insertions since the last snapshot are not in it: what a
  // process does when it ends cleanly (ingest, import-*, the daemon when
  // stopped or idle), so that the next one opens without catching up.
  // Returns whether it saved. Throws if the save fails; nothing is lost then
  // (the index is a cache: the next open catches up from the store).
  bool save_index_if_behind();

  // Label text <-> stored integer label (integers map to themselves; other
  // names get ids recorded in meta).
  const labels::LabelNames& label_names() const { return label_names_; }

 private:
  void open_index();               // and load_accepted_labels, load_text_sketches
  void load_accepted_labels();     // accepted_labels_ from the store
  void load_text_sketches();       // text_sketches_ from the store
  IngestContext ingest_context();  // what an IngestBatch works on
  // After the samples of batch `batch_id` (judged in `batch`), inside its
  // transaction: judges again the labels judged against fewer than voters /
  // (1 + label_rejudge_growth) labelled samples (stale_labels.cpp); the
  // revisit events name the batch.
  LabelRejudgeCounts rejudge_stale_labels(std::int64_t batch_id,
                                          const std::vector<JudgedRange>& batch);
  // Adds to `index` the store's judged vectors (accepted and label_issue) it
  // lacks and removes the ids the store no longer has judged (open_index's
  // catch-up).
  index::CatchUpCounts catch_up_index(index::VectorIndex& index);
  // After a committed batch: saves the snapshot when snapshots_ says so.
  void after_batch_index_work(double add_seconds, BatchReport& report);
  // Several processes may write one dataset (the daemon, `winnow ingest`,
  // `winnow regain`); each caches the config, embedder, index and labels.
  // Every write transaction bumps the dataset's revision (meta
  // curation.revision) and starts with sync_with_store, which reloads the
  // caches when another process moved the revision. Inside BEGIN IMMEDIATE,
  // nobody else writes until the transaction ends.
  std::int64_t stored_revision();
  std::int64_t next_revision();  // writes revision + 1; returns it
  void sync_with_store();

  std::string db_path_;
  std::string index_path_;
  std::int64_t revision_ = 0;  // the dataset revision the caches reflect
  std::unique_ptr<store::MetadataStore> store_;
  CurationConfig config_;
  std::unique_ptr<embed::Embedder> embedder_;
  // The vectors of the judged samples: accepted and label_issue (a label
  // issue stays a near-duplicate candidate and a label voter; which of the
  // two a neighbour is, accepted_labels_ says).
  std::unique_ptr<index::VectorIndex> index_;
  IndexInfo open_info_;
  IndexSnapshots snapshots_ = IndexSnapshots::by_cost;
  std::unique_ptr<JobPositions> job_;  // a bulk job under way (start_job)
  std::unique_ptr<ThreadPool> pool_;
  double snapshot_seconds_ = 0.0;  // the last load or save of the index file
  double unsaved_seconds_ = 0.0;   // index insertions since (catch-up and batches)
  std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> image_verifier_;
  std::unique_ptr<dedup::TextNearDuplicateVerifier> text_verifier_;
  labels::LabelNames label_names_;
  std::unique_ptr<AcceptedLabelCache> accepted_labels_;  // of the accepted samples
  // Stored contents read to verify near-duplicate candidates, kept across
  // batches (stored_content_cache.h).
  std::unique_ptr<StoredContentCache> stored_contents_;
  // Sketches of the stored texts written or read, for the process's life
  // (stored_text_sketches.h).
  std::unique_ptr<StoredTextSketches> text_sketches_;
  // The stored samples' content hashes and keys, which answer most of an
  // ingest's lookups without the store (stored_sample_filter.h).
  std::unique_ptr<StoredSampleFilter> stored_samples_;
  // From two threads on: copies each committed batch's WAL pages into the
  // database file beside the next batch (wal_checkpointer.h). Declared after
  // store_, so that it ends first and gives the writer its checkpoints back.
  std::unique_ptr<store::WalCheckpointer> checkpointer_;
};

// How image files are read for a dataset with `config` and its `embedder`:
// the embedder's working image size and the config's max_image_pixels
// (IngestPipeline::image_reading; winnow.dask's workers read the same way).
ImageReading image_reading(const CurationConfig& config, const embed::Embedder& embedder);

// The near-duplicate verifiers of a dataset with `config`: images (colour,
// else grey) and text.
std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> make_image_verifier(
    const CurationConfig& config);
std::unique_ptr<dedup::TextNearDuplicateVerifier> make_text_verifier(const CurationConfig& config);

// Hex checksum of a file (the manifest's batch identity).
std::string file_checksum(const std::string& path);

// Reads a whole manifest (records and rejections); throws winnow::Error if the
// file cannot be read.
std::vector<ManifestEntry> read_manifest(const std::string& path,
                                         const ManifestReaderOptions& options = {});

}  // namespace winnow::curation::ingest
