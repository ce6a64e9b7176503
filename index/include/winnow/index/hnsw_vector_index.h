// Approximate vector index: FAISS HNSW graph (inner product) over L2-normalised
// vectors, with winnow's vectorised distance kernel and its own id map.
// remove() only tombstones rows (FAISS 1.7.3's HNSW cannot remove); tombstones
// still route searches, so call compact() (a full rebuild) as they pile up.
// Factory string: "hnsw" or "hnsw(M=24,efConstruction=80,efSearch=128)".
// Details: docs/index.md#deletion-real-removal-vs-tombstones
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "winnow/index/vector_index.h"

namespace winnow::index {

namespace detail {
struct PayloadCodec;
}

// Defaults, chosen by measurement (docs/benchmarks.md, "HNSW"):
// efConstruction 80 builds a graph that keeps near copies findable on
// embeddings of high intrinsic dimension, where 40 lost many of them and no
// efSearch brought them back; M=24 (not FAISS's usual 32) keeps each
// insert's re-pruning of neighbour lists, O(M^2) distances per list, below
// M=32's for the same recall; efSearch 128 gives the label vote's 15
// neighbours near-exact recall. A dataset keeps the
// parameters it was created with (index.type), so changing these never
// changes an existing dataset's index.
struct HnswParams {
  int M = 24;                // graph degree (2*M links on the base layer)
  int ef_construction = 80;  // candidate list size while building
  int ef_search = 128;       // candidate list size while searching (raised to k if smaller)
};

class HnswVectorIndex final : public VectorIndex {
 public:
  explicit HnswVectorIndex(std::size_t dim, HnswParams params = {});
  ~HnswVectorIndex() override;

  std::string type() const override { return "hnsw"; }
  std::string config() const override;
  std::size_t dim() const override;
  std::size_t size() const override;
  bool contains(std::int64_t id) const override;
  std::vector<std::int64_t> ids() const override;
  std::size_t tombstones() const override;
  bool per_query_results() const override { return true; }
  void compact() override;

  const HnswParams& params() const;
  // Changes efSearch for later searches (part of config()).
  void set_ef_search(int ef_search);

 private:
  struct Impl;
  explicit HnswVectorIndex(std::unique_ptr<Impl> impl);

  void do_add(std::size_t n, const std::int64_t* ids, const float* normalized) override;
  SearchResults do_search(std::size_t num_queries, const float* normalized,
                          std::size_t k) const override;
  std::size_t do_remove(std::size_t n, const std::int64_t* ids) override;

  friend struct detail::PayloadCodec;
  std::unique_ptr<Impl> impl_;
};

// Throws winnow::Error naming the bad field unless M >= 2, ef_construction >= 1
// and ef_search >= 1 (and none is absurdly large).
void validate_hnsw_params(const HnswParams& params);

// "hnsw(M=24,efConstruction=80,efSearch=128)".
std::string hnsw_config_string(const HnswParams& params);

}  // namespace winnow::index
