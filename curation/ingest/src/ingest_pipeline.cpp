#include "winnow/curation/ingest/ingest_pipeline.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/ingest/information_gain.h"
#include "winnow/curation/labels/label_text.h"
#include "winnow/clock.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/store/text_sketch_table.h"
#include "winnow/store/transaction.h"
#include "winnow/store/vector_table.h"

#include "ingest_batch.h"
#include "stored_content_cache.h"

namespace winnow::curation::ingest {

namespace {

using nlohmann::json;

constexpr const char* kIndexFileKey = "index.file";
constexpr const char* kIndexTypeKey = "index.type";

// The dataset's config as `winnow init` stored it, its index with the
// parameters resolved then ("hnsw" means the defaults of the winnow that
// created the dataset, kept in index.type), so new defaults never change the
// index of an existing dataset.
CurationConfig stored_config(store::MetadataStore& store, const std::string& db_path) {
  auto cfg = store.get_meta(CurationConfig::kMetaKey);
  WINNOW_THROW_IF_NOT(cfg.has_value(), "database '{}' lost its curation config", db_path);
  CurationConfig config = CurationConfig::from_json(*cfg);
  if (auto index = store.get_meta(kIndexTypeKey)) config.index = *index;
  return config;
}
// Incremented by every write transaction of a pipeline (see sync_with_store).
constexpr const char* kRevisionKey = "curation.revision";
// Rows read from the store per call while the index is rebuilt.
constexpr std::size_t kRebuildBatch = 4096;
// The stored contents kept for verification: about 165,000 short texts, or
// 35,000 Fashion-MNIST images (docs/benchmarks.md, "A cache of stored
// contents": the hit rate and what it saves at 1M records).
constexpr std::size_t kStoredContentCacheBytes = std::size_t{32} << 20;
// Ids probed (newest, and as many spread out) when a snapshot is loaded, and
// the cosine at which a probe counts as its own stored vector (float32
// normalisation of one vector twice differs by far less).
constexpr std::size_t kSnapshotProbes = 8;
constexpr float kSameVector = 0.9999f;

// Ids alone do not tell a snapshot of this store from another store's (a
// dataset copied under another name next to another dataset's index file
// of that name): ids are numbered alike in every store. So some ids held by
// both, the newest and some spread over the rest, are looked up in the index
// with the store's vectors: in a snapshot of this store each is its own
// nearest neighbour. Half or more missing marks the file foreign (a lone
// miss is tolerated: the index is approximate). Returns why, or "".
std::string foreign_snapshot(const index::VectorIndex& index, store::VectorTable& table,
                             std::size_t dim, const std::vector<std::int64_t>& held,
                             const std::vector<std::int64_t>& wanted) {
  std::vector<std::int64_t> common;
  std::set_intersection(held.begin(), held.end(), wanted.begin(), wanted.end(),
                        std::back_inserter(common));
  if (common.empty()) return "";
  std::vector<std::int64_t> probes;
  for (std::size_t i = 0; i < kSnapshotProbes && i < common.size(); ++i) {
    probes.push_back(common[common.size() - 1 - i]);                // the newest
    probes.push_back(common[i * common.size() / kSnapshotProbes]);  // spread
  }
  std::sort(probes.begin(), probes.end());
  probes.erase(std::unique(probes.begin(), probes.end()), probes.end());
  std::vector<float> vectors;
  table.read_embeddings(probes, dim, vectors);
  const index::SearchResults found = index.search(vectors, 4);
  std::size_t missing = 0;
  std::int64_t first_missing = -1;
  for (std::size_t q = 0; q < probes.size(); ++q) {
    bool self = false;
    for (std::size_t r = 0; r < found.count(q) && !self; ++r) {
      self = found.id(q, r) == probes[q] && found.similarity(q, r) >= kSameVector;
    }
    if (!self && missing++ == 0) first_missing = probes[q];
  }
  if (2 * missing < probes.size()) return "";
  return fmt::format("{} of {} samples probed (first: id {}) are not held with the store's vector",
                     missing, probes.size(), first_missing);
}

}  // namespace

std::unique_ptr<dedup::ColourImageNearDuplicateVerifier> make_image_verifier(
    const CurationConfig& config) {
  dedup::ColourImageVerifierOptions colour;
  colour.threshold = config.image_colour_threshold;
  colour.max_shift = config.image_max_shift;
  return std::make_unique<dedup::ColourImageNearDuplicateVerifier>(
      colour, dedup::ImageVerifierOptions{config.image_max_shift, config.image_threshold});
}

std::unique_ptr<dedup::TextNearDuplicateVerifier> make_text_verifier(const CurationConfig& config) {
  return std::make_unique<dedup::TextNearDuplicateVerifier>(dedup::TextVerifierOptions{
      config.text_shingle, config.text_threshold, config.text_min_jaccard});
}

// --- config ------------------------------------------------------------------

int CurationConfig::neighbours_per_record() const {
  return std::max({candidates, label_k, kGainNeighbours});
}

std::string CurationConfig::to_json() const {
  json j = {{"embedder", embedder},
            {"index", index},
            {"candidates", candidates},
            {"min_candidate_similarity", min_candidate_similarity},
            {"candidate_margin", candidate_margin},
            {"image_threshold", image_threshold},
            {"image_max_shift", image_max_shift},
            {"image_colour_threshold", image_colour_threshold},
            {"image_file_min_candidate_similarity", image_file_min_candidate_similarity},
            {"text_threshold", text_threshold},
            {"text_min_jaccard", text_min_jaccard},
            {"text_shingle", text_shingle},
            {"text_min_candidate_similarity", text_min_candidate_similarity},
            {"label_k", label_k},
            {"label_flag_below", label_flag_below},
            {"min_label_neighbours", min_label_neighbours},
            {"label_rejudge_growth", label_rejudge_growth},
            {"micro_batch", micro_batch},
            {"max_image_pixels", max_image_pixels},
            {"image_issues", image_issues.to_json()}};
  return j.dump();
}

CurationConfig CurationConfig::from_json(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_object(), "curation config is not a JSON object: {}", text);
  CurationConfig c;
  auto get = [&](const char* key, auto& field) {
    if (!j.contains(key)) return;
    try {
      j.at(key).get_to(field);
    } catch (const std::exception& e) {
      WINNOW_THROW("curation config: field '{}' has the wrong type: {}", key, e.what());
    }
  };
  get("embedder", c.embedder);
  get("index", c.index);
  get("candidates", c.candidates);
  get("min_candidate_similarity", c.min_candidate_similarity);
  get("candidate_margin", c.candidate_margin);
  get("image_threshold", c.image_threshold);
  get("image_max_shift", c.image_max_shift);
  get("image_colour_threshold", c.image_colour_threshold);
  get("image_file_min_candidate_similarity", c.image_file_min_candidate_similarity);
  get("text_threshold", c.text_threshold);
  c.text_min_jaccard = c.text_threshold;
  get("text_min_jaccard", c.text_min_jaccard);
  get("text_shingle", c.text_shingle);
  c.text_min_candidate_similarity =
      std::min(c.min_candidate_similarity, kJaccardOnlyTextMinCandidateSimilarity);
  get("text_min_candidate_similarity", c.text_min_candidate_similarity);
  get("label_k", c.label_k);
  get("label_flag_below", c.label_flag_below);
  get("min_label_neighbours", c.min_label_neighbours);
  c.label_rejudge_growth = 0.0;
  get("label_rejudge_growth", c.label_rejudge_growth);
  get("micro_batch", c.micro_batch);
  get("max_image_pixels", c.max_image_pixels);
  if (j.contains("image_issues"))
    c.image_issues = ImageIssuePolicy::from_json(j.at("image_issues"));
  c.validate();
  return c;
}

