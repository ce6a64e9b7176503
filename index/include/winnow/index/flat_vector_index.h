// Exact vector index: brute-force inner product over L2-normalised vectors.
//
// Backed by a FAISS IndexFlatIP with winnow's own id map. Searches of fewer
// than 20 queries scan the vectors with winnow's vectorised kernel on the
// calling thread; larger batches go through winnow's blocked batch search
// (a fused AVX-512 kernel where the CPU has it, else BLAS sgemm).
// remove() deletes rows for good (no tombstones), at O(size) per call.
// Factory string: "flat".
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

class FlatVectorIndex final : public VectorIndex {
 public:
  explicit FlatVectorIndex(std::size_t dim);
  ~FlatVectorIndex() override;

  std::string type() const override { return "flat"; }
  std::string config() const override { return "flat"; }
  std::size_t dim() const override;
  std::size_t size() const override;
  bool contains(std::int64_t id) const override;
  std::vector<std::int64_t> ids() const override;
  std::size_t tombstones() const override { return 0; }
  bool per_query_results() const override;
  std::size_t min_queries_per_call() const override;
  void compact() override {}

  // The live vectors as stored (L2-normalised), size() rows of dim() floats:
  // row i is the vector of ids()[i]. Valid until the next add or remove.
  const float* vectors() const;

 private:
  struct Impl;
  explicit FlatVectorIndex(std::unique_ptr<Impl> impl);

  void do_add(std::size_t n, const std::int64_t* ids, const float* normalized) override;
  SearchResults do_search(std::size_t num_queries, const float* normalized,
                          std::size_t k) const override;
  std::size_t do_remove(std::size_t n, const std::int64_t* ids) override;

  friend struct detail::PayloadCodec;
  std::unique_ptr<Impl> impl_;
};

}  // namespace winnow::index
