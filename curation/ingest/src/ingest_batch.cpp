#include "ingest_batch.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/dataset/label_check.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/clock.h"
#include "winnow/curation/judge/information_gain.h"
#include "winnow/curation/labels/dawid_skene.h"
#include "winnow/error.h"
#include "winnow/index/exact_scores.h"

#include "winnow/curation/dataset/lookup/stored_record.h"

namespace winnow::curation::ingest {

namespace {

// Ids of this chunk's judged samples not yet written: kPendingBase + item.
constexpr std::int64_t kPendingBase = std::int64_t{1} << 62;
constexpr std::size_t kNoItem = std::numeric_limits<std::size_t>::max();

dedup::NearDuplicateFinderOptions finder_options(const CurationConfig& config,
                                                 judge::NearDuplicateCheck check) {
  dedup::NearDuplicateFinderOptions options;
  options.candidates = config.candidates;
  options.min_candidate_similarity = judge::candidate_gate(config, check);
  return options;
}

}  // namespace

// One entry of the batch, decided, waiting to be written (or written).
struct IngestBatch::Pending {
  store::NewSample sample;
  // Accepted and label_issue samples keep their content and embedding in
  // curation_vectors (a later rejudge may re-judge them); only accepted ones
  // join the index.
  const ManifestRecord* record = nullptr;
  std::int64_t job_position = -1;  // the record's place in a bulk job (-1: none)
  std::vector<float> embedding;
  std::uint32_t home_cell = kAnyCell;                      // its search's first probe (fold_in)
  std::optional<store::ImageQualityRecord> image_quality;  // a decoded image file's
  bool accepted = false;
  std::int64_t id = -1;  // store id once flushed
};

IngestBatch::IngestBatch(const IngestContext& context, std::int64_t batch_id)
    : context_(context),
      batch_id_(batch_id),
      dim_(context.embedder.dim()),
      neighbours_k_(judge::neighbours_per_record(context.config)),
      rules_(judge::DecisionRules::of(context.config)),
      label_quality_({context.config.label_k, context.config.label_flag_below}),
      label_evidence_(stored_label_evidence(context.store, context.config)),
      image_verifier_(context.image_verifier),
      text_verifier_(context.text_verifier),
      image_finder_(context.index, image_verifier_,
                    finder_options(context.config, judge::NearDuplicateCheck::image)),
      image_file_finder_(context.index, image_verifier_,
                         finder_options(context.config, judge::NearDuplicateCheck::image_file)),
      text_finder_(context.index, text_verifier_,
                   finder_options(context.config, judge::NearDuplicateCheck::text)),
      vectors_(context.store.database()),
      image_quality_(context.store.database()),
      sketches_(context.text_sketches, context.text_verifier, context.store.database()),
      image_issues_(context.config.image_issues, image_quality_) {}

IngestBatch::~IngestBatch() = default;

void IngestBatch::run(const JobEntrySource& next_entry, const std::string& name,
                      const std::atomic<bool>* stop) {
  using Clock = std::chrono::steady_clock;
  const auto chunk_size = static_cast<std::size_t>(context_.config.micro_batch);
  const auto k = static_cast<std::size_t>(neighbours_k_);
  // The first block is one chunk; the next ones as many as the index wants
  // (next_block_chunks).
  std::vector<PreparedChunk> block, next;
  auto t = Clock::now();
  read_block_entries(next_entry, chunk_size, 1, name, stop, next);
  phases_.read += seconds_since(t);
  t = Clock::now();
  prepare_block(context_, k, next);
  phases_.prepare_first_block += seconds_since(t);
  for (;;) {
    std::swap(block, next);
    const bool last = block.back().last;
    // The next block is read here (a source may ask the store) and prepared
    // on the pool while this one is decided, after the block before this one
    // joins the indexes (index_unindexed): the writer does not read them
    // meanwhile, and the next block's search holds every block but this one.
    // pool_seconds is written on the pool and read after preparing->wait();
    // declared first, it outlives the task (whose destructor waits for it).
    double pool_seconds = 0.0;
    std::unique_ptr<ThreadPool::Task> preparing;
    if (!last) {
      t = Clock::now();
      read_block_entries(next_entry, chunk_size, next_block_chunks(block), name, stop, next);
      phases_.read += seconds_since(t);
      t = Clock::now();
      preparing = context_.pool.start([&] {
        const auto started = Clock::now();
        index_queue_.join(context_.index);
        prepare_block(context_, k, next);
        pool_seconds = seconds_since(started);
      });
      // One thread prepares in start(): that is the writer's wait.
      phases_.wait_for_pool += seconds_since(t);
    } else {
      t = Clock::now();
      index_queue_.join(context_.index);
      phases_.decide += seconds_since(t);
    }
    for (std::size_t c = 0; c < block.size(); ++c) {
      t = Clock::now();
      chunk_ = std::move(block[c]);
      start_chunk();
      fold_in_unsearched();
      judge_chunk_images();
      precompute_verifications();
      const auto voters = static_cast<std::int64_t>(context_.accepted_labels.voters());
      for (std::size_t e = 0; e < chunk_.entries.size(); ++e) decide_entry(e);
      flush();  // the chunk's samples join the store
      phases_.decide += seconds_since(t);
      if (c + 1 == block.size()) {
        if (preparing) {
          t = Clock::now();
          preparing->wait();
          phases_.wait_for_pool += seconds_since(t);
          phases_.pool_prepare += pool_seconds;
        }
        end_block();
      }
      publish_job_ids();
      if (!items_.empty()) judged_ranges_.push_back({first_id_, items_.back().id, voters});
    }
    if (last) break;
  }
  t = Clock::now();
  index_queue_.join(context_.index);
  if (!superseded_.empty()) {
    context_.index.remove(std::vector<std::int64_t>(superseded_.begin(), superseded_.end()));
  }
  phases_.decide += seconds_since(t);
}

// How many chunks the block after `block` holds: enough for the queries the
// index wants in a search call (an IVF index past 2^17 vectors: 4,096, 16
// chunks of the default 256), at most kSearchBlockChunks and as many as the
// records' size allows (search_block_chunks); otherwise one, since each
// chunk of a block folds in more vectors exactly (every one of them, without
// an IVF's cells to choose by). A bulk job's records ask
// the index at decision time (their prior lists name earlier records): one
// chunk a block then, so that it holds every chunk decided before.
std::size_t IngestBatch::next_block_chunks(const std::vector<PreparedChunk>& block) const {
  if (context_.job != nullptr) return 1;
  const auto chunk_size = static_cast<std::size_t>(context_.config.micro_batch);
  const std::size_t wanted = context_.index.queries_per_search() / chunk_size;
  return std::max<std::size_t>(1, std::min(wanted, search_block_chunks(block)));
}

// Forgets the last chunk's items (written) and per-chunk caches.
void IngestBatch::start_chunk() {
  items_.clear();
  flushed_ = 0;
  hash_to_item_.clear();
  batch_keys_.clear();
  first_id_ = -1;
  item_by_id_.clear();
  image_verifier_.clear();  // keyed by addresses of records about to go
  text_verifier_.clear();
  content_cache_.clear();
  recent_.clear();
}

// This chunk's block was searched before the block before it joined the
// index, and this block's earlier chunks join it only when it ends: their
// vectors, scored exactly, complete this chunk's results, each row's with
// those whose home cell (the first cell their own search scanned) its search
// scanned, when the index has cells (fold_in). (A chunk whose
// records bring prior lists asks the index at decision time instead.)
void IngestBatch::fold_in_unsearched() {
  if (chunk_.listed || chunk_.rows == 0) return;
  const auto k = static_cast<std::size_t>(neighbours_k_);
  if (index_queue_.fold_into(chunk_.found, chunk_.rows, chunk_.vectors.data(), dim_, k,
                             context_.pool)) {
    chunk_.searched = true;
  }
}

// With several threads: each embedded record's similarity to the stored
// candidates (accepted or flagged) its finder may verify, computed on the
// pool. decide_entry later asks the same questions one record at a time and
// finds the answers, so its decisions are those of one thread. Its stored
// candidates are among the chunk search's (this chunk's own records,
// verified as they are decided, can only push stored ones out), and a pair
// it asks that was not computed here is computed then. The stored contents
// are read here, on this thread (one SQLite connection), but not sketched: a
// stored text is sketched when a decision first uses it, as on one thread,
// where reading it is that use. A sketch rules later candidates out, so
// sketching what this pass reads (more than one thread reads) changed what
// the events report (candidates checked and ruled out, the best similarity),
// though never a status.
void IngestBatch::precompute_verifications() {
  if (context_.pool.threads() < 2 || !chunk_.searched) return;
  const index::SearchResults& candidates = chunk_.found;
  std::vector<PrecomputedVerifier::Pair> image_pairs, text_pairs;
  for (std::size_t e = 0; e < chunk_.entries.size(); ++e) {
    const int row = chunk_.row[e];
    if (row < 0) continue;
    const ManifestRecord& record = *chunk_.entries[e].record;
    const dedup::NearDuplicateFinder* finder = finder_for(record);
    if (finder == nullptr) continue;
    auto& pairs = finder == &text_finder_ ? text_pairs : image_pairs;
    const auto query = static_cast<std::size_t>(row);
    const std::size_t n = finder->candidate_count(candidates, query);
    const std::optional<std::vector<std::uint64_t>> shingles = sketches_.shingles(record);
    for (std::size_t r = 0; r < n; ++r) {
      const std::int64_t id = candidates.id(query, r);
      if (shingles && ruled_out_by_sketch(*shingles, id)) continue;  // decide_entry skips it too
      if (const ManifestRecord* other = record_of(id, ContentUse::prepass)) {
        pairs.emplace_back(&record, other);
      }
    }
  }
  image_verifier_.precompute(image_pairs, context_.pool);
  text_verifier_.precompute(text_pairs, context_.pool);
}

// The image-quality issues of the chunk's decoded image files, judged against
// the dataset's images stored before this batch, the batch's earlier chunks
// and this chunk (so the first chunk of a new dataset is its own reference).
void IngestBatch::judge_chunk_images() {
  chunk_image_quality_.assign(chunk_.entries.size(), std::nullopt);
  for (const readers::ManifestEntry& entry : chunk_.entries) {
    if (entry.ok() && entry.record->image_quality) image_issues_.add(*entry.record->image_quality);
  }
  for (std::size_t e = 0; e < chunk_.entries.size(); ++e) {
    if (chunk_.entries[e].ok() && chunk_.entries[e].record->image_quality) {
      chunk_image_quality_[e] = image_issues_.judge(*chunk_.entries[e].record->image_quality);
    }
  }
}

// Gathers the facts of entry `e` step by step, as far as decide() needs
// them, and queues its sample.
void IngestBatch::decide_entry(std::size_t e) {
  const readers::ManifestEntry& entry = chunk_.entries[e];
  if (!entry.ok()) {
    reject_entry(*entry.rejection);
    return;
  }
  const ManifestRecord& rec = *entry.record;
  if (rec.kind == ContentKind::none && !batch_keys_.count(rec.key) && stored_key(rec.key)) {
    // A later round of annotations for a stored sample: merged into it.
    if (const std::optional<store::SampleRecord> stored =
            context_.store.find_by_external_key(rec.key)) {
      add_annotation_round(context_.store, context_.label_names, *stored, rec, batch_id_,
                           annotation_rounds_);
      return;
    }
  }
  Pending p;
  p.image_quality = chunk_image_quality_[e];
  store::NewSample& s = p.sample;
  s.batch_id = batch_id_;
  take_labels(rec, s);
  s.source = rec.source;
  judge::Candidate candidate = candidate_of(rec, s.label);
  s.content_hash = candidate.content_hash;
  judge::Neighbourhood neighbourhood_facts;
  const float* vector = nullptr;
  if (reserved_key(rec.key)) {
    candidate.rejection = fmt::format(
        "key '{}' holds '{}', which winnow keeps for the keys it gives rejected records",
        printable_text(rec.key, 240), kRejectedKeyMark);
    set_rejected_key(s, rec.key, rec.line);
    s.annotations.clear();
    remember_key(s.external_key);
  } else if (batch_keys_.count(rec.key) || stored_key(rec.key)) {
    candidate.rejection = fmt::format("key '{}' is already in the dataset", rec.key);
    set_rejected_key(s, rec.key, rec.line);
    s.annotations.clear();
    remember_key(s.external_key);
  } else if (rec.stored_sample_only) {
    candidate.rejection = fmt::format(
        "no content, and key '{}' is not in the dataset: a manifest line with only "
        "annotations adds them to a stored sample (annotations of new items without content: "
        "`winnow import-annotations`)",
        printable_text(rec.key, 240));
    set_rejected_key(s, rec.key, rec.line);
    s.annotations.clear();
    remember_key(s.external_key);
  } else if (rec.kind == ContentKind::none) {  // annotations only: nothing to compare
    s.external_key = rec.key;
    remember_key(rec.key);
    candidate.annotations_only = true;
  } else {
    s.external_key = rec.key;
    remember_key(rec.key);
    candidate.exact_duplicate_of = exact_original(candidate.content_hash);
    if (candidate.exact_duplicate_of) {
      candidate.exact_original_label = label_name_of(*candidate.exact_duplicate_of);
      candidate.exact_original_key = key_of(*candidate.exact_duplicate_of);
    }
    const int row = chunk_.row[e];
    if (p.image_quality && p.image_quality->any_issue() &&
        context_.config.image_issues.action == ImageIssuePolicy::Action::reject) {
      candidate.image_issues =
          judge::image_issues_reason(rec.path, *p.image_quality, context_.config.image_issues);
    }
    const bool decided = candidate.exact_duplicate_of || candidate.image_issues;
    if (candidate.image_issues && !candidate.exact_duplicate_of) s.annotations.clear();
    if (!decided && row < 0) {
      candidate.embed_error = chunk_.embed_errors[e];
      s.annotations.clear();
    } else if (!decided) {
      vector = chunk_.vectors.data() + static_cast<std::size_t>(row) * dim_;
      const bulk::JobRecord& job = chunk_.jobs[e];
      neighbourhood_facts = neighbourhood(rec, job, nearest(job, row, vector), s);
    }
  }
  s.decision = judge::decide(candidate, neighbourhood_facts, rules_);
  if ((s.decision.status == store::SampleStatus::duplicate_exact &&
       judge::label_conflict(candidate.label, candidate.exact_original_label)) ||
      (s.decision.status == store::SampleStatus::duplicate_near &&
       judge::label_conflict(candidate.label, neighbourhood_facts.near_original_label))) {
    ++label_conflicts_;
  }
  if (s.decision.status == store::SampleStatus::rejected && candidate.embed_error &&
      chunk_.content_kind_errors[e] && !candidate.rejection && !candidate.exact_duplicate_of &&
      !candidate.image_issues) {
    // Refused by the dataset's embedder for its kind of content: the key
    // stays free for the record's next import (`--redo` once `init` fixed
    // the embedder).
    batch_keys_.erase(rec.key);
    set_rejected_key(s, rec.key, rec.line, /*leave_key_free=*/true);
  }
  note_rejection(s, candidate);
  queue_decided(e, std::move(p), vector, neighbourhood_facts);
}

// What a decision reads of a record: its key, label, line, content and
// content hash (computed when the reader left it empty).
judge::Candidate IngestBatch::candidate_of(const ManifestRecord& rec,
                                           const std::optional<std::int64_t>& label) const {
  judge::Candidate candidate;
  candidate.key = rec.key;
  if (label) candidate.label = context_.label_names.name_of(*label);
  candidate.line = rec.line;
  if (rec.kind == ContentKind::path) candidate.file = rec.resolved_path;
  if (rec.kind == ContentKind::text) candidate.text = rec.text;
  if (rec.kind == ContentKind::pixels) {
    candidate.pixels = &rec.pixels;
    candidate.width = rec.width;
    candidate.height = rec.height;
  }
  candidate.content_hash =
      rec.content_hash.empty() ? dedup::record_content_hash(rec) : rec.content_hash;
  return candidate;
}

// Queues entry `e`'s decided sample `p`. A judged one (accepted or
// label_issue) adds its label to the evidence, and an embedded one (its
// `vector`; not annotations only) keeps its content and vector for the
// chunk's later records and the store, and supersedes the copy it is better
// than (`n.better_copy`).
void IngestBatch::queue_decided(std::size_t e, Pending p, const float* vector,
                                const judge::Neighbourhood& n) {
  const store::SampleStatus status = p.sample.decision.status;
  const bool judged =
      status == store::SampleStatus::accepted || status == store::SampleStatus::label_issue;
  if (judged) add_label_evidence(p.sample, n);
  if (vector != nullptr && judged) {
    p.record = &*chunk_.entries[e].record;
    p.job_position = chunk_.jobs[e].position;
    p.embedding.assign(vector, vector + dim_);
    const index::SearchResults& found = chunk_.found;
    if (found.probes_per_query > 0 && found.num_queries == chunk_.rows) {
      p.home_cell = found.probes[static_cast<std::size_t>(chunk_.row[e]) * found.probes_per_query];
    }
    p.accepted = status == store::SampleStatus::accepted;
    recent_.push_back(items_.size());
  }
  items_.push_back(std::move(p));
  if (vector != nullptr && judged && n.better_copy) {
    supersede(*n.better_copy, item_id(items_.size() - 1));
  }
}

// Whether `record` (an image file) is the better copy to keep than sample
// `original` it is a near duplicate of (keep = largest; not in a bulk job,
// whose prior lists name the original): the decoded sizes of both.
std::optional<judge::Neighbourhood::BetterCopy> IngestBatch::better_copy(
    const ManifestRecord& record, std::int64_t original) {
  if (context_.config.keep != "largest" || context_.job != nullptr ||
      record.kind != ContentKind::path || !record.image_quality) {
    return std::nullopt;
  }
  const std::optional<store::ImageQualityRecord> stored = image_quality_.find(original);
  if (!stored) return std::nullopt;  // not an image file
  const auto width = static_cast<std::int64_t>(record.image_quality->width);
  const auto height = static_cast<std::int64_t>(record.image_quality->height);
  if (!judge::larger_copy(width, height, stored->width, stored->height)) return std::nullopt;
  // A sample a person reviewed stays as the person left it (review/verdicts.h).
  if (context_.store.review_of(original)) return std::nullopt;
  return judge::Neighbourhood::BetterCopy{original, width, height, stored->width, stored->height};
}

// Sample b.original becomes the duplicate of `kept`, its better copy: a
// revisit event says why; it leaves the label cache, curation_vectors and
// this chunk's pending neighbours now, and the index when the batch ends
// (a search may be running); until then the merged neighbour lists skip it.
void IngestBatch::supersede(const judge::Neighbourhood::BetterCopy& b, std::int64_t kept) {
  const nlohmann::json details = {{"better_copy",
                                   {{"kept", kept},
                                    {"width", b.width},
                                    {"height", b.height},
                                    {"original_width", b.original_width},
                                    {"original_height", b.original_height}}}};
  context_.store.update_status(
      b.original,
      {store::SampleStatus::duplicate_near, kept,
       fmt::format("a better copy arrived: sample {} ({} x {} against {} x {}), kept instead", kept,
                   b.width, b.height, b.original_width, b.original_height),
       details.dump()},
      batch_id_);
  context_.accepted_labels.forget(b.original);
  vectors_.remove(b.original);
  superseded_.insert(b.original);
  recent_.erase(std::remove_if(recent_.begin(), recent_.end(),
                               [&](std::size_t i) { return items_[i].id == b.original; }),
                recent_.end());
}

// An entry the reader refused: rejected, under a key of its own when its key
// is missing or taken.
void IngestBatch::reject_entry(const readers::Rejection& rejection) {
  if (stored_refusals_ == kMaxStoredRefusals) {
    // A manifest of millions of junk lines: counted, not stored one by one.
    rejections_.add(rejection.reason, rejection.key, rejection.line);
    ++refusals_not_stored_;
    return;
  }
  ++stored_refusals_;
  Pending p;
  store::NewSample& s = p.sample;
  s.batch_id = batch_id_;
  set_rejected_key(s, rejection.key, rejection.line, /*leave_key_free=*/rejection.passing);
  s.source = rejection.source;
  s.content_hash = fmt::format("rejected:b{}:l{}", batch_id_, rejection.line);
  judge::Candidate candidate;
  candidate.key = rejection.key;
  candidate.line = rejection.line;
  candidate.rejection = rejection.reason;
  s.decision = judge::decide(candidate, {}, rules_);
  note_rejection(s, candidate);
  remember_key(s.external_key);
  items_.push_back(std::move(p));
}

// The record's labels: its label, else the majority of its annotations
// (ties: the smallest label). New label names get ids.
void IngestBatch::take_labels(const ManifestRecord& record, store::NewSample& sample) {
  for (const Annotation& a : record.annotations) {
    sample.annotations.push_back({a.annotator, context_.label_names.add(a.label)});
  }
  if (record.label) {
    sample.label = context_.label_names.add(*record.label);
  } else if (!sample.annotations.empty()) {
    std::map<std::int64_t, std::int64_t> votes;
    for (const store::NewAnnotation& a : sample.annotations) ++votes[a.label];
    sample.label = labels::majority_label(votes);
  }
}

void IngestBatch::note_rejection(const store::NewSample& sample,
                                 const judge::Candidate& candidate) {
  if (sample.decision.status == store::SampleStatus::rejected) {
    rejections_.add(sample.decision.reason, candidate.key, candidate.line);
  }
}

// A rejected record keeps its key when it is free and the user's own and its
// reason cannot pass; else it gets KEY#rejected-bB-lL, unique to its batch
// and line. User keys never
// hold the mark (reserved_key), so only a key stored before that rule could
// take such a key first: then a counter follows.
void IngestBatch::set_rejected_key(store::NewSample& sample, const std::string& key,
                                   std::size_t line, bool leave_key_free) {
  sample.external_key = key;
  if (!leave_key_free && !key.empty() && !reserved_key(key) && !batch_keys_.count(key) &&
      !stored_key(key)) {
    return;
  }
  const std::string made = fmt::format("{}{}b{}-l{}", key, kRejectedKeyMark, batch_id_, line);
  sample.external_key = made;
  for (int n = 2; batch_keys_.count(sample.external_key) || stored_key(sample.external_key); ++n) {
    sample.external_key = fmt::format("{}-{}", made, n);
  }
}

bool IngestBatch::reserved_key(const std::string& key) {
  return key.find(kRejectedKeyMark) != std::string::npos;
}

// The first sample with this content hash that was not rejected: stored
// (earlier batches and chunks), else the chunk's first such copy. Remembers
// the hash either way.
std::optional<std::int64_t> IngestBatch::exact_original(const std::string& hash) {
  std::optional<std::int64_t> original;
  const std::uint64_t hash64 = dedup::hash64(hash);
  const bool maybe_stored =
      context_.stored_samples.may_hold_content_hash(hash64) || seen_hashes_.count(hash64) != 0;
  if (auto stored = maybe_stored ? context_.store.find_by_content_hash(hash) : std::nullopt) {
    original = stored->id;
  } else if (auto it = hash_to_item_.find(hash);
             it != hash_to_item_.end() &&
             items_[it->second].sample.decision.status != store::SampleStatus::rejected) {
    original = item_id(it->second);
  }
  if (!original) hash_to_item_[hash] = items_.size();  // this record, unless it is a copy
  seen_hashes_.insert(hash64);
  return original;
}

// This chunk's queued items (not yet in an index), scored against `vector`,
// join the merge.
void IngestBatch::merge_pending(const std::vector<std::size_t>& items, const float* vector) {
  for (std::size_t i : items) {
    merge_.add(index::inner_product(vector, items_[i].embedding.data(), dim_),
               kPendingBase + static_cast<std::int64_t>(i));
  }
}

// The record's nearest judged samples (accepted and label_issue), best
// first, at most neighbours_k_ of them (padded with -1): the chunk search
// (row `row`), or the record's prior list when the chunk has them, merged
// with this chunk's samples judged since. A prior list that cannot prove
// itself exact (too few of its records judged) gives way to a search for
// this record alone.
index::SearchResults IngestBatch::nearest(const bulk::JobRecord& job, int row,
                                          const float* vector) {
  const auto k = static_cast<std::size_t>(neighbours_k_);
  merge_.clear();
  if (chunk_.listed) {
    ++job_neighbours_.listed;
    merge_pending(recent_, vector);
    if (merge_prior(*job.prior_neighbours)) return merge_.best(k, superseded_);
    ++job_neighbours_.searched;
    merge_.clear();
    if (context_.index.size() > 0) merge_.add_search(context_.index, vector, k);
    merge_pending(recent_, vector);
    return merge_.best(k, superseded_);
  }
  if (chunk_.searched) merge_.add_row(chunk_.found, static_cast<std::size_t>(row));
  merge_pending(recent_, vector);
  return merge_.best(k, superseded_);
}

// Adds to the merge the records of `prior` that are in the index now (and so
// were decided in an earlier chunk: this chunk's are pending, merged from
// recent_). Returns whether the merge then holds the record's true nearest
// ones: the list is complete, or neighbours_k_ of the merged score at least
// the list's last similarity (every earlier record left off the list scores
// at most that). The merge must already hold the chunk's pending ones.
bool IngestBatch::merge_prior(const bulk::PriorNeighbours& prior) {
  const index::VectorIndex& index = context_.index;
  const std::size_t n = std::min(prior.positions.size(), prior.similarities.size());
  float last = -std::numeric_limits<float>::infinity();
  for (std::size_t r = 0; r < n && prior.positions[r] >= 0; ++r) {
    last = prior.similarities[r];
    const std::int64_t id = context_.job->id_at(prior.positions[r]);
    if (id >= 0 && index.contains(id)) merge_.add(prior.similarities[r], id);
  }
  if (prior.complete) return true;
  return merge_.count_at_least(last) >= static_cast<std::size_t>(neighbours_k_);
}

// After the chunk's flush: the ids of its records that kept a vector, by job
// position, for the prior lists of the records after them.
void IngestBatch::publish_job_ids() {
  if (context_.job == nullptr) return;
  for (const Pending& p : items_) {
    if (p.record != nullptr && context_.job->holds(p.job_position)) {
      context_.job->set(p.job_position, p.id);
    }
  }
}

// Gain, near duplicates and label quality of an embedded record against
// its nearest judged samples `labelled`: near duplicates and the label vote
// against all of them (a label issue is still a labelled sample of the
// dataset), the gain against the accepted ones among them; sets the
// sample's gain and label quality.
judge::Neighbourhood IngestBatch::neighbourhood(const ManifestRecord& record,
                                                const bulk::JobRecord& job,
                                                const index::SearchResults& labelled,
                                                store::NewSample& sample) {
  judge::Neighbourhood n;
  const index::SearchResults nn = accepted_among(labelled);
  n.gain = judge::information_gain(nn, 0);
  n.neighbours = nn.count(0);
  sample.gain = n.gain;
  n.near_duplicate = near_duplicate(record, job, labelled);
  if (n.near_duplicate && n.near_duplicate->found) {
    n.near_original_label = label_name_of(n.near_duplicate->id);
    n.near_original_key = key_of(n.near_duplicate->id);
    n.better_copy = better_copy(record, n.near_duplicate->id);
  }
  if ((n.near_duplicate && n.near_duplicate->found && !n.better_copy) || !sample.label) return n;
  const labels::LabelLookup label_lookup = [this](std::int64_t id) { return label_of(id); };
  n.label_quality =
      label_quality_.score(labelled, 0, static_cast<int>(*sample.label), label_lookup);
  sample.label_quality = n.label_quality->quality;
  n.label_support = context_.accepted_labels.counts[*sample.label];
  const labels::ClassEvidence evidence = label_evidence_.of(*sample.label);
  n.label_judged = evidence.judged;
  n.label_lift = evidence.lift;
  if (n.label_quality->suggested_label) {
    n.suggested_label = context_.label_names.name_of(*n.label_quality->suggested_label);
  }
  return n;
}

// A judged labelled sample's quality joins the evidence of where the vote
// can judge, as stored_label_evidence reads it from the store for the next
// batch.
void IngestBatch::add_label_evidence(const store::NewSample& sample,
                                     const judge::Neighbourhood& n) {
  if (!sample.label || !n.label_quality) return;
  if (judge::abstained(n, rules_)) ++label_abstentions_;
  label_evidence_.add(*sample.label, n.label_quality->quality);
}

// Whether neighbour `id` (stored, or a pending item of this chunk) is a
// label issue rather than an accepted sample.
bool IngestBatch::label_issue(std::int64_t id) const {
  if (id >= kPendingBase) return !items_[static_cast<std::size_t>(id - kPendingBase)].accepted;
  return context_.accepted_labels.label_issue(id);
}

// The accepted samples among a record's nearest judged ones (one row, best
// first, padded with -1 to the same k): what its gain is taken over. Of
// neighbours_k_ (30 by default) nearest, the kGainNeighbours (4) a gain needs
// are nearly always accepted; where fewer are, the gain is over those.
index::SearchResults IngestBatch::accepted_among(const index::SearchResults& labelled) const {
  index::SearchResults nn = index::SearchResults::padded(1, labelled.k);
  std::size_t kept = 0;
  for (std::size_t r = 0; r < labelled.k && labelled.id(0, r) >= 0; ++r) {
    if (label_issue(labelled.id(0, r))) continue;
    nn.ids[kept] = labelled.id(0, r);
    nn.similarities[kept] = labelled.similarity(0, r);
    ++kept;
  }
  return nn;
}

// The verified near-duplicate candidates of an image (pixels or a decoded
// image file) or text record (other files are deduplicated exactly only).
// Only candidates within
// candidate_margin of the best index cosine are verified (a re-submitted copy
// is almost always the top candidate).
std::optional<dedup::NearDuplicateMatch> IngestBatch::near_duplicate(
    const ManifestRecord& record, const bulk::JobRecord& job, const index::SearchResults& nn) {
  const dedup::NearDuplicateFinder* finder = finder_for(record);
  if (finder == nullptr || nn.ids.empty() || nn.ids[0] < 0) return std::nullopt;
  index::SearchResults candidates = nn;
  const float floor_similarity =
      candidates.similarity(0, 0) - static_cast<float>(context_.config.candidate_margin);
  for (std::size_t r = 1; r < candidates.k; ++r) {
    if (candidates.ids[r] >= 0 && candidates.similarities[r] < floor_similarity) {
      candidates.ids[r] = -1;
      candidates.similarities[r] = -std::numeric_limits<float>::infinity();
    }
  }
  const dedup::RecordLookup record_lookup = [this](std::int64_t id) { return record_of(id); };
  dedup::RuledOut ruled_out;
  if (std::optional<std::vector<std::uint64_t>> shingles = sketches_.shingles(record)) {
    ruled_out = [this, shingles = std::move(*shingles)](std::int64_t id) {
      return ruled_out_by_sketch(shingles, id);
    };
  }
  dedup::NearDuplicateMatch match =
      finder->verify(candidates, 0, record, record_lookup, listed_verdicts(job), ruled_out);
  if (context_.job != nullptr && job.prior_neighbours) {
    job_neighbours_.verdicts_taken += match.candidates_known;
    job_neighbours_.verified_by_writer += match.candidates_checked - match.candidates_known;
  }
  if (match.found && match.id >= kPendingBase) {
    match.id = item_id(static_cast<std::size_t>(match.id - kPendingBase));
  }
  return match;
}

// The verdicts the workers made on `record`'s listed candidates (a bulk
// job's), by candidate id: a listed record the writer flushed has its store
// id, a pending one of this chunk its pending id. None outside a job.
dedup::KnownVerification IngestBatch::listed_verdicts(const bulk::JobRecord& job) const {
  const bulk::PriorNeighbours* prior = job.prior_neighbours.get();
  if (context_.job == nullptr || prior == nullptr || prior->verified_similarities.empty()) {
    return {};
  }
  return [this, prior](std::int64_t id) -> std::optional<dedup::Verification> {
    const bool pending = id >= kPendingBase;
    const std::int64_t position =
        pending ? items_[static_cast<std::size_t>(id - kPendingBase)].job_position : -1;
    const std::size_t n = std::min({prior->verified_similarities.size(),
                                    prior->verified_thresholds.size(), prior->positions.size()});
    for (std::size_t r = 0; r < n; ++r) {
      const std::int64_t listed = prior->positions[r];
      if (listed < 0) break;
      if (pending ? listed != position : context_.job->id_at(listed) != id) continue;
      if (std::isnan(prior->verified_similarities[r])) return std::nullopt;
      return dedup::Verification{prior->verified_similarities[r], prior->verified_thresholds[r]};
    }
    return std::nullopt;
  };
}

// Whether stored candidate `id` surely falls below the text verifier's
// threshold against a record whose shingles are `shingles`
// (BatchTextSketches::rules_out); a candidate of this chunk never is.
bool IngestBatch::ruled_out_by_sketch(const std::vector<std::uint64_t>& shingles,
                                      std::int64_t id) const {
  if (id >= kPendingBase || (first_id_ >= 0 && id >= first_id_)) return false;
  return sketches_.rules_out(shingles, id);
}

const dedup::NearDuplicateFinder* IngestBatch::finder_for(const ManifestRecord& record) const {
  switch (judge::near_duplicate_check(record)) {
    case judge::NearDuplicateCheck::image_file:
      return &image_file_finder_;
    case judge::NearDuplicateCheck::image:
      return &image_finder_;
    case judge::NearDuplicateCheck::text:
      return &text_finder_;
    case judge::NearDuplicateCheck::none:
      break;
  }
  return nullptr;
}

// Writes the items decided since the last flush: samples and events, then
// the vectors, then the text sketches kept since; accepted labels join the
// cache, and the vectors are queued for the indexes (index_chunk).
void IngestBatch::flush() {
  if (flushed_ < items_.size()) {
    std::vector<store::NewSample> samples;
    samples.reserve(items_.size() - flushed_);
    for (std::size_t i = flushed_; i < items_.size(); ++i) samples.push_back(items_[i].sample);
    const std::vector<std::int64_t> ids = context_.store.insert_samples(samples);
    for (std::size_t i = flushed_; i < items_.size(); ++i) {
      items_[i].id = ids[i - flushed_];
      record_flushed(i);
    }
    flushed_ = items_.size();
  }
  sketches_.store();
}

// The block's flushed vectors are kept to complete the next block's results
// (fold_in_unsearched) and join the index before the block after next is
// searched: at the start of its preparation, on the pool. A bulk job's
// records ask the index when decided (their prior lists name this block's
// records): during a job they join at once.
void IngestBatch::end_block() {
  index_queue_.end_block();
  if (context_.job != nullptr) index_queue_.join(context_.index);
}

// Item `i`, just given its store id: indexed by id, its vector written and
// queued for the index (accepted or label_issue), its label counted.
void IngestBatch::record_flushed(std::size_t i) {
  const Pending& p = items_[i];
  if (first_id_ < 0) first_id_ = p.id;
  WINNOW_THROW_IF_NOT(p.id >= first_id_, "{}: the store gave sample id {} after {} in one batch",
                      context_.store.database().path(), p.id, first_id_);
  const auto offset = static_cast<std::size_t>(p.id - first_id_);
  if (offset >= item_by_id_.size()) item_by_id_.resize(offset + 1, kNoItem);
  item_by_id_[offset] = i;
  if (p.image_quality) {
    store::ImageQualityRecord quality = *p.image_quality;
    quality.sample_id = p.id;
    image_quality_.put(quality);
  }
  if (p.record == nullptr) return;
  index_queue_.add(p.id, p.embedding, p.home_cell);
  if (p.accepted && p.sample.label) {
    context_.accepted_labels.accepted.set(p.id, static_cast<int>(*p.sample.label));
    ++context_.accepted_labels.counts[*p.sample.label];
  } else if (p.sample.label) {
    context_.accepted_labels.flagged.set(p.id, static_cast<int>(*p.sample.label));
  }
  vectors_.put(p.id, p.embedding.data(), p.embedding.size(), stored_content(*p.record));
  sketches_.keep(p.id, *p.record);
}

// The store id of an item, flushing first when it is not written yet.
std::int64_t IngestBatch::item_id(std::size_t i) {
  if (i >= flushed_) flush();
  return items_[i].id;
}

// The content of a near-duplicate candidate: a pending or flushed item of this
// chunk, else the stored content (nullptr for path records).
const ManifestRecord* IngestBatch::record_of(std::int64_t id, ContentUse use) {
  if (id >= kPendingBase) return items_[static_cast<std::size_t>(id - kPendingBase)].record;
  if (first_id_ >= 0 && id >= first_id_ &&
      static_cast<std::size_t>(id - first_id_) < item_by_id_.size() &&
      item_by_id_[static_cast<std::size_t>(id - first_id_)] != kNoItem) {
    return items_[item_by_id_[static_cast<std::size_t>(id - first_id_)]].record;
  }
  auto cached = content_cache_.find(id);
  if (cached == content_cache_.end()) {
    // The process's cache of stored contents first, then the store.
    StoredContentCache* kept = context_.stored_contents;
    const store::StoredContent* content = kept != nullptr ? kept->find(id) : nullptr;
    std::optional<store::StoredContent> read;
    if (content == nullptr && (read = vectors_.content_of(id))) content = &*read;
    std::unique_ptr<ManifestRecord> loaded;
    if (content != nullptr) {
      if (std::optional<ManifestRecord> record = stored_record(id, *content)) {
        loaded = std::make_unique<ManifestRecord>(std::move(*record));
      }
    }
    if (read && kept != nullptr) kept->put(id, std::move(*read));
    cached = content_cache_.emplace(id, std::move(loaded)).first;
  }
  const ManifestRecord* record = cached->second.get();
  if (record != nullptr && use == ContentUse::decision && sketches_.wants(id)) {
    sketches_.keep(id, *record);
  }
  return record;
}

// The label a neighbour votes with: a pending item's, else the cache's.
// The label (name) of stored sample `id` (flushed: a store id), if any: the
// label cache for the judged ones, else the store.
std::optional<std::string> IngestBatch::label_name_of(std::int64_t id) {
  std::optional<std::int64_t> label;
  if (const std::optional<int> voter = context_.accepted_labels.voter_label(id)) {
    label = *voter;
  } else if (const std::optional<store::SampleRecord> stored = context_.store.find_sample(id)) {
    label = stored->label;
  }
  if (!label) return std::nullopt;
  return context_.label_names.name_of(*label);
}

std::string IngestBatch::key_of(std::int64_t id) {
  const std::optional<store::SampleRecord> stored = context_.store.find_sample(id);
  return stored ? stored->external_key : std::string();
}

std::optional<int> IngestBatch::label_of(std::int64_t id) const {
  if (id >= kPendingBase) {
    const auto& label = items_[static_cast<std::size_t>(id - kPendingBase)].sample.label;
    return label ? std::optional<int>(static_cast<int>(*label)) : std::nullopt;
  }
  return context_.accepted_labels.voter_label(id);
}

bool IngestBatch::stored_key(const std::string& key) {
  const std::uint64_t hash64 = dedup::hash64(key);
  const bool maybe_stored =
      context_.stored_samples.may_hold_key(hash64) || seen_keys_.count(hash64) != 0;
  return maybe_stored && context_.store.find_by_external_key(key).has_value();
}

void IngestBatch::remember_key(const std::string& key) {
  batch_keys_.insert(key);
  seen_keys_.insert(dedup::hash64(key));
}

}  // namespace winnow::curation::ingest