void CurationConfig::validate() const {
  WINNOW_THROW_IF_NOT(candidates >= 1 && candidates <= 1000, "candidates={} must be in [1, 1000]",
                      candidates);
  WINNOW_THROW_IF_NOT(std::isfinite(min_candidate_similarity) && min_candidate_similarity <= 1.0,
                      "min_candidate_similarity={} must be finite and <= 1",
                      min_candidate_similarity);
  WINNOW_THROW_IF_NOT(std::isfinite(image_file_min_candidate_similarity) &&
                          image_file_min_candidate_similarity <= 1.0,
                      "image_file_min_candidate_similarity={} must be finite and <= 1",
                      image_file_min_candidate_similarity);
  WINNOW_THROW_IF_NOT(
      std::isfinite(text_min_candidate_similarity) && text_min_candidate_similarity <= 1.0,
      "text_min_candidate_similarity={} must be finite and <= 1", text_min_candidate_similarity);
  WINNOW_THROW_IF_NOT(std::isfinite(candidate_margin) && candidate_margin >= 0.0,
                      "candidate_margin={} must be finite and >= 0", candidate_margin);
  WINNOW_THROW_IF_NOT(label_k >= 1 && label_k <= 1000, "label_k={} must be in [1, 1000]", label_k);
  WINNOW_THROW_IF_NOT(
      std::isfinite(label_flag_below) && label_flag_below >= 0.0 && label_flag_below <= 1.0,
      "label_flag_below={} must be in [0, 1]", label_flag_below);
  WINNOW_THROW_IF_NOT(min_label_neighbours >= 0, "min_label_neighbours={} must be >= 0",
                      min_label_neighbours);
  WINNOW_THROW_IF_NOT(std::isfinite(label_rejudge_growth) && label_rejudge_growth >= 0.0 &&
                          label_rejudge_growth <= 1000.0,
                      "label_rejudge_growth={} must be in [0, 1000] (0: never re-judge)",
                      label_rejudge_growth);
  WINNOW_THROW_IF_NOT(micro_batch >= 1 && micro_batch <= 65536,
                      "micro_batch={} must be in [1, 65536]", micro_batch);
  WINNOW_THROW_IF_NOT(max_image_pixels >= 1, "max_image_pixels={} must be >= 1", max_image_pixels);
  image_issues.validate();
  // The verifiers, embedder and index validate their own parameters.
  make_image_verifier(*this);
  make_text_verifier(*this);
  auto e = embed::make_embedder(embedder);
  index::make_vector_index(index, e->dim());
}

