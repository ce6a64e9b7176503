#include "winnow/index/vector_index_factory.h"

#include <limits>

#include "winnow/error.h"
#include "winnow/index/flat_vector_index.h"
#include "winnow/spec_reader.h"

namespace winnow::index {

std::string VectorIndexConfig::to_string() const {
  switch (type) {
    case Type::flat:
      return "flat";
    case Type::hnsw:
      return hnsw_config_string(hnsw);
    case Type::ivf:
      return ivf_config_string(ivf);
    case Type::automatic:
      return auto_config_string(automatic);
  }
  WINNOW_THROW("unknown vector index type {}", static_cast<int>(type));
}

namespace {

// IVF's keys, for "ivf" and "auto" alike; cellCap falls back to
// `cell_cap_fallback` when not named.
void read_ivf_keys(SpecReader& reader, IvfParams& p, std::uint64_t cell_cap_fallback) {
  p.nprobe = reader.positive_int("nprobe", p.nprobe);
  p.cell_scale = reader.positive_int("cellScale", p.cell_scale);
  p.cell_cap = static_cast<int>(
      reader.integer("cellCap", cell_cap_fallback, std::numeric_limits<int>::max()));
  p.shared_scan_from = reader.positive_int("sharedScanFrom", p.shared_scan_from);
}

}  // namespace

VectorIndexConfig parse_vector_index_config(const std::string& config) {
  constexpr const char* kWhat = "index config";
  SpecReader reader(Spec::parse(config, kWhat), kWhat, config);
  const std::string& name = reader.spec().name;
  VectorIndexConfig out;
  if (name == "flat") {
    out.type = VectorIndexConfig::Type::flat;
  } else if (name == "hnsw") {
    out.type = VectorIndexConfig::Type::hnsw;
    out.hnsw.M = reader.positive_int("M", out.hnsw.M);
    out.hnsw.ef_construction = reader.positive_int("efConstruction", out.hnsw.ef_construction);
    out.hnsw.ef_search = reader.positive_int("efSearch", out.hnsw.ef_search);
  } else if (name == "ivf") {
    out.type = VectorIndexConfig::Type::ivf;
    // Every canonical string names cellCap since it exists; one naming
    // cellScale alone was stored by an older winnow, whose cells had no cap.
    const bool before_cap =
        reader.spec().params.count("cellScale") != 0 && reader.spec().params.count("cellCap") == 0;
    read_ivf_keys(reader, out.ivf, before_cap ? 0 : static_cast<std::uint64_t>(out.ivf.cell_cap));
  } else if (name == "auto") {  // newer than the cap: every auto config has it
    out.type = VectorIndexConfig::Type::automatic;
    out.automatic.switch_at = reader.positive_int("switchAt", out.automatic.switch_at);
    read_ivf_keys(reader, out.automatic.ivf,
                  static_cast<std::uint64_t>(out.automatic.ivf.cell_cap));
  } else {
    WINNOW_THROW(
        "index config '{}': unknown index type '{}' (expected 'flat', 'hnsw', 'ivf' or 'auto')",
        config, name);
  }
  reader.finish();
  if (out.type == VectorIndexConfig::Type::hnsw) validate_hnsw_params(out.hnsw);
  if (out.type == VectorIndexConfig::Type::ivf) validate_ivf_params(out.ivf);
  if (out.type == VectorIndexConfig::Type::automatic) validate_auto_params(out.automatic);
  return out;
}

std::string canonical_vector_index_config(const std::string& config) {
  return parse_vector_index_config(config).to_string();
}

std::unique_ptr<VectorIndex> make_vector_index(const VectorIndexConfig& config, std::size_t dim) {
  switch (config.type) {
    case VectorIndexConfig::Type::flat:
      return std::make_unique<FlatVectorIndex>(dim);
    case VectorIndexConfig::Type::hnsw:
      return std::make_unique<HnswVectorIndex>(dim, config.hnsw);
    case VectorIndexConfig::Type::ivf:
      return std::make_unique<IvfVectorIndex>(dim, config.ivf);
    case VectorIndexConfig::Type::automatic:
      return std::make_unique<AutoVectorIndex>(dim, config.automatic);
  }
  WINNOW_THROW("unknown vector index type {}", static_cast<int>(config.type));
}

std::unique_ptr<VectorIndex> make_vector_index(const std::string& config, std::size_t dim) {
  return make_vector_index(parse_vector_index_config(config), dim);
}

}  // namespace winnow::index
