#include "winnow/curation/review/consensus_estimates.h"

#include <nlohmann/json.hpp>

#include "winnow/error.h"

namespace winnow::curation::review {

namespace {

constexpr std::uint64_t kFnvPrime = 1099511628211ull;

void mix(std::uint64_t& hash, std::int64_t value) {
  auto bits = static_cast<std::uint64_t>(value);
  for (int byte = 0; byte < 8; ++byte) {
    hash ^= bits & 0xffu;
    hash *= kFnvPrime;
    bits >>= 8;
  }
}

}  // namespace

std::string ConsensusEstimates::to_json() const {
  nlohmann::json annotators = nlohmann::json::object();
  for (const auto& [id, value] : accuracy) annotators[std::to_string(id)] = value;
  return nlohmann::json{{"revision", revision},
                        {"annotations", read.annotations},
                        {"fingerprint", std::to_string(read.fingerprint)},
                        {"accuracy", annotators}}
      .dump();
}

ConsensusEstimates ConsensusEstimates::from_json(const std::string& text) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    ConsensusEstimates out;
    out.revision = j.at("revision").get<std::int64_t>();
    out.read.annotations = j.at("annotations").get<std::int64_t>();
    out.read.fingerprint = std::stoull(j.at("fingerprint").get<std::string>());
    for (const auto& [id, value] : j.at("accuracy").items()) {
      const double a = value.get<double>();
      WINNOW_THROW_IF_NOT(a >= 0.0 && a <= 1.0, "accuracy {} of annotator {} is not in [0, 1]", a,
                          id);
      out.accuracy[std::stoll(id)] = a;
    }
    return out;
  } catch (const std::exception& e) {
    WINNOW_THROW_KIND(corrupt, "meta '{}' is not what rejudge --consensus writes: {}", kMetaKey,
                      e.what());
  }
}

void AnnotationsFingerprint::add(const store::MetadataStore::AnnotationRow& row) {
  ++annotations;
  mix(fingerprint, row.id);
  mix(fingerprint, row.annotator_id.value_or(-1));
  mix(fingerprint, row.label);
}

void store_consensus_estimates(store::MetadataStore& store, const ConsensusEstimates& estimates) {
  store.set_meta(ConsensusEstimates::kMetaKey, estimates.to_json());
}

std::optional<ConsensusEstimates> stored_consensus_estimates(store::MetadataStore& store) {
  const std::optional<std::string> text = store.get_meta(ConsensusEstimates::kMetaKey);
  if (!text) return std::nullopt;
  return ConsensusEstimates::from_json(*text);
}

}  // namespace winnow::curation::review