ImageReading IngestPipeline::image_reading() const {
  return ingest::image_reading(config_, *embedder_);
}

ImageReading image_reading(const CurationConfig& config, const embed::Embedder& embedder) {
  const embed::Embedder::ImageSize size = embedder.image_size();
  return {size.width, size.height, config.max_image_pixels,
          dedup::ColourImageVerifierOptions{}.side};
}

// --- helpers -------------------------------------------------------------------

std::string file_checksum(const std::string& path) {
  return dedup::file_content_hash(path);
}

BatchInterrupted::BatchInterrupted(const std::string& batch)
    : Error(fmt::format("ingest of batch '{}' was interrupted by a stop request; nothing of it was "
                        "kept",
                        batch),
            __func__, __FILE__, __LINE__, ErrorKind::busy) {}

std::vector<ManifestEntry> read_manifest(const std::string& path,
                                         const ManifestReaderOptions& options) {
  ManifestReader reader(path, options);
  std::vector<ManifestEntry> entries;
  ManifestEntry entry;
  while (reader.next(entry)) entries.push_back(std::move(entry));
  return entries;
}

// --- open ----------------------------------------------------------------------

void IngestPipeline::init(const std::string& db_path, const CurationConfig& config) {
  config.validate();
  store::MetadataStore store(db_path);  // schema version 2 has curation_vectors
  auto existing = store.get_meta(CurationConfig::kMetaKey);
  if (existing && store.count_by_status().total() > 0) {
    CurationConfig old = CurationConfig::from_json(*existing);
    WINNOW_THROW_IF_NOT(old.to_json() == config.to_json(),
                        "{}: already holds samples curated with config {}; it cannot change to {}",
                        db_path, old.to_json(), config.to_json());
  }
  store.set_meta(CurationConfig::kMetaKey, config.to_json());
  store.set_meta(kIndexFileKey, std::filesystem::path(db_path).filename().string() + ".index");
  store.set_meta(kIndexTypeKey, index::canonical_vector_index_config(config.index));
  store.record_writer(/*creating=*/!existing);
}

