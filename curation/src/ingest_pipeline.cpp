#include "winnow/curation/ingest_pipeline.h"

#include <sqlite3.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <limits>
#include <string_view>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/content_hash.h"
#include "winnow/curation/information_gain.h"
#include "winnow/curation/label_text.h"
#include "winnow/clock.h"
#include "winnow/error.h"
#include "winnow/index/simd_distance.h"
#include "winnow/index/vector_index_factory.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"

#include "raw_statement.h"

namespace winnow::curation {

namespace {

using nlohmann::json;

constexpr const char* kLabelNamesKey = "curation.label_names";
constexpr const char* kIndexFileKey = "index.file";
constexpr const char* kIndexTypeKey = "index.type";
// Incremented by every write transaction of a pipeline (see sync_with_store).
constexpr const char* kRevisionKey = "curation.revision";
// Ids of this batch's accepted samples not yet in the index: kPendingBase + item.
constexpr std::int64_t kPendingBase = std::int64_t{1} << 62;

constexpr const char* kAcceptedVectors =
    "SELECT v.sample_id, v.embedding FROM curation_vectors v JOIN samples s ON s.id = v.sample_id"
    " WHERE s.status = 'accepted' ORDER BY v.sample_id";

std::optional<std::int64_t> parse_int(const std::string& s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// The text of a flat JSON object, written field by field. A decision's
// details are built once per sample; an nlohmann::json tree (a std::map per
// object, then dump) cost 3 to 5% of an ingest. Numbers are written as the
// shortest text that reads back the same value, like nlohmann's dump.
class JsonObjectText {
 public:
  JsonObjectText& number(std::string_view key, double value) {
    open(key);
    if (std::isfinite(value)) {
      fmt::format_to(std::back_inserter(text_), "{}", value);
    } else {
      text_ += "null";  // as nlohmann writes NaN and infinities
    }
    return *this;
  }
  JsonObjectText& integer(std::string_view key, std::int64_t value) {
    open(key);
    fmt::format_to(std::back_inserter(text_), "{}", value);
    return *this;
  }
  JsonObjectText& string(std::string_view key, const std::string& value) {
    open(key);
    text_ += json(value).dump();  // escaped
    return *this;
  }
  JsonObjectText& object(std::string_view key, const JsonObjectText& value) {
    open(key);
    text_ += value.str();
    return *this;
  }
  std::string str() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  // Keys are fixed identifiers here: no escaping needed.
  void open(std::string_view key) {
    text_ += text_.empty() ? "{\"" : ",\"";
    text_ += key;
    text_ += "\":";
  }
  std::string text_;
};

}  // namespace

// --- config ------------------------------------------------------------------

std::string CurationConfig::to_json() const {
  json j = {{"embedder", embedder},
            {"index", index},
            {"candidates", candidates},
            {"min_candidate_similarity", min_candidate_similarity},
            {"candidate_margin", candidate_margin},
            {"image_threshold", image_threshold},
            {"image_max_shift", image_max_shift},
            {"text_threshold", text_threshold},
            {"text_shingle", text_shingle},
            {"label_k", label_k},
            {"label_flag_below", label_flag_below},
            {"min_label_neighbours", min_label_neighbours},
            {"micro_batch", micro_batch}};
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
  get("text_threshold", c.text_threshold);
  get("text_shingle", c.text_shingle);
  get("label_k", c.label_k);
  get("label_flag_below", c.label_flag_below);
  get("min_label_neighbours", c.min_label_neighbours);
  get("micro_batch", c.micro_batch);
  c.validate();
  return c;
}

void CurationConfig::validate() const {
  WINNOW_THROW_IF_NOT(candidates >= 1 && candidates <= 1000,
                      "candidates={} must be in [1, 1000]", candidates);
  WINNOW_THROW_IF_NOT(std::isfinite(min_candidate_similarity) && min_candidate_similarity <= 1.0,
                      "min_candidate_similarity={} must be finite and <= 1",
                      min_candidate_similarity);
  WINNOW_THROW_IF_NOT(std::isfinite(candidate_margin) && candidate_margin >= 0.0,
                      "candidate_margin={} must be finite and >= 0", candidate_margin);
  WINNOW_THROW_IF_NOT(label_k >= 1 && label_k <= 1000, "label_k={} must be in [1, 1000]", label_k);
  WINNOW_THROW_IF_NOT(std::isfinite(label_flag_below) && label_flag_below >= 0.0 &&
                          label_flag_below <= 1.0,
                      "label_flag_below={} must be in [0, 1]", label_flag_below);
  WINNOW_THROW_IF_NOT(min_label_neighbours >= 0, "min_label_neighbours={} must be >= 0",
                      min_label_neighbours);
  WINNOW_THROW_IF_NOT(micro_batch >= 1 && micro_batch <= 65536,
                      "micro_batch={} must be in [1, 65536]", micro_batch);
  // The verifiers, embedder and index validate their own parameters.
  ImageNearDuplicateVerifier image({image_max_shift, image_threshold});
  TextNearDuplicateVerifier text({text_shingle, text_threshold});
  auto e = make_embedder(embedder);
  index::make_vector_index(index, e->dim());
}

// --- helpers -------------------------------------------------------------------

std::string file_checksum(const std::string& path) { return file_content_hash(path); }

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
  MetadataStore store(db_path);  // schema version 2 has curation_vectors
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
}

IngestPipeline::IngestPipeline(const std::string& db_path) : db_path_(db_path) {
  WINNOW_THROW_IF_NOT(std::filesystem::exists(db_path),
                      "database '{}' does not exist (run `winnow init --db {}` first)", db_path,
                      db_path);
  store_ = std::make_unique<MetadataStore>(db_path);
  // A batch is one write transaction over several B-trees (samples and their
  // indexes, events, curation_vectors); with SQLite's default 2 MB page cache
  // it spills dirty pages to the WAL and reads them back mid-batch.
  store_->database().exec("PRAGMA cache_size = -65536");  // KiB: 64 MB at most
  // Each micro-batch's insert_samples is a savepoint inside the batch's
  // transaction, whose statement journal SQLite writes to a temporary file
  // past 64 KB; in memory it costs no system calls.
  store_->database().exec("PRAGMA temp_store = MEMORY");
  auto cfg = store_->get_meta(CurationConfig::kMetaKey);
  WINNOW_THROW_IF_NOT(cfg.has_value(), "database '{}' was never initialised (run `winnow init`)",
                      db_path);
  config_ = CurationConfig::from_json(*cfg);
  auto file = store_->get_meta(kIndexFileKey);
  std::string name = file ? *file : std::filesystem::path(db_path).filename().string() + ".index";
  index_path_ = (std::filesystem::path(db_path).parent_path() / name).string();
  embedder_ = make_embedder(config_.embedder);
  image_verifier_ = std::make_unique<ImageNearDuplicateVerifier>(
      ImageVerifierOptions{config_.image_max_shift, config_.image_threshold});
  text_verifier_ = std::make_unique<TextNearDuplicateVerifier>(
      TextVerifierOptions{config_.text_shingle, config_.text_threshold});
  if (auto names = store_->get_meta(kLabelNamesKey)) {
    json j = json::parse(*names, nullptr, false);
    WINNOW_THROW_IF_NOT(j.is_object(), "{}: meta {} is not a JSON object", db_path, kLabelNamesKey);
    for (auto& [k, v] : j.items()) label_names_[k] = v.get<std::int64_t>();
  }
  revision_ = stored_revision();
  open_index();
}

IngestPipeline::~IngestPipeline() = default;

index::IndexFingerprint IngestPipeline::fingerprint() {
  Statement& st = store_->database().cached(
      "SELECT count(*), coalesce(max(v.sample_id), -1) FROM curation_vectors v"
      " JOIN samples s ON s.id = v.sample_id WHERE s.status = 'accepted'");
  st.bind_all();
  WINNOW_THROW_IF_NOT(st.step(), "{}: counting accepted vectors returned no row", db_path_);
  index::IndexFingerprint fp{static_cast<std::uint64_t>(st.column_int64(0)), st.column_int64(1)};
  st.reset();
  return fp;
}

std::int64_t IngestPipeline::stored_revision() {
  auto text = store_->get_meta(kRevisionKey);
  if (!text) return 0;
  auto v = parse_int(*text);
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
  auto cfg = store_->get_meta(CurationConfig::kMetaKey);
  WINNOW_THROW_IF_NOT(cfg.has_value(), "database '{}' lost its curation config", db_path_);
  CurationConfig config = CurationConfig::from_json(*cfg);
  if (config.embedder != config_.embedder) embedder_ = make_embedder(config.embedder);
  config_ = config;
  open_index();
  revision_ = now;
}

void IngestPipeline::open_index() {
  const std::size_t dim = embedder_->dim();
  auto stmt = std::make_shared<RawStatement>(store_->database(), kAcceptedVectors);
  const std::string db = db_path_;
  auto done = std::make_shared<bool>(false);
  auto source = [stmt, done, dim, db](index::VectorBatch& batch) {
    // (SQLite restarts a finished statement on the next step: stop for good.)
    while (!*done && batch.ids.size() < 4096) {
      if (!stmt->step()) {
        *done = true;
        break;
      }
      const std::int64_t id = sqlite3_column_int64(stmt->get(), 0);
      const void* blob = sqlite3_column_blob(stmt->get(), 1);
      const int bytes = sqlite3_column_bytes(stmt->get(), 1);
      WINNOW_THROW_IF_NOT(static_cast<std::size_t>(bytes) == dim * sizeof(float),
                          "{}: stored embedding of sample {} has {} bytes, expected {}", db, id,
                          bytes, dim * sizeof(float));
      batch.ids.push_back(id);
      const float* f = static_cast<const float*>(blob);
      batch.vectors.insert(batch.vectors.end(), f, f + dim);
    }
    return !batch.ids.empty();
  };
  auto result = index::open_or_rebuild(index_path_, config_.index, dim, fingerprint(), source);
  stmt->reset();
  index_ = std::move(result.index);
  open_info_ = index_info();
  open_info_.rebuilt = result.rebuilt;
  open_info_.rebuild_reason = result.rebuilt ? std::string(index::to_string(result.reason)) +
                                                   (result.detail.empty() ? "" : ": " + result.detail)
                                             : "";
  load_accepted_labels();
}

void IngestPipeline::load_accepted_labels() {
  accepted_labels_.clear();
  label_counts_.clear();
  for (const AcceptedSample& s : store_->accepted_samples()) {
    if (s.label) {
      accepted_labels_.set(s.id, static_cast<int>(*s.label));
      ++label_counts_[*s.label];
    }
  }
}

void AcceptedLabels::set(std::int64_t id, int label) {
  WINNOW_THROW_IF_NOT(id >= 0, "sample id {} is negative", id);
  const auto i = static_cast<std::size_t>(id);
  if (i >= labels_.size()) labels_.resize(std::max(i + 1, labels_.size() * 3 / 2), kNone);
  labels_[i] = label;
}

std::optional<int> AcceptedLabels::find(std::int64_t id) const {
  const auto i = static_cast<std::size_t>(id);
  if (id < 0 || i >= labels_.size() || labels_[i] == kNone) return std::nullopt;
  return labels_[i];
}

void AcceptedLabels::erase(std::int64_t id) {
  const auto i = static_cast<std::size_t>(id);
  if (id >= 0 && i < labels_.size()) labels_[i] = kNone;
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

std::int64_t IngestPipeline::label_id(const std::string& name, bool& names_changed) {
  if (auto v = numeric_label(name)) return *v;
  auto it = label_names_.find(name);
  if (it != label_names_.end()) return it->second;
  const std::int64_t id = -static_cast<std::int64_t>(label_names_.size()) - 1;
  label_names_[name] = id;
  names_changed = true;
  return id;
}

std::string IngestPipeline::label_name(std::int64_t label) const {
  if (label < 0) {
    for (const auto& [name, id] : label_names_) {
      if (id == label) return name;
    }
  }
  return std::to_string(label);
}

std::unique_ptr<ManifestRecord> IngestPipeline::load_content(std::int64_t id) {
  RawStatement st(store_->database(),
                  "SELECT kind, width, height, content FROM curation_vectors WHERE sample_id = ?");
  sqlite3_bind_int64(st.get(), 1, id);
  if (!st.step()) return nullptr;
  std::string kind(reinterpret_cast<const char*>(sqlite3_column_text(st.get(), 0)));
  auto r = std::make_unique<ManifestRecord>();
  r->key = std::to_string(id);
  const auto* data = static_cast<const char*>(sqlite3_column_blob(st.get(), 3));
  const int bytes = sqlite3_column_bytes(st.get(), 3);
  if (kind == "pixels") {
    r->kind = ContentKind::pixels;
    r->width = static_cast<std::size_t>(sqlite3_column_int64(st.get(), 1));
    r->height = static_cast<std::size_t>(sqlite3_column_int64(st.get(), 2));
    r->pixels.assign(data, data + bytes);
  } else if (kind == "text") {
    r->kind = ContentKind::text;
    r->text.assign(data, data + bytes);
  } else {
    return nullptr;  // path records: content not kept
  }
  return r;
}

// --- ingest --------------------------------------------------------------------

// One entry of the batch, decided, waiting to be written (or written).
struct IngestPipeline::Pending {
  NewSample sample;
  // Accepted and label_issue samples keep their content and embedding in
  // curation_vectors (a later regain may re-judge them); only accepted ones
  // join the index.
  const ManifestRecord* record = nullptr;
  std::vector<float> embedding;
  bool accepted = false;
  std::int64_t id = -1;  // store id once flushed
};

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
  return ingest_batch(
      name, checksum, [&](ManifestEntry& entry) { return reader.next(entry); }, stop);
}

BatchReport IngestPipeline::ingest_batch(const std::string& name, const std::string& checksum,
                                         const EntrySource& next_entry,
                                         const std::atomic<bool>* stop) {
  const auto t0 = std::chrono::steady_clock::now();
  BatchReport report;
  report.name = name;
  BatchRecord batch = store_->register_batch(name, checksum);
  report.batch_id = batch.id;
  if (batch.state == BatchState::done) {
    report.skipped = true;
    report.counts = batch.counts;
    report.seconds = seconds_since(t0);
    return report;
  }
  batch = store_->start_batch(batch.id);

  index::IndexFingerprint fp;
  try {
    Transaction tx(store_->database());
    sync_with_store();
    const std::size_t dim = embedder_->dim();
    const int K = std::max({config_.candidates, config_.label_k, kGainNeighbours});
    NearDuplicateFinderOptions fopt;
    fopt.candidates = config_.candidates;
    fopt.min_candidate_similarity = config_.min_candidate_similarity;
    LabelQuality label_quality({config_.label_k, 1.0, config_.label_flag_below});
    NearDuplicateFinder image_finder(*index_, *image_verifier_, fopt);
    NearDuplicateFinder text_finder(*index_, *text_verifier_, fopt);
    RawStatement insert_vector(store_->database(),
                               "INSERT INTO curation_vectors(sample_id, embedding, kind, width,"
                               " height, content) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");

    // Only one chunk of micro_batch entries is held at a time, so memory does
    // not grow with the manifest: items, keys and hashes of earlier chunks are
    // asked of the store, which sees this transaction's own rows.
    std::vector<ManifestEntry> entries;
    std::vector<Pending> items;
    std::size_t flushed = 0;
    std::unordered_map<std::string, std::size_t> hash_to_item;  // this chunk's
    std::unordered_set<std::string> batch_keys;                  // this chunk's
    // 64-bit hashes of every key and content hash of the batch so far (two
    // numbers a record): the store is asked about a key or a content hash only
    // when an earlier batch or an earlier chunk may hold it, so a first import
    // saves two queries per sample.
    std::unordered_set<std::uint64_t> seen_keys, seen_hashes;
    auto remember_key = [&](const std::string& key) {
      batch_keys.insert(key);
      seen_keys.insert(hash64(key));
    };
    const bool earlier_samples = [&] {
      Statement& any = store_->database().cached("SELECT EXISTS (SELECT 1 FROM samples)");
      any.bind_all();
      WINNOW_THROW_IF_NOT(any.step(), "{}: checking for samples returned no row", db_path_);
      const bool found = any.column_int64(0) != 0;
      any.reset();
      return found;
    }();
    auto stored_key = [&](const std::string& key) {
      return (earlier_samples || seen_keys.count(hash64(key)) != 0) &&
             store_->find_by_external_key(key).has_value();
    };
    // Flushed items by store id. The store numbers a batch's samples with
    // increasing rowids, so a vector indexed by id - first_id does.
    constexpr std::size_t kNoItem = std::numeric_limits<std::size_t>::max();
    std::int64_t first_id = -1;
    std::vector<std::size_t> item_by_id;
    std::unordered_map<std::int64_t, std::unique_ptr<ManifestRecord>> content_cache;
    bool names_changed = false;

    auto flush = [&]() {
      if (flushed == items.size()) return;
      std::vector<NewSample> samples;
      samples.reserve(items.size() - flushed);
      for (std::size_t i = flushed; i < items.size(); ++i) samples.push_back(items[i].sample);
      std::vector<std::int64_t> ids = store_->insert_samples(samples);
      std::vector<std::int64_t> add_ids;
      std::vector<float> add_vectors;
      for (std::size_t i = flushed; i < items.size(); ++i) {
        Pending& p = items[i];
        p.id = ids[i - flushed];
        if (first_id < 0) first_id = p.id;
        WINNOW_THROW_IF_NOT(p.id >= first_id, "{}: the store gave sample id {} after {} in one batch",
                            db_path_, p.id, first_id);
        const auto offset = static_cast<std::size_t>(p.id - first_id);
        if (offset >= item_by_id.size()) item_by_id.resize(offset + 1, kNoItem);
        item_by_id[offset] = i;
        if (p.record == nullptr) continue;
        if (p.accepted) {
          add_ids.push_back(p.id);
          add_vectors.insert(add_vectors.end(), p.embedding.begin(), p.embedding.end());
          if (p.sample.label) {
            accepted_labels_.set(p.id, static_cast<int>(*p.sample.label));
            ++label_counts_[*p.sample.label];
          }
        }
        const ManifestRecord& r = *p.record;
        const char* kind = to_string(r.kind);
        const std::string* bytes = nullptr;
        std::string holder;
        if (r.kind == ContentKind::text) {
          bytes = &r.text;
        } else if (r.kind == ContentKind::pixels) {
          holder.assign(r.pixels.begin(), r.pixels.end());
          bytes = &holder;
        } else {
          bytes = &r.resolved_path;
        }
        std::size_t w = r.width, h = r.height;
        if (r.kind == ContentKind::pixels && (w == 0 || h == 0)) image_shape(r, w, h);
        insert_vector.reset();
        sqlite3_bind_int64(insert_vector.get(), 1, p.id);
        sqlite3_bind_blob(insert_vector.get(), 2, p.embedding.data(),
                          static_cast<int>(p.embedding.size() * sizeof(float)), SQLITE_STATIC);
        sqlite3_bind_text(insert_vector.get(), 3, kind, -1, SQLITE_STATIC);
        sqlite3_bind_int64(insert_vector.get(), 4, static_cast<std::int64_t>(w));
        sqlite3_bind_int64(insert_vector.get(), 5, static_cast<std::int64_t>(h));
        sqlite3_bind_blob(insert_vector.get(), 6, bytes->data(), static_cast<int>(bytes->size()),
                          SQLITE_TRANSIENT);
        insert_vector.step();
      }
      if (!add_ids.empty()) index_->add(add_ids, add_vectors);
      flushed = items.size();
    };
    // The store id of an item, flushing first when it is not written yet.
    auto item_id = [&](std::size_t i) {
      if (i >= flushed) flush();
      return items[i].id;
    };

    auto record_lookup = [&](std::int64_t id) -> const ManifestRecord* {
      if (id >= kPendingBase) return items[static_cast<std::size_t>(id - kPendingBase)].record;
      if (first_id >= 0 && id >= first_id &&
          static_cast<std::size_t>(id - first_id) < item_by_id.size() &&
          item_by_id[static_cast<std::size_t>(id - first_id)] != kNoItem) {
        return items[item_by_id[static_cast<std::size_t>(id - first_id)]].record;
      }
      auto c = content_cache.find(id);
      if (c == content_cache.end()) c = content_cache.emplace(id, load_content(id)).first;
      return c->second.get();
    };
    auto label_lookup = [&](std::int64_t id) -> std::optional<int> {
      if (id >= kPendingBase) {
        const auto& l = items[static_cast<std::size_t>(id - kPendingBase)].sample.label;
        return l ? std::optional<int>(static_cast<int>(*l)) : std::nullopt;
      }
      return accepted_labels_.find(id);
    };

    const std::size_t chunk = static_cast<std::size_t>(config_.micro_batch);
    std::vector<float> chunk_vectors;
    std::vector<std::string> embed_errors;
    std::vector<int> chunk_row;  // entry in chunk -> row of the chunk search, -1 if none
    std::vector<std::size_t> recent;  // accepted items since the chunk's index search
    std::vector<std::pair<float, std::int64_t>> merged;

    for (bool more = true; more;) {
      // The next chunk; the records of the last one are written and dropped.
      entries.clear();
      items.clear();
      flushed = 0;
      hash_to_item.clear();
      batch_keys.clear();
      first_id = -1;
      item_by_id.clear();
      content_cache.clear();
      while (entries.size() < chunk) {
        if (stop != nullptr && stop->load()) throw BatchInterrupted(name);
        if (!next_entry(entries.emplace_back())) {
          entries.pop_back();
          more = false;
          break;
        }
      }
      const std::size_t end = entries.size();
      // Embed the chunk's records and search the index once for all of them.
      chunk_vectors.clear();
      embed_errors.assign(end, std::string());
      chunk_row.assign(end, -1);
      int rows = 0;
      for (std::size_t e = 0; e < end; ++e) {
        if (!entries[e].ok()) continue;
        chunk_vectors.resize(static_cast<std::size_t>(rows + 1) * dim);
        try {
          embedder_->embed(*entries[e].record, chunk_vectors.data() + rows * dim);
          chunk_row[e] = rows++;
        } catch (const winnow::Error& err) {
          embed_errors[e] = err.what();
          chunk_vectors.resize(static_cast<std::size_t>(rows) * dim);
        }
      }
      index::SearchResults found;
      const bool searched = rows > 0 && index_->size() > 0;
      if (searched) found = index_->search(static_cast<std::size_t>(rows), chunk_vectors.data(), K);
      recent.clear();

      for (std::size_t e = 0; e < end; ++e) {
        const ManifestEntry& entry = entries[e];
        Pending p;
        NewSample& s = p.sample;
        s.batch_id = batch.id;
        JsonObjectText details;
        auto reject = [&](const std::string& key, std::size_t line, const std::string& reason,
                          const std::string& hash) {
          s.external_key = key;
          if (s.external_key.empty() || batch_keys.count(s.external_key) ||
              stored_key(s.external_key)) {
            s.external_key = fmt::format("{}#rejected-b{}-l{}", key, batch.id, line);
          }
          s.content_hash = hash.empty() ? fmt::format("rejected:b{}:l{}", batch.id, line) : hash;
          s.decision = {SampleStatus::rejected, std::nullopt, reason,
                        json{{"line", line}, {"key", key}}.dump()};
        };
        if (!entry.ok()) {
          const Rejection& r = *entry.rejection;
          reject(r.key, r.line, r.reason, "");
          remember_key(s.external_key);
          items.push_back(std::move(p));
          continue;
        }
        const ManifestRecord& rec = *entry.record;
        // Labels: the record's label, else the majority of its annotations.
        for (const Annotation& a : rec.annotations) {
          s.annotations.push_back({a.annotator, label_id(a.label, names_changed)});
        }
        if (rec.label) {
          s.label = label_id(*rec.label, names_changed);
        } else if (!s.annotations.empty()) {
          std::map<std::int64_t, int> votes;
          for (const NewAnnotation& a : s.annotations) ++votes[a.label];
          int best = -1;
          for (const auto& [l, v] : votes) {
            if (v > best) best = v, s.label = l;  // ties: the smallest label
          }
        }
        s.source = rec.source;
        std::string hash = rec.content_hash.empty() ? record_content_hash(rec) : rec.content_hash;

        if (batch_keys.count(rec.key) || stored_key(rec.key)) {
          reject(rec.key, rec.line, fmt::format("key '{}' is already in the dataset", rec.key),
                 hash);
          s.annotations.clear();
          remember_key(s.external_key);
          items.push_back(std::move(p));
          continue;
        }
        s.external_key = rec.key;
        s.content_hash = hash;
        remember_key(rec.key);

        // Exact duplicate: the stored original (earlier batches and chunks),
        // else the chunk's first copy.
        std::optional<std::int64_t> original;
        const bool maybe_stored = earlier_samples || seen_hashes.count(hash64(hash)) != 0;
        if (auto stored = maybe_stored ? store_->find_by_content_hash(hash) : std::nullopt) {
          original = stored->id;
        } else if (auto it = hash_to_item.find(hash); it != hash_to_item.end()) {
          original = item_id(it->second);
        }
        hash_to_item.emplace(hash, items.size());
        seen_hashes.insert(hash64(hash));
        if (original) {
          s.decision = {SampleStatus::duplicate_exact, original,
                        fmt::format("same content hash as sample {}", *original),
                        json{{"content_hash", hash}, {"line", rec.line}}.dump()};
          items.push_back(std::move(p));
          continue;
        }
        const int row = chunk_row[e];
        if (row < 0) {
          reject(rec.key, rec.line, "cannot embed: " + embed_errors[e], hash);
          s.external_key = rec.key;  // the key is free: it was checked above
          s.annotations.clear();
          items.push_back(std::move(p));
          continue;
        }
        const float* v = chunk_vectors.data() + static_cast<std::size_t>(row) * dim;

        // Neighbours: the chunk search merged with this batch's recent accepts.
        merged.clear();
        if (searched) {
          for (std::size_t r = 0; r < found.k; ++r) {
            if (found.id(row, r) < 0) break;
            merged.emplace_back(found.similarity(row, r), found.id(row, r));
          }
        }
        for (std::size_t i : recent) {
          merged.emplace_back(index::inner_product(v, items[i].embedding.data(), dim),
                              kPendingBase + static_cast<std::int64_t>(i));
        }
        const std::size_t keep = std::min<std::size_t>(merged.size(), static_cast<std::size_t>(K));
        std::partial_sort(merged.begin(), merged.begin() + keep, merged.end(),
                          [](const auto& a, const auto& b) { return a.first > b.first; });
        index::SearchResults nn;
        nn.num_queries = 1;
        nn.k = static_cast<std::size_t>(K);
        nn.ids.assign(nn.k, -1);
        nn.similarities.assign(nn.k, -std::numeric_limits<float>::infinity());
        for (std::size_t r = 0; r < keep; ++r) {
          nn.similarities[r] = merged[r].first;
          nn.ids[r] = merged[r].second;
        }
        const double gain = information_gain(nn, 0);
        s.gain = gain;
        details.number("gain", gain)
            .integer("gain_k", kGainNeighbours)
            .integer("neighbours", static_cast<std::int64_t>(keep));

        // Near duplicates (pixels and text records).
        const NearDuplicateFinder* finder = rec.kind == ContentKind::pixels ? &image_finder
                                            : rec.kind == ContentKind::text ? &text_finder
                                                                            : nullptr;
        if (finder != nullptr && keep > 0) {
          // Only candidates within candidate_margin of the best index cosine are
          // verified (a re-submitted copy is almost always the top candidate).
          index::SearchResults cand = nn;
          const float floor_sim = cand.similarity(0, 0) - static_cast<float>(config_.candidate_margin);
          for (std::size_t r = 1; r < cand.k; ++r) {
            if (cand.ids[r] >= 0 && cand.similarities[r] < floor_sim) {
              cand.ids[r] = -1;
              cand.similarities[r] = -std::numeric_limits<float>::infinity();
            }
          }
          NearDuplicateMatch m = finder->verify(cand, 0, rec, record_lookup);
          JsonObjectText near;
          near.number("threshold", m.threshold)
              .number("min_candidate_similarity", m.min_candidate_similarity)
              .number("candidate_margin", config_.candidate_margin)
              .integer("candidates", m.candidates)
              .integer("candidates_checked", m.candidates_checked)
              .number("best_similarity", m.similarity)
              .number("best_candidate_similarity", m.candidate_similarity);
          if (m.found) {
            const std::int64_t dup =
                m.id >= kPendingBase ? item_id(static_cast<std::size_t>(m.id - kPendingBase)) : m.id;
            near.integer("duplicate_of", dup);
            details.object("near_duplicate", near);
            s.decision = {SampleStatus::duplicate_near, dup,
                          fmt::format("similarity {:.4f} to sample {} >= threshold {}",
                                      m.similarity, dup, m.threshold),
                          details.str()};
            items.push_back(std::move(p));
            continue;
          }
          details.object("near_duplicate", near);
        }

        // Label quality from the labelled neighbours.
        if (s.label) {
          LabelQualityResult q =
              label_quality.score(nn, 0, static_cast<int>(*s.label), label_lookup);
          JsonObjectText quality;
          quality.number("quality", q.quality)
              .integer("neighbours", static_cast<std::int64_t>(q.neighbours))
              .integer("k", q.k)
              .number("flag_below", q.flag_below)
              .integer("min_neighbours", config_.min_label_neighbours);
          if (q.suggested_label) {
            quality.string("suggested_label", label_name(*q.suggested_label));
          }
          s.label_quality = q.quality;
          // A label with fewer than label_k accepted samples cannot be judged
          // yet (otherwise a class that arrives late could never get in).
          const std::int64_t support = label_counts_[*s.label];
          quality.integer("label_support", support);
          details.object("label_quality", quality);
          if (q.flagged && q.neighbours >= static_cast<std::size_t>(config_.min_label_neighbours) &&
              support >= config_.label_k) {
            s.decision = {SampleStatus::label_issue, std::nullopt,
                          fmt::format("label quality {:.3f} < {} over {} neighbours (suggested {})",
                                      q.quality, q.flag_below, q.neighbours,
                                      q.suggested_label ? label_name(*q.suggested_label) : "-"),
                          details.str()};
            p.record = &rec;
            p.embedding.assign(v, v + dim);
            items.push_back(std::move(p));
            continue;
          }
        }

        s.decision = {SampleStatus::accepted, std::nullopt,
                      fmt::format("accepted (gain {:.4f})", gain), details.str()};
        p.accepted = true;
        p.record = &rec;
        p.embedding.assign(v, v + dim);
        recent.push_back(items.size());
        items.push_back(std::move(p));
      }
      flush();  // the chunk's samples join the store and the index
    }
    flush();
    if (names_changed) {
      json names = json::object();
      for (const auto& [n, id] : label_names_) names[n] = id;
      store_->set_meta(kLabelNamesKey, names.dump());
    }
    batch = store_->finish_batch(batch.id);
    const std::int64_t revision = next_revision();
    // Taken inside the transaction: after the commit another writer may
    // already have added samples this index does not hold.
    fp = fingerprint();
    tx.commit();
    revision_ = revision;
  } catch (const std::exception& e) {
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
  // The index file is a cache of the committed store: a failed save is a
  // warning (it is rebuilt at the next open), never a failed batch.
  try {
    index::save_vector_index(*index_, index_path_, fp);
  } catch (const std::exception& e) {
    report.index_save_error = e.what();
  }
  report.counts = batch.counts;
  report.seconds = seconds_since(t0);
  return report;
}

}  // namespace winnow::curation
