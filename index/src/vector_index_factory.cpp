#include "winnow/index/vector_index_factory.h"

#include <cctype>
#include <limits>

#include "winnow/error.h"
#include "winnow/index/flat_vector_index.h"

namespace winnow::index {
namespace {

std::string strip_spaces(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (const char c : s) {
    if (!std::isspace(static_cast<unsigned char>(c))) {
      out.push_back(c);
    }
  }
  return out;
}

int parse_positive(const std::string& config, const std::string& key, const std::string& value) {
  WINNOW_THROW_IF_NOT(!value.empty(), "index config '{}': key '{}' has no value", config, key);
  long long v = 0;
  for (const char c : value) {
    WINNOW_THROW_IF_NOT(std::isdigit(static_cast<unsigned char>(c)),
                        "index config '{}': value '{}' of '{}' is not a positive integer", config,
                        value, key);
    v = v * 10 + (c - '0');
    WINNOW_THROW_IF_NOT(v <= std::numeric_limits<int>::max(),
                        "index config '{}': value '{}' of '{}' is too large", config, value, key);
  }
  return static_cast<int>(v);
}

// Parses "key=value,key=value" into the HNSW parameters.
void parse_hnsw_arguments(const std::string& config, const std::string& args, HnswParams& params) {
  if (args.empty()) {
    return;
  }
  bool seen_m = false;
  bool seen_efc = false;
  bool seen_efs = false;
  std::size_t start = 0;
  while (start <= args.size()) {
    std::size_t end = args.find(',', start);
    if (end == std::string::npos) {
      end = args.size();
    }
    const std::string item = args.substr(start, end - start);
    const std::size_t eq = item.find('=');
    WINNOW_THROW_IF_NOT(eq != std::string::npos, "index config '{}': expected key=value, got '{}'",
                        config, item);
    const std::string key = item.substr(0, eq);
    const int value = parse_positive(config, key, item.substr(eq + 1));
    bool* seen = nullptr;
    if (key == "M") {
      params.M = value;
      seen = &seen_m;
    } else if (key == "efConstruction") {
      params.ef_construction = value;
      seen = &seen_efc;
    } else if (key == "efSearch") {
      params.ef_search = value;
      seen = &seen_efs;
    } else {
      WINNOW_THROW("index config '{}': unknown HNSW key '{}' (expected M, efConstruction, efSearch)",
                   config, key);
    }
    WINNOW_THROW_IF_NOT(!*seen, "index config '{}': key '{}' given twice", config, key);
    *seen = true;
    start = end + 1;
  }
}

}  // namespace

std::string VectorIndexConfig::to_string() const {
  return type == Type::flat ? std::string("flat") : hnsw_config_string(hnsw);
}

VectorIndexConfig parse_vector_index_config(const std::string& config) {
  const std::string s = strip_spaces(config);
  VectorIndexConfig out;
  std::string name = s;
  std::string args;
  const std::size_t open = s.find('(');
  if (open != std::string::npos) {
    WINNOW_THROW_IF_NOT(s.back() == ')' && s.find('(', open + 1) == std::string::npos &&
                            s.find(')') == s.size() - 1,
                        "index config '{}': unbalanced or misplaced parentheses", config);
    name = s.substr(0, open);
    args = s.substr(open + 1, s.size() - open - 2);
  }
  if (name == "flat") {
    WINNOW_THROW_IF_NOT(args.empty(), "index config '{}': 'flat' takes no parameters", config);
    out.type = VectorIndexConfig::Type::flat;
  } else if (name == "hnsw") {
    out.type = VectorIndexConfig::Type::hnsw;
    parse_hnsw_arguments(config, args, out.hnsw);
    validate_hnsw_params(out.hnsw);
  } else {
    WINNOW_THROW("index config '{}': unknown index type '{}' (expected 'flat' or 'hnsw')", config,
                 name);
  }
  return out;
}

std::string canonical_vector_index_config(const std::string& config) {
  return parse_vector_index_config(config).to_string();
}

std::unique_ptr<VectorIndex> make_vector_index(const VectorIndexConfig& config, std::size_t dim) {
  if (config.type == VectorIndexConfig::Type::flat) {
    return std::make_unique<FlatVectorIndex>(dim);
  }
  return std::make_unique<HnswVectorIndex>(dim, config.hnsw);
}

std::unique_ptr<VectorIndex> make_vector_index(const std::string& config, std::size_t dim) {
  return make_vector_index(parse_vector_index_config(config), dim);
}

}  // namespace winnow::index