IngestPipeline::IngestPipeline(const std::string& db_path)
    : db_path_(db_path),
      pool_(std::make_unique<ThreadPool>(1)),
      accepted_labels_(std::make_unique<AcceptedLabelCache>()),
      stored_contents_(std::make_unique<StoredContentCache>(kStoredContentCacheBytes)) {
  WINNOW_THROW_IF_NOT(std::filesystem::exists(db_path),
                      "database '{}' does not exist (run `winnow init --db {}` first)", db_path,
                      db_path);
  store_ = std::make_unique<store::MetadataStore>(db_path);
  // A batch is one write transaction over several B-trees (samples and their
  // indexes, events, curation_vectors); with SQLite's default 2 MB page cache
  // it spills dirty pages to the WAL and reads them back mid-batch.
  store_->database().exec("PRAGMA cache_size = -65536");  // KiB: 64 MB at most
  // Each statement inside the batch's transaction keeps a statement journal,
  // which SQLite writes to a temporary file past 64 KB; in memory it costs no
  // system calls. (The bulk writes join the batch's transaction instead of
  // opening a savepoint, which would make that journal long:
  // Transaction::Nested::join.)
  store_->database().exec("PRAGMA temp_store = MEMORY");
  WINNOW_THROW_IF_NOT(store_->get_meta(CurationConfig::kMetaKey).has_value(),
                      "database '{}' was never initialised (run `winnow init`)", db_path);
  config_ = stored_config(*store_, db_path);
  auto file = store_->get_meta(kIndexFileKey);
  std::string name = file ? *file : std::filesystem::path(db_path).filename().string() + ".index";
  index_path_ = (std::filesystem::path(db_path).parent_path() / name).string();
  embedder_ = embed::make_embedder(config_.embedder);
  image_verifier_ = make_image_verifier(config_);
  text_verifier_ = make_text_verifier(config_);
  text_sketches_ = std::make_unique<StoredTextSketches>(text_verifier_->options().shingle);
  stored_samples_ = std::make_unique<StoredSampleFilter>();
  label_names_ = labels::LabelNames::read(*store_);
  revision_ = stored_revision();
  open_index();
}

IngestPipeline::~IngestPipeline() = default;

IngestContext IngestPipeline::ingest_context() {
  IngestContext context{*store_,          *index_,         *embedder_,   config_,
                        *image_verifier_, *text_verifier_, label_names_, *accepted_labels_,
                        *stored_samples_, *pool_,          job_.get()};
  context.stored_contents = stored_contents_.get();
  context.text_sketches = text_sketches_.get();
  return context;
}

bool IngestPipeline::can_start_job() {
  if (!index_) open_index();
  return index_->size() == 0;
}

bool IngestPipeline::start_job(std::size_t records) {
  job_.reset();
  if (!can_start_job()) return false;
  job_ = std::make_unique<JobPositions>(records, revision_);
  return true;
}

void IngestPipeline::set_threads(int threads) {
  pool_ = std::make_unique<ThreadPool>(threads);
  // With a core to spare, a batch's WAL checkpoint runs beside the next
  // batch instead of inside its commit; on one thread it stays in the commit,
  // so that one thread uses one core.
  checkpointer_.reset();
  if (pool_->threads() > 1) {
    checkpointer_ = std::make_unique<store::WalCheckpointer>(store_->database());
  }
  // The pool splits the searches itself; an OpenMP team of FAISS's beside it
  // would spin-wait on the same cores between its parallel loops.
  index::set_index_threads(1);
}

std::int64_t IngestPipeline::stored_revision() {
  auto text = store_->get_meta(kRevisionKey);
  if (!text) return 0;
  auto v = labels::parse_decimal(*text);
  WINNOW_THROW_IF_NOT(v.has_value(), "{}: meta {} is not an integer: '{}'", db_path_, kRevisionKey,
                      *text);
  return *v;
}

std::int64_t IngestPipeline::next_revision() {
  const std::int64_t next = stored_revision() + 1;
  store_->set_meta(kRevisionKey, std::to_string(next));
  return next;
}

void IngestPipeline::sync_with_store() {
  const std::int64_t now = stored_revision();
  if (now == revision_ && index_) return;
  CurationConfig config = stored_config(*store_, db_path_);
  if (config.embedder != config_.embedder) embedder_ = embed::make_embedder(config.embedder);
  config_ = config;
  open_index();
  revision_ = now;
}

void IngestPipeline::open_index() {
  const std::size_t dim = embedder_->dim();
  auto reader =
      std::make_shared<store::VectorReader>(store_->database(), dim);  // the judged samples
  auto source = [reader](index::VectorBatch& batch) {
    return reader->read(kRebuildBatch, batch.ids, batch.vectors) > 0;
  };
  double catch_up_seconds = 0.0;
  bool caught_up = false;  // the loaded snapshot changed
  auto catch_up = [&](index::VectorIndex& index) {
    const auto t0 = std::chrono::steady_clock::now();
    const index::CatchUpCounts counts = catch_up_index(index);
    catch_up_seconds = seconds_since(t0);
    caught_up = counts.added > 0 || counts.removed > 0;
    return counts;
  };
  const auto t0 = std::chrono::steady_clock::now();
  index::CaughtUpIndex result =
      index::open_or_catch_up(index_path_, config_.index, dim, source, catch_up);
  index_ = std::move(result.open.index);
  // A rebuild's cost is the save it ended with; a load's, the load itself.
  snapshot_seconds_ =
      result.open.rebuilt ? result.open.save_seconds : seconds_since(t0) - catch_up_seconds;
  // 0 after a rebuild (no catch-up ran), or when the snapshot was current.
  unsaved_seconds_ = caught_up ? catch_up_seconds : 0.0;
  open_info_ = index_info();
  open_info_.rebuilt = result.open.rebuilt;
  open_info_.rebuild_reason =
      result.open.rebuilt ? std::string(index::to_string(result.open.reason)) +
                                (result.open.detail.empty() ? "" : ": " + result.open.detail)
                          : "";
  open_info_.caught_up = result.counts;
  load_accepted_labels();
  load_text_sketches();
}

