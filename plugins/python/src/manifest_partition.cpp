#include "manifest_partition.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <sstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/judge/near_duplicate_check.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/error.h"

namespace winnow::python {

namespace {

using curation::ManifestRecord;
using curation::readers::ManifestEntry;
using curation::readers::Rejection;
using nlohmann::json;

// Bytes and floats travel as CBOR byte strings (floats in this machine's
// byte order: workers and writer of one job run the same build).
json bytes_of(const std::vector<std::uint8_t>& v) {
  return json::binary(v);
}

json bytes_of(const std::vector<float>& v) {
  std::vector<std::uint8_t> raw(v.size() * sizeof(float));
  if (!raw.empty()) std::memcpy(raw.data(), v.data(), raw.size());
  return json::binary(std::move(raw));
}

std::vector<std::uint8_t> bytes_in(const json& j) {
  return j.get_binary();
}

std::vector<float> floats_in(const json& j) {
  const auto& raw = j.get_binary();
  WINNOW_THROW_IF_NOT_KIND(raw.size() % sizeof(float) == 0, corrupt,
                           "manifest partition: a float array of {} bytes", raw.size());
  std::vector<float> v(raw.size() / sizeof(float));
  if (!v.empty()) std::memcpy(v.data(), raw.data(), raw.size());
  return v;
}

json record_json(const ManifestRecord& r) {
  json annotations = json::array();
  for (const curation::Annotation& a : r.annotations) annotations.push_back({a.annotator, a.label});
  json quality = nullptr;
  if (r.image_quality) {
    const curation::ImageMeasurement& m = *r.image_quality;
    quality = {m.width,           m.height,        m.scores.blurry,
               m.scores.dark,     m.scores.bright, m.scores.low_information,
               m.scores.grayscale};
  }
  return {{"line", r.line},
          {"key", r.key},
          {"kind", static_cast<int>(r.kind)},
          {"path", r.path},
          {"resolved_path", r.resolved_path},
          {"text", r.text},
          {"pixels", bytes_of(r.pixels)},
          {"width", r.width},
          {"height", r.height},
          {"colour", bytes_of(r.colour)},
          {"label", r.label ? json(*r.label) : json(nullptr)},
          {"source", r.source},
          {"annotations", std::move(annotations)},
          {"embedding", bytes_of(r.embedding)},
          {"image_quality", std::move(quality)},
          {"content_hash", r.content_hash}};
}

ManifestRecord record_in(const json& j) {
  ManifestRecord r;
  r.line = j.at("line").get<std::size_t>();
  r.key = j.at("key").get<std::string>();
  const int kind = j.at("kind").get<int>();
  WINNOW_THROW_IF_NOT_KIND(kind >= 0 && kind <= static_cast<int>(curation::ContentKind::none),
                           corrupt, "manifest partition: record '{}' has content kind {}", r.key,
                           kind);
  r.kind = static_cast<curation::ContentKind>(kind);
  r.path = j.at("path").get<std::string>();
  r.resolved_path = j.at("resolved_path").get<std::string>();
  r.text = j.at("text").get<std::string>();
  r.pixels = bytes_in(j.at("pixels"));
  r.width = j.at("width").get<std::size_t>();
  r.height = j.at("height").get<std::size_t>();
  r.colour = bytes_in(j.at("colour"));
  if (!j.at("label").is_null()) r.label = j.at("label").get<std::string>();
  r.source = j.at("source").get<std::string>();
  for (const json& a : j.at("annotations")) {
    r.annotations.push_back({a.at(0).get<std::string>(), a.at(1).get<std::string>()});
  }
  r.embedding = floats_in(j.at("embedding"));
  if (const json& q = j.at("image_quality"); !q.is_null()) {
    curation::ImageMeasurement m;
    m.width = q.at(0).get<std::size_t>();
    m.height = q.at(1).get<std::size_t>();
    m.scores = {q.at(2).get<double>(), q.at(3).get<double>(), q.at(4).get<double>(),
                q.at(5).get<double>(), q.at(6).get<double>()};
    r.image_quality = m;
  }
  r.content_hash = j.at("content_hash").get<std::string>();
  return r;
}

json rejection_json(const Rejection& r) {
  return {{"line", r.line}, {"key", r.key}, {"reason", r.reason}, {"source", r.source}};
}

Rejection rejection_in(const json& j) {
  return {j.at("line").get<std::size_t>(), j.at("key").get<std::string>(),
          j.at("reason").get<std::string>(), j.at("source").get<std::string>()};
}

}  // namespace

std::string verification_content(const ManifestRecord& record) {
  if (curation::judge::near_duplicate_check(record) == curation::judge::NearDuplicateCheck::none)
    return {};
  const json j = {{"kind", static_cast<int>(record.kind)},
                  {"text", record.text},
                  {"pixels", bytes_of(record.pixels)},
                  {"width", record.width},
                  {"height", record.height},
                  {"colour", bytes_of(record.colour)}};
  const std::vector<std::uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

ManifestRecord verification_record(std::string_view bytes) {
  try {
    const json j = json::from_cbor(bytes.begin(), bytes.end(), true, false);
    ManifestRecord r;
    const int kind = j.at("kind").get<int>();
    WINNOW_THROW_IF_NOT_KIND(kind >= 0 && kind <= static_cast<int>(curation::ContentKind::none),
                             corrupt, "verification content: content kind {}", kind);
    r.kind = static_cast<curation::ContentKind>(kind);
    r.text = j.at("text").get<std::string>();
    r.pixels = bytes_in(j.at("pixels"));
    r.width = j.at("width").get<std::size_t>();
    r.height = j.at("height").get<std::size_t>();
    r.colour = bytes_in(j.at("colour"));
    return r;
  } catch (const json::exception& e) {
    WINNOW_THROW_KIND(corrupt, "verification content: {} bytes are no record content ({})",
                      bytes.size(), e.what());
  }
}

std::string to_bytes(const ManifestPartition& partition) {
  json entries = json::array();
  for (std::size_t i = 0; i < partition.entries.size(); ++i) {
    const ManifestEntry& e = partition.entries[i];
    WINNOW_THROW_IF_NOT(!e.deferred, "manifest partition: an entry was not read to its end");
    entries.push_back(e.ok() ? json{{"record", record_json(*e.record)},
                                    {"embedding", bytes_of(partition.jobs.at(i).embedding)}}
                             : json{{"rejection", rejection_json(*e.rejection)}});
  }
  const json j = {{"lines", partition.lines},
                  {"embedder", partition.embedder},
                  {"entries", std::move(entries)}};
  const std::vector<std::uint8_t> cbor = json::to_cbor(j);
  return std::string(cbor.begin(), cbor.end());
}

ManifestPartition partition_from_bytes(std::string_view bytes) {
  ManifestPartition partition;
  try {
    const json j = json::from_cbor(bytes.begin(), bytes.end(), true, false);
    WINNOW_THROW_IF_NOT_KIND(j.is_object() && j.contains("entries"), corrupt,
                             "manifest partition: {} bytes that are not a partition", bytes.size());
    partition.lines = j.at("lines").get<std::size_t>();
    partition.embedder = j.at("embedder").get<std::string>();
    for (const json& e : j.at("entries")) {
      ManifestEntry& entry = partition.entries.emplace_back();
      curation::bulk::JobRecord& job = partition.jobs.emplace_back();
      if (e.contains("record")) {
        entry.record = record_in(e.at("record"));
        job.embedding = floats_in(e.at("embedding"));
      } else {
        entry.rejection = rejection_in(e.at("rejection"));
      }
    }
  } catch (const json::exception& e) {
    WINNOW_THROW_KIND(corrupt, "manifest partition: {} bytes that are not a partition: {}",
                      bytes.size(), e.what());
  }
  return partition;
}

const ManifestRecord& record_of_entry(const ManifestPartition& partition, std::int64_t entry,
                                      std::string_view what) {
  WINNOW_THROW_IF_NOT(entry >= 0 && static_cast<std::size_t>(entry) < partition.entries.size() &&
                          partition.entries[static_cast<std::size_t>(entry)].ok(),
                      "{}: entry {} is no record of the partition", what, entry);
  return *partition.entries[static_cast<std::size_t>(entry)].record;
}

namespace {

// Row r of the lists: only the leading ranks with a verdict (the rest are NaN padding).
std::shared_ptr<curation::bulk::PriorNeighbours> prior_neighbours_of_row(
    const PriorNeighbourRows& rows, std::size_t r) {
  const std::size_t k = rows.k;
  auto prior = std::make_shared<curation::bulk::PriorNeighbours>();
  prior->positions.assign(rows.positions + r * k, rows.positions + (r + 1) * k);
  prior->similarities.assign(rows.similarities + r * k, rows.similarities + (r + 1) * k);
  prior->complete = rows.complete[r];
  const std::size_t verdicts = rows.verdicts;
  if (verdicts > 0) {
    const double* verified = rows.verified_similarities + r * verdicts;
    const double* thresholds = rows.verified_thresholds + r * verdicts;
    std::size_t v = verdicts;
    while (v > 0 && std::isnan(verified[v - 1])) --v;
    prior->verified_similarities.assign(verified, verified + v);
    prior->verified_thresholds.assign(thresholds, thresholds + v);
  }
  return prior;
}

}  // namespace

void set_prior_neighbours(ManifestPartition& partition, std::int64_t first_position,
                          const PriorNeighbourRows& rows) {
  for (std::size_t e = 0; e < partition.entries.size(); ++e) {
    if (partition.entries[e].ok())
      partition.jobs.at(e).position = first_position + static_cast<std::int64_t>(e);
  }
  for (std::size_t r = 0; r < rows.rows; ++r) {
    const std::int64_t e = rows.entries[r];
    record_of_entry(partition, e, "set_prior_neighbours");
    partition.jobs.at(static_cast<std::size_t>(e)).prior_neighbours =
        prior_neighbours_of_row(rows, r);
  }
}

Curator::Curator(const std::string& config_json)
    : config_json_(config_json),
      config_(curation::CurationConfig::from_json(config_json)),
      embedder_(curation::embed::make_embedder(config_.embedder)),
      image_verifier_(curation::make_image_verifier(config_)),
      text_verifier_(curation::make_text_verifier(config_)) {}

ManifestPartition Curator::read(std::string text, const std::string& name,
                                const std::string& base_dir, bool starts_manifest,
                                int threads) const {
  curation::readers::ManifestReaderOptions options;
  options.image = curation::image_reading(config_, *embedder_);
  options.base_dir = base_dir;
  options.check_binary = starts_manifest;
  options.content.follow_links = true;  // a user's job: links followed, as `winnow ingest` does
  std::istringstream in(std::move(text));
  curation::readers::ManifestReader reader(in, name, options);
  ManifestPartition partition;
  partition.embedder = embedder_->spec();
  for (ManifestEntry entry; reader.next_deferred(entry);) {
    partition.entries.push_back(std::move(entry));
  }
  partition.lines = reader.lines_read();
  partition.jobs.resize(partition.entries.size());
  const curation::ThreadPool pool(threads);
  const auto complete = [&](std::size_t i) {
    ManifestEntry& entry = partition.entries[i];
    entry.complete();
    if (!entry.ok() || entry.record->kind == curation::ContentKind::none) return;
    ManifestRecord& record = *entry.record;
    // As IngestBatch::decide_entry takes it when the reader left it empty.
    if (record.content_hash.empty())
      record.content_hash = curation::dedup::record_content_hash(record);
    try {
      partition.jobs[i].embedding = embedder_->embed(record);
    } catch (const Error&) {
      // Left empty: the writer's embedder rejects it with the same reason.
    }
  };
  if (embedder_->thread_safe()) {
    pool.for_each(partition.entries.size(), complete);
  } else {
    for (std::size_t i = 0; i < partition.entries.size(); ++i) complete(i);
  }
  return partition;
}

}  // namespace winnow::python
