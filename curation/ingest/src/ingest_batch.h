// IngestBatch: the records of one ingest batch, read, decided and written
// micro_batch at a time inside the caller's transaction
// (IngestPipeline::ingest_batch). Per search block of chunks: the records are
// embedded and the index of judged samples searched once for all of
// them, on the pool, while the block before is decided (prepared_chunk.h);
// per chunk, then per record, the facts are gathered (key, exact duplicate,
// neighbours, near duplicates, label quality, gain) and decide()
// (record_decision.h) turns them into a decision; the chunk's samples,
// events, vectors and image-quality rows are then written; the block's
// accepted and label_issue vectors join the index on the pool before the
// block after next is searched (during a bulk job: once the block is
// decided). Decoded image files get
// their image-quality issues judged per chunk, against the dataset with the
// chunk (image_issues.h).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "winnow/curation/judge/image_issues.h"
#include "winnow/curation/ingest/ingester.h"
#include "winnow/curation/judge/near_duplicate_check.h"
#include "winnow/curation/dataset/label_names.h"
#include "winnow/curation/labels/label_evidence.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/curation/judge/record_decision.h"
#include "winnow/curation/ingest/rejection_summary.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/vector_table.h"

#include "winnow/curation/review/label_judgement_log.h"

#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "ingest_context.h"
#include "winnow/curation/bulk/job_positions.h"
#include "precomputed_verifier.h"
#include "batch_text_sketches.h"
#include "index_queue.h"
#include "neighbour_merge.h"
#include "prepared_chunk.h"
#include "annotation_round.h"

namespace winnow::curation::ingest {

class IngestBatch {
 public:
  IngestBatch(const IngestContext& context, std::int64_t batch_id);
  ~IngestBatch();
  IngestBatch(const IngestBatch&) = delete;
  IngestBatch& operator=(const IngestBatch&) = delete;

  // Decides and writes every entry of `next_entry`; throws BatchInterrupted
  // (naming `name`) when `stop` is set between two entries.
  void run(const JobEntrySource& next_entry, const std::string& name,
           const std::atomic<bool>* stop);
  // The batch's rejections by reason, once run() returned.
  const RejectionSummary& rejections() const { return rejections_; }
  // Entries the reader refused past the first kMaxStoredRefusals of the
  // batch: counted in rejections() and here, not stored as samples.
  static constexpr std::size_t kMaxStoredRefusals = 10000;
  std::int64_t refusals_not_stored() const { return refusals_not_stored_; }
  // Seconds spent adding this batch's judged vectors to the index (the
  // work a process that reopens the index before its next snapshot redoes).
  double index_add_seconds() const { return index_queue_.add_seconds(); }
  // The writer's phases of run() and the pool's preparation beside them
  // (BatchPhaseSeconds; the pipeline adds the phases after run()).
  const BatchPhaseSeconds& phases() const { return phases_; }
  // The batch's samples by chunk, each with the labelled samples (voters) the
  // dataset had when the chunk was judged (LabelJudgementLog).
  const std::vector<review::JudgedRange>& judged_ranges() const { return judged_ranges_; }
  // Records whose neighbours came from their prior lists (a bulk job), and
  // those of them the index was searched for after all.
  const JobNeighbourCounts& job_neighbours() const { return job_neighbours_; }
  // Records whose label the vote would have flagged where it abstains
  // (labels::LabelEvidence).
  std::int64_t label_abstentions() const { return label_abstentions_; }
  // Duplicates whose label differs from their original's.
  std::int64_t label_conflicts() const { return label_conflicts_; }
  // Later rounds of annotations merged into stored samples.
  const AnnotationRoundCounts& annotation_rounds() const { return annotation_rounds_; }

 private:
  struct Pending;