// Sample ids are never reused (samples are never deleted), so an id the index
// holds always has the vector the store holds for it: comparing the two id
// sets is enough.
index::CatchUpCounts IngestPipeline::catch_up_index(index::VectorIndex& index) {
  store::VectorTable table(store_->database());
  const std::vector<std::int64_t> wanted = table.judged_ids();  // ascending
  std::vector<std::int64_t> held = index.ids();
  std::sort(held.begin(), held.end());
  if (const std::string why = foreign_snapshot(index, table, embedder_->dim(), held, wanted);
      !why.empty()) {
    return {0, 0, fmt::format("'{}' is not a snapshot of '{}': {}", index_path_, db_path_, why)};
  }
  std::vector<std::int64_t> missing, gone;
  std::set_difference(wanted.begin(), wanted.end(), held.begin(), held.end(),
                      std::back_inserter(missing));
  std::set_difference(held.begin(), held.end(), wanted.begin(), wanted.end(),
                      std::back_inserter(gone));
  index.remove(gone);
  const std::size_t dim = embedder_->dim();
  std::vector<std::int64_t> ids;
  std::vector<float> vectors;
  for (std::size_t at = 0; at < missing.size(); at += kRebuildBatch) {
    ids.assign(missing.begin() + static_cast<std::ptrdiff_t>(at),
               missing.begin() +
                   static_cast<std::ptrdiff_t>(std::min(missing.size(), at + kRebuildBatch)));
    vectors.clear();
    table.read_embeddings(ids, dim, vectors);
    index.add(ids, vectors);
  }
  return {missing.size(), gone.size(), {}};
}

void IngestPipeline::save_index_snapshot() {
  const auto t0 = std::chrono::steady_clock::now();
  index::save_vector_index(*index_, index_path_, index::fingerprint_of(*index_));
  snapshot_seconds_ = seconds_since(t0);
  unsaved_seconds_ = 0.0;
}

bool IngestPipeline::save_index_if_behind() {
  if (!index_ || unsaved_seconds_ <= 0.0) return false;
  save_index_snapshot();
  return true;
}

void IngestPipeline::load_accepted_labels() {
  accepted_labels_->accepted.clear();
  accepted_labels_->flagged.clear();
  accepted_labels_->counts.clear();
  store_->for_each_accepted_sample([&](const store::AcceptedSample& s) {
    if (s.label && s.has_vector) {  // as IngestBatch counts them: the index's samples
      accepted_labels_->accepted.set(s.id, static_cast<int>(*s.label));
      ++accepted_labels_->counts[*s.label];
    }
  });
  // Label issues vote too; one without a vector is never anyone's neighbour.
  store_->for_each_sample(
      [&](const store::SampleRecord& s) {
        if (s.label) accepted_labels_->flagged.set(s.id, static_cast<int>(*s.label));
      },
      store::SampleStatus::label_issue);
}

// The sketches every stored text got when a batch wrote or first read it
// (those already held are put again, unchanged: a sample's text never
// changes). Rows of another shingle length are left out; their candidates are
// read and sketched again. The stored size fits 32 bits; put() refuses the
// one size it cannot keep.
void IngestPipeline::load_text_sketches() {
  store::TextSketchTable table(store_->database());
  table.for_each(text_sketches_->shingle(), [&](const store::StoredTextSketch& row) {
    text_sketches_->put(row.sample_id,
                        dedup::TextSketch(row.bits, static_cast<std::uint32_t>(row.size)));
  });
}

