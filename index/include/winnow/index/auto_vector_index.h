// Exact search while the index is small, IVF once it is not.
//
// A FlatVectorIndex until it holds `switchAt` vectors; then an IvfVectorIndex
// made from the flat index's vectors (one add, in insertion order) takes
// every later call, and the index never goes back (removals do not undo the
// switch). Small datasets keep exact neighbours; a growing one stops paying
// a flat scan of the whole store for every query (about n·dim a query, far
// more per record than IVF's once the store is large; docs/benchmarks.md, "IVF").
// Results are those of the part in charge: below switchAt, bit for bit a
// flat index's; above, an IVF index's given the same adds.
// Factory string: "auto" = "auto(switchAt=65536,nprobe=16,cellScale=100,cellCap=256)".
// Details: docs/index.md, "auto: flat, then IVF".
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "winnow/index/flat_vector_index.h"
#include "winnow/index/ivf_vector_index.h"
#include "winnow/index/vector_index.h"

namespace winnow::index {

namespace detail {
struct PayloadCodec;
}

struct AutoParams {
  // Vectors from which the index is an IVF. 65,536 keeps 60,000-image
  // datasets exact and the flat part's cost per record close to a late IVF
  // batch's (docs/index.md, "auto: flat, then IVF").
  int switch_at = 1 << 16;
  IvfParams ivf;  // the IVF's parameters once switched
};

void validate_auto_params(const AutoParams& params);
// "auto(switchAt=..,nprobe=..,cellScale=..,cellCap=..)", sharedScanFrom only when set.
std::string auto_config_string(const AutoParams& params);

class AutoVectorIndex final : public VectorIndex {
 public:
  explicit AutoVectorIndex(std::size_t dim, AutoParams params = {});
  ~AutoVectorIndex() override;

  // The part in charge: "flat", then "ivf".
  std::string type() const override { return part().type(); }
  std::string config() const override { return auto_config_string(params_); }
  std::size_t dim() const override { return part().dim(); }
  std::size_t size() const override { return part().size(); }
  bool contains(std::int64_t id) const override { return part().contains(id); }
  std::vector<std::int64_t> ids() const override { return part().ids(); }
  std::size_t tombstones() const override { return part().tombstones(); }
  bool per_query_results() const override { return part().per_query_results(); }
  std::size_t min_queries_per_call() const override { return part().min_queries_per_call(); }
  std::size_t queries_per_search() const override { return part().queries_per_search(); }
  std::vector<std::uint32_t> locality_keys(std::size_t num_queries,
                                           const float* queries) const override {
    return part().locality_keys(num_queries, queries);
  }
  void compact() override { part().compact(); }

  const AutoParams& params() const { return params_; }
  // Whether the IVF is in charge.
  bool switched() const { return ivf_ != nullptr; }
  // Takes the search-time knobs of `wanted.ivf` (nprobe, sharedScanFrom);
  // switchAt and the cells' shape stay.
  void set_search_params(const AutoParams& wanted);

 private:
  AutoVectorIndex(AutoParams params, std::unique_ptr<FlatVectorIndex> flat,
                  std::unique_ptr<IvfVectorIndex> ivf);

  const VectorIndex& part() const;
  VectorIndex& part();
  void switch_to_ivf();

  void do_add(std::size_t n, const std::int64_t* ids, const float* normalized) override;
  SearchResults do_search(std::size_t num_queries, const float* normalized,
                          std::size_t k) const override;
  std::size_t do_remove(std::size_t n, const std::int64_t* ids) override;

  friend struct detail::PayloadCodec;
  AutoParams params_;
  std::unique_ptr<FlatVectorIndex> flat_;  // in charge until the switch
  std::unique_ptr<IvfVectorIndex> ivf_;    // in charge after it
};

}  // namespace winnow::index
