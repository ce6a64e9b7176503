// Making vector indexes from config strings.
//
//   "flat"                                        exact search (FlatVectorIndex)
//   "hnsw"                                        HNSW with the default parameters
//   "hnsw(M=24,efConstruction=80,efSearch=128)"   any subset of the keys, any order
//   "ivf"                                         IVF with the default parameters
//   "ivf(nprobe=16,cellScale=100)"                any subset of the keys, any order
//   "auto"                                        flat until 65,536 vectors, then IVF
//   "auto(switchAt=100000,nprobe=32)"             switchAt and any of IVF's keys
//
// The grammar is winnow's one spec grammar (winnow/spec.h, docs/specs.md):
// whitespace around tokens is ignored; keys are case-sensitive; values are
// positive integers.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "winnow/index/auto_vector_index.h"
#include "winnow/index/hnsw_vector_index.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index.h"

namespace winnow::index {

struct VectorIndexConfig {
  enum class Type { flat, hnsw, ivf, automatic };
  Type type = Type::flat;
  HnswParams hnsw;       // meaningful when type == hnsw
  IvfParams ivf;         // meaningful when type == ivf
  AutoParams automatic;  // meaningful when type == automatic ("auto")

  // Canonical config string: "flat", "hnsw(M=..,efConstruction=..,efSearch=..)",
  // "ivf(nprobe=..,cellScale=..,cellCap=..)" or "auto(switchAt=..,nprobe=..,...)".
  std::string to_string() const;
};

// Parses and validates a config string; throws winnow::Error naming the
// offending part.
VectorIndexConfig parse_vector_index_config(const std::string& config);

// parse_vector_index_config(config).to_string().
std::string canonical_vector_index_config(const std::string& config);

// An empty index of the given kind and dimension.
std::unique_ptr<VectorIndex> make_vector_index(const VectorIndexConfig& config, std::size_t dim);
std::unique_ptr<VectorIndex> make_vector_index(const std::string& config, std::size_t dim);

}  // namespace winnow::index