IndexInfo IngestPipeline::index_info() const {
  IndexInfo info = open_info_;
  if (index_) {
    info.type = index_->type();
    info.config = index_->config();
    info.vectors = index_->size();
  }
  info.file = index_path_;
  return info;
}

// --- ingest --------------------------------------------------------------------

BatchReport IngestPipeline::ingest_batch(const std::string& name, const std::string& checksum,
                                         std::vector<ManifestEntry> entries) {
  std::size_t next = 0;
  return ingest_batch(name, checksum, [&](ManifestEntry& entry) {
    if (next == entries.size()) return false;
    entry = std::move(entries[next++]);
    return true;
  });
}

BatchReport IngestPipeline::ingest_batch(const std::string& name, const std::string& checksum,
                                         ManifestReader& reader, const std::atomic<bool>* stop) {
  // Deferred: the batch parses a chunk's lines (and decodes their files) on its threads.
  return ingest_batch(
      name, checksum, [&](ManifestEntry& entry) { return reader.next_deferred(entry); }, stop);
}

BatchReport IngestPipeline::ingest_batch(const std::string& name, const std::string& checksum,
                                         const EntrySource& next_entry,
                                         const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  BatchReport report;
  report.name = name;
  store::BatchRecord batch = store_->register_batch(name, checksum);
  report.batch_id = batch.id;
  if (batch.state == store::BatchState::done) {
    report.skipped = true;
    report.counts = batch.counts;
    report.seconds = seconds_since(t0);
    return report;
  }
  batch = store_->start_batch(batch.id);

  double add_seconds = 0.0;
  try {
    store::Transaction tx(store_->database());
    sync_with_store();
    // Another process wrote the dataset since the job's last batch: its
    // samples are in no prior list, so the job's lists no longer hold.
    if (job_ && job_->revision() != revision_) job_.reset();
    const std::size_t names_before = label_names_.size();
    stored_samples_->catch_up(*store_);
    IngestBatch ingest(ingest_context(), batch.id);
    ingest.run(next_entry, name, stop);
    report.phases = ingest.phases();
    auto phase_start = std::chrono::steady_clock::now();
    report.labels_rejudged = rejudge_stale_labels(batch.id, ingest.judged_ranges());
    report.phases.rejudge_labels = seconds_since(phase_start);
    report.rejections = ingest.rejections().groups();
    report.other_rejections = ingest.rejections().other_count();
    report.job_neighbours = ingest.job_neighbours();
    if (label_names_.size() != names_before) label_names_.write(*store_);
    batch = store_->finish_batch(batch.id);
    store_->record_writer();
    const std::int64_t revision = next_revision();
    add_seconds = ingest.index_add_seconds();
    phase_start = std::chrono::steady_clock::now();
    tx.commit();
    report.phases.commit = seconds_since(phase_start);
    if (checkpointer_) checkpointer_->request();
    revision_ = revision;
    if (job_) job_->set_revision(revision);
  } catch (const std::exception& e) {
    job_.reset();               // the positions it published were rolled back
    stored_contents_->clear();  // they may hold rolled-back ids, which SQLite hands out again
    text_sketches_->clear();
    // The transaction rolled back: the in-memory index and labels hold this
    // batch's rolled-back ids, which SQLite will hand out again. Reopen them
    // from disk, or drop the index so that the next write reopens it.
    try {
      open_index();
    } catch (const std::exception&) {
      index_.reset();
    }
    try {
      store_->fail_batch(batch.id, e.what());
    } catch (const std::exception&) {
      // The store is busy or broken too: the batch stays `running`, the
      // first error is the one to report.
    }
    throw;
  }
  after_batch_index_work(add_seconds, report);
  report.counts = batch.counts;
  report.seconds = seconds_since(t0);
  return report;
}

// The index file is a cache of the committed store: a failed save is a
// warning (the next open catches up or rebuilds), never a failed batch.
void IngestPipeline::after_batch_index_work(double add_seconds, BatchReport& report) {
  unsaved_seconds_ += add_seconds;
  const bool save = snapshots_ == IndexSnapshots::every_batch ||
                    (snapshots_ == IndexSnapshots::by_cost && unsaved_seconds_ > 0.0 &&
                     unsaved_seconds_ >= kSnapshotCostRatio * snapshot_seconds_);
  if (!save) return;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    save_index_snapshot();
    report.phases.save_index = seconds_since(t0);
    report.index_saved = true;
  } catch (const std::exception& e) {
    report.index_save_error = e.what();
  }
}

}  // namespace winnow::curation::ingest