  std::size_t next_block_chunks(const std::vector<PreparedChunk>& block) const;
  void start_chunk();
  void fold_in_unsearched();
  void precompute_verifications();
  void judge_chunk_images();
  // The finder for a record's content kind, or null (exact dedup only).
  const dedup::NearDuplicateFinder* finder_for(const ManifestRecord& record) const;
  void decide_entry(std::size_t e);
  judge::Candidate candidate_of(const ManifestRecord& rec,
                                const std::optional<std::int64_t>& label) const;
  void queue_decided(std::size_t e, Pending p, const float* vector, const judge::Neighbourhood& n);
  void reject_entry(const readers::Rejection& rejection);
  void take_labels(const ManifestRecord& record, store::NewSample& sample);
  // leave_key_free: a rejection that may pass (Rejection::passing) never
  // takes the key, so that a later import of the same file is not skipped.
  void set_rejected_key(store::NewSample& sample, const std::string& key, std::size_t line,
                        bool leave_key_free = false);
  // The keys winnow makes for rejected records hold this mark; a user key
  // that holds it is refused, so that no user key can take one first.
  static constexpr const char* kRejectedKeyMark = "#rejected-";
  static bool reserved_key(const std::string& key);
  void note_rejection(const store::NewSample& sample, const judge::Candidate& candidate);
  std::optional<std::int64_t> exact_original(const std::string& hash);
  index::SearchResults nearest(const bulk::JobRecord& job, int row, const float* vector);
  bool merge_prior(const bulk::PriorNeighbours& prior);
  void publish_job_ids();
  void merge_pending(const std::vector<std::size_t>& items, const float* vector);
  std::optional<std::string> label_name_of(std::int64_t id);
  // The external key of sample `id` (written or flushed), "" when unknown.
  std::string key_of(std::int64_t id);
  std::optional<judge::Neighbourhood::BetterCopy> better_copy(const ManifestRecord& record,
                                                              std::int64_t original);
  void supersede(const judge::Neighbourhood::BetterCopy& b, std::int64_t kept);
  void add_label_evidence(const store::NewSample& sample, const judge::Neighbourhood& n);
  judge::Neighbourhood neighbourhood(const ManifestRecord& record, const bulk::JobRecord& job,
                                     const index::SearchResults& labelled,
                                     store::NewSample& sample);
  bool label_issue(std::int64_t id) const;
  index::SearchResults accepted_among(const index::SearchResults& labelled) const;
  std::optional<dedup::NearDuplicateMatch> near_duplicate(const ManifestRecord& record,
                                                          const bulk::JobRecord& job,
                                                          const index::SearchResults& candidates);
  dedup::KnownVerification listed_verdicts(const bulk::JobRecord& job) const;
  bool ruled_out_by_sketch(const std::vector<std::uint64_t>& shingles, std::int64_t id) const;
  void flush();
  void end_block();
  void record_flushed(std::size_t i);
  std::int64_t item_id(std::size_t i);
  // Who asks record_of: a decision sketches a stored text the first time it
  // uses it (as one thread does when it reads it); the pre-pass never does.
  enum class ContentUse { decision, prepass };
  const ManifestRecord* record_of(std::int64_t id, ContentUse use = ContentUse::decision);
  std::optional<int> label_of(std::int64_t id) const;
  bool stored_key(const std::string& key);
  void remember_key(const std::string& key);

  IngestContext context_;
  std::int64_t batch_id_;
  std::size_t dim_;
  int neighbours_k_;  // searched per record: enough for near dups, label quality and gain
  judge::DecisionRules rules_;
  RejectionSummary rejections_;
  std::size_t stored_refusals_ = 0;
  std::int64_t refusals_not_stored_ = 0;
  labels::LabelQuality label_quality_;
  // Where the vote judges: the store's evidence at the batch's start, with
  // each of this batch's labels added as it is judged.
  labels::LabelEvidence label_evidence_;
  std::int64_t label_abstentions_ = 0;  // records the vote would have flagged
  std::int64_t label_conflicts_ = 0;
  AnnotationRoundCounts annotation_rounds_;
  // Judged samples this batch made duplicates of a better copy: out of the
  // index when the batch ends, skipped by neighbour lists until then.
  std::unordered_set<std::int64_t> superseded_;
  // The context's verifiers, with the chunk's similarities to stored
  // candidates computed beforehand (precompute_verifications); the finders
  // use these.
  PrecomputedVerifier image_verifier_;
  PrecomputedVerifier text_verifier_;
  dedup::NearDuplicateFinder image_finder_;       // pixels records
  dedup::NearDuplicateFinder image_file_finder_;  // decoded image files (in colour)
  dedup::NearDuplicateFinder text_finder_;
  store::VectorTable vectors_;
  store::ImageQualityTable image_quality_;
  BatchTextSketches sketches_;
  judge::ImageIssueJudge image_issues_;

  // Only one chunk of micro_batch entries is decided at a time (and the next
  // one prepared), so memory does not grow with the manifest: items, keys
  // and hashes of earlier chunks are asked of the store, which sees this
  // transaction's own rows.
  PreparedChunk chunk_;
  std::vector<Pending> items_;
  std::size_t flushed_ = 0;
  std::unordered_map<std::string, std::size_t> hash_to_item_;  // this chunk's
  std::unordered_set<std::string> batch_keys_;                 // this chunk's
  // 64-bit hashes of every key and content hash of the batch so far (two
  // numbers a record): the store is asked about a key or a content hash only
  // when an earlier batch (the stored-sample filter) or an earlier chunk may
  // hold it, so that nearly every record saves two queries.
  std::unordered_set<std::uint64_t> seen_keys_, seen_hashes_;
  // Flushed items by store id. The store numbers a batch's samples with
  // increasing rowids, so a vector indexed by id - first_id does.
  std::int64_t first_id_ = -1;
  std::vector<std::size_t> item_by_id_;
  std::unordered_map<std::int64_t, std::unique_ptr<ManifestRecord>> content_cache_;

  // The image-quality rows of the chunk's decoded image files, by entry.
  std::vector<std::optional<store::ImageQualityRecord>> chunk_image_quality_;

  std::vector<std::size_t> recent_;  // accepted and label_issue items since the chunk's search
  JobNeighbourCounts job_neighbours_;
  // The flushed judged vectors the index does not hold yet.
  IndexQueue index_queue_;
  BatchPhaseSeconds phases_;
  std::vector<review::JudgedRange> judged_ranges_;
  NeighbourMerge merge_;  // the nearest judged samples of the record being decided
};

}  // namespace winnow::curation::ingest
