#include "winnow/curation/dataset/dataset.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/clock.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/curation/dataset/lookup/accepted_labels.h"
#include "winnow/curation/dataset/lookup/stored_content_cache.h"
#include "winnow/curation/dataset/lookup/stored_sample_filter.h"
#include "winnow/curation/dataset/lookup/stored_text_sketches.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/sample_history.h"
#include "winnow/store/text_sketch_table.h"
#include "winnow/store/vector_table.h"
#include "winnow/store/wal_checkpointer.h"

namespace winnow::curation {

namespace {

using nlohmann::json;

// Written for older versions of winnow, which read the index file's name
// from it; the index file is always the database's own (index_path_of).
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
using store::kRevisionKey;
// Rows read from the store per call while the index is rebuilt.
constexpr std::size_t kRebuildBatch = 4096;
// The stored contents kept for verification (StoredContentCache): room for
// about 165,000 short texts, or 35,000 Fashion-MNIST images.
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

// 'candidates: 10 here, 5 asked; embedder: "a" here, "b" asked': the fields
// of two configs that differ, by name.
std::string config_changes(const CurationConfig& stored, const CurationConfig& asked) {
  const nlohmann::json a = nlohmann::json::parse(stored.to_json());
  const nlohmann::json b = nlohmann::json::parse(asked.to_json());
  std::string out;
  for (const auto& [key, value] : a.items()) {
    if (b.contains(key) && b.at(key) == value) continue;
    if (!out.empty()) out += "; ";
    out += fmt::format("{}: {} here, {} asked", key, value.dump(),
                       b.contains(key) ? b.at(key).dump() : std::string("nothing"));
  }
  return out;
}

// `asked` with every key not in `asked_keys` taken from `stored`.
CurationConfig keep_unasked(const CurationConfig& stored, const CurationConfig& asked,
                            const std::set<std::string>& asked_keys) {
  const nlohmann::json kept = nlohmann::json::parse(stored.to_json());
  nlohmann::json merged = nlohmann::json::parse(asked.to_json());
  for (const auto& [key, value] : kept.items()) {
    if (!asked_keys.count(key)) merged[key] = value;
  }
  return CurationConfig::from_json(merged.dump());
}

}  // namespace

readers::ImageReading Dataset::image_reading() const {
  return curation::image_reading(config_, *embedder_);
}

readers::ImageReading image_reading(const CurationConfig& config, const embed::Embedder& embedder) {
  const embed::Embedder::ImageSize size = embedder.image_size();
  return {size.width, size.height, config.max_image_pixels,
          dedup::ColourImageVerifierOptions{}.side};
}

// --- open ----------------------------------------------------------------------

std::string index_path_of(const std::string& db_path) {
  const std::filesystem::path db(db_path);
  return (db.parent_path() / (db.filename().string() + ".index")).string();
}

void Dataset::init(const std::string& db_path, const CurationConfig& config,
                   const std::optional<std::set<std::string>>& asked_keys) {
  config.validate();
  store::MetadataStore store(db_path);  // schema version 2 has curation_vectors
  auto existing = store.get_meta(CurationConfig::kMetaKey);
  CurationConfig recorded = config;
  // A dataset whose samples hold no embedding (every record refused, or
  // annotations only) may take another config: nothing was judged with it.
  if (existing && store.count_by_status().total() > 0 &&
      store::VectorTable(store.database()).any_row()) {
    CurationConfig old = CurationConfig::from_json(*existing);
    if (asked_keys) recorded = keep_unasked(old, recorded, *asked_keys);
    // An init that leaves the embedder to winnow keeps the dataset's.
    if (recorded.embedder_auto) {
      recorded.embedder = old.embedder;
      recorded.embedder_auto = old.embedder_auto;
    }
    WINNOW_THROW_IF_NOT(old.to_json() == recorded.to_json(),
                        "{}: already holds samples curated with another config ({}); a dataset's "
                        "config cannot change once a sample holds an embedding (use a new "
                        "database)",
                        db_path, config_changes(old, recorded));
  }
  store.set_meta(CurationConfig::kMetaKey, recorded.to_json());
  store.set_meta(kIndexFileKey, std::filesystem::path(index_path_of(db_path)).filename().string());
  store.set_meta(kIndexTypeKey, index::canonical_vector_index_config(config.index));
  store.record_writer(/*creating=*/!existing);
}

Dataset::Dataset(const std::string& db_path, OpenMode mode)
    : db_path_(db_path),
      pool_(std::make_unique<ThreadPool>(1)),
      accepted_labels_(std::make_unique<AcceptedLabelCache>()),
      stored_contents_(std::make_unique<StoredContentCache>(kStoredContentCacheBytes)) {
  WINNOW_THROW_IF_NOT(std::filesystem::exists(db_path),
                      "database '{}' does not exist (run `winnow init --db {}` first)", db_path,
                      db_path);
  store::DatabaseOptions options;
  options.read_only = mode == OpenMode::read_only;
  store_ = std::make_unique<store::MetadataStore>(db_path, options);
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
  index_path_ = index_path_of(db_path);
  embedder_ = embed::make_embedder(config_.embedder);
  image_verifier_ = make_image_verifier(config_);
  text_verifier_ = make_text_verifier(config_);
  text_sketches_ = std::make_unique<StoredTextSketches>(text_verifier_->options().shingle);
  stored_samples_ = std::make_unique<StoredSampleFilter>();
  label_names_ = LabelNames::read(*store_);
  revision_ = stored_revision();
  open_index();
}

Dataset::~Dataset() = default;

void Dataset::set_threads(int threads) {
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

std::int64_t Dataset::stored_revision() {
  return store::SampleHistory(store_->database()).revision();
}

std::int64_t Dataset::next_revision() {
  const std::int64_t next = stored_revision() + 1;
  store_->set_meta(kRevisionKey, std::to_string(next));
  return next;
}

void Dataset::sync_with_store() {
  const std::int64_t now = stored_revision();
  if (now == revision_ && index_) return;
  CurationConfig config = stored_config(*store_, db_path_);
  if (config.embedder != config_.embedder) embedder_ = embed::make_embedder(config.embedder);
  config_ = config;
  open_index();
  revision_ = now;
}

void Dataset::open_index() {
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
  reload_accepted_labels();
  load_text_sketches();
}

// Sample ids are never reused (samples are never deleted), so an id the index
// holds always has the vector the store holds for it: comparing the two id
// sets is enough.
index::CatchUpCounts Dataset::catch_up_index(index::VectorIndex& index) {
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

void Dataset::save_index_snapshot() {
  const auto t0 = std::chrono::steady_clock::now();
  index::save_vector_index(*index_, index_path_, index::fingerprint_of(*index_));
  snapshot_seconds_ = seconds_since(t0);
  unsaved_seconds_ = 0.0;
}

bool Dataset::save_index_if_behind() {
  if (!index_ || unsaved_seconds_ <= 0.0) return false;
  save_index_snapshot();
  return true;
}

void Dataset::reload_accepted_labels() {
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
void Dataset::load_text_sketches() {
  store::TextSketchTable table(store_->database());
  table.for_each(text_sketches_->shingle(), [&](const store::StoredTextSketch& row) {
    text_sketches_->put(row.sample_id,
                        dedup::TextSketch(row.bits, static_cast<std::uint32_t>(row.size)));
  });
}

IndexInfo Dataset::index_info() const {
  IndexInfo info = open_info_;
  if (index_) {
    info.type = index_->type();
    info.config = index_->config();
    info.vectors = index_->size();
  }
  info.file = index_path_;
  return info;
}

int Dataset::threads() const {
  return pool_->threads();
}

index::VectorIndex& Dataset::index() {
  if (!index_) open_index();
  return *index_;
}

void Dataset::request_checkpoint() {
  if (checkpointer_) checkpointer_->request();
}

void Dataset::forget_uncommitted() {
  stored_contents_->clear();
  text_sketches_->clear();
  try {
    open_index();
  } catch (const std::exception&) {
    index_.reset();
  }
}

void Dataset::reopen_index() {
  open_index();
}

void Dataset::replace_embedding(const CurationConfig& config,
                                std::unique_ptr<embed::Embedder> embedder,
                                std::unique_ptr<index::VectorIndex> index) {
  config_ = config;
  embedder_ = std::move(embedder);
  index_ = std::move(index);
}

// The index file is a cache of the committed store: a failed save is a
// warning (the next open catches up or rebuilds), never a failed batch.
IndexSaveOutcome Dataset::after_index_insertions(double add_seconds) {
  IndexSaveOutcome outcome;
  unsaved_seconds_ += add_seconds;
  const bool save = snapshots_ == IndexSnapshots::every_batch ||
                    (snapshots_ == IndexSnapshots::by_cost && unsaved_seconds_ > 0.0 &&
                     unsaved_seconds_ >= kSnapshotCostRatio * snapshot_seconds_);
  if (!save) return outcome;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    save_index_snapshot();
    outcome.seconds = seconds_since(t0);
    outcome.saved = true;
  } catch (const std::exception& e) {
    outcome.error = e.what();
  }
  return outcome;
}

}  // namespace winnow::curation
