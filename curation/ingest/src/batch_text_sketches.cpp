#include "batch_text_sketches.h"

namespace winnow::curation::ingest {

BatchTextSketches::BatchTextSketches(StoredTextSketches* sketches,
                                     const dedup::TextNearDuplicateVerifier& verifier,
                                     store::Database& db)
    : sketches_(sketches), verifier_(verifier), table_(db) {}

std::optional<std::vector<std::uint64_t>> BatchTextSketches::shingles(
    const ManifestRecord& record) const {
  if (sketches_ == nullptr || record.kind != ContentKind::text ||
      sketches_->shingle() != verifier_.options().shingle) {
    return std::nullopt;
  }
  return dedup::TextNearDuplicateVerifier::shingles(record.text, sketches_->shingle());
}

bool BatchTextSketches::rules_out(const std::vector<std::uint64_t>& shingles,
                                  std::int64_t id) const {
  const std::optional<dedup::TextSketch> sketch = sketches_->find(id);
  return sketch && verifier_.similarity_at_most(shingles, *sketch) < verifier_.threshold();
}

bool BatchTextSketches::wants(std::int64_t id) const {
  return sketches_ != nullptr && !sketches_->find(id);
}

void BatchTextSketches::keep(std::int64_t id, const ManifestRecord& record) {
  if (sketches_ == nullptr) return;
  if (record.kind != ContentKind::text) {
    sketches_->forget(id);
    return;
  }
  const dedup::TextSketch sketch = dedup::TextSketch::of(
      dedup::TextNearDuplicateVerifier::shingles(record.text, sketches_->shingle()));
  if (!sketches_->put(id, sketch)) return;
  unstored_.push_back({id, static_cast<std::int64_t>(sketch.size()), sketch.bits()});
}

void BatchTextSketches::store() {
  if (sketches_ == nullptr) return;
  table_.add(sketches_->shingle(), unstored_);
  unstored_.clear();
}

}  // namespace winnow::curation::ingest
