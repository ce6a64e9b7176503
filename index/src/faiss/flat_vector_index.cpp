#include "winnow/index/flat_vector_index.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <faiss/impl/IDSelector.h>

#include "faiss/id_map.h"
#include "faiss/simd_flat_storage.h"
#include "io/payload_codec.h"
#include "kernels/flat_block_search.h"
#include "kernels/simd_distance.h"
#include "winnow/error.h"

namespace winnow::index {
namespace {

// Below this many queries, each query is scanned with the vectorised inner
// product; from it on, the batch goes through the blocked batch search
// (flat_block_search.h: fused AVX-512, else sgemm).
constexpr std::size_t kBatchQueryThreshold = 20;

constexpr std::size_t kMaxDim = 1u << 16;

void check_dim(std::size_t dim) {
  WINNOW_THROW_IF_NOT(dim >= 1 && dim <= kMaxDim, "index dimension must be in [1, {}], got {}",
                      kMaxDim, dim);
}

}  // namespace

struct FlatVectorIndex::Impl {
  explicit Impl(std::size_t d)
      : flat(std::make_unique<detail::SimdFlatIP>(static_cast<faiss::Index::idx_t>(d))) {}

  std::unique_ptr<detail::SimdFlatIP> flat;
  detail::IdMap ids;
};

FlatVectorIndex::FlatVectorIndex(std::size_t dim) {
  check_dim(dim);
  impl_ = std::make_unique<Impl>(dim);
}

FlatVectorIndex::FlatVectorIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

FlatVectorIndex::~FlatVectorIndex() = default;

std::size_t FlatVectorIndex::dim() const {
  return static_cast<std::size_t>(impl_->flat->d);
}
std::size_t FlatVectorIndex::size() const {
  return impl_->ids.live_count();
}
bool FlatVectorIndex::contains(std::int64_t id) const {
  return impl_->ids.contains(id);
}
std::vector<std::int64_t> FlatVectorIndex::ids() const {
  return impl_->ids.live_external();
}

bool FlatVectorIndex::per_query_results() const {
  return detail::fused_avx512_available();
}

std::size_t FlatVectorIndex::min_queries_per_call() const {
  return kBatchQueryThreshold;
}

const float* FlatVectorIndex::vectors() const {
  return impl_->flat->vectors();
}

void FlatVectorIndex::do_add(std::size_t n, const std::int64_t* ids, const float* normalized) {
  impl_->ids.check_new(n, ids);
  impl_->flat->add(static_cast<faiss::Index::idx_t>(n), normalized);
  impl_->ids.append(n, ids);
}

SearchResults FlatVectorIndex::do_search(std::size_t num_queries, const float* normalized,
                                         std::size_t k) const {
  SearchResults out = SearchResults::padded(num_queries, k);
  const auto total = static_cast<std::size_t>(impl_->flat->ntotal);
  const std::size_t kk = std::min(k, total);
  if (kk == 0) {
    return out;
  }
  const std::size_t d = dim();

  if (num_queries < kBatchQueryThreshold) {
    const float* base = impl_->flat->vectors();
    std::vector<float> scores(total);
    std::vector<std::pair<float, std::int64_t>> heap;  // min-heap on similarity
    heap.reserve(kk + 1);
    const auto worse = [](const std::pair<float, std::int64_t>& a,
                          const std::pair<float, std::int64_t>& b) {
      return a.first > b.first || (a.first == b.first && a.second < b.second);
    };
    for (std::size_t q = 0; q < num_queries; ++q) {
      inner_products(normalized + q * d, base, total, d, scores.data());
      heap.clear();
      for (std::size_t i = 0; i < total; ++i) {
        if (heap.size() < kk) {
          heap.emplace_back(scores[i], static_cast<std::int64_t>(i));
          std::push_heap(heap.begin(), heap.end(), worse);
        } else if (scores[i] > heap.front().first) {
          std::pop_heap(heap.begin(), heap.end(), worse);
          heap.back() = {scores[i], static_cast<std::int64_t>(i)};
          std::push_heap(heap.begin(), heap.end(), worse);
        }
      }
      std::sort_heap(heap.begin(), heap.end(), worse);
      for (std::size_t j = 0; j < heap.size(); ++j) {
        out.ids[q * k + j] = impl_->ids.external(heap[j].second);
        out.similarities[q * k + j] = heap[j].first;
      }
    }
    return out;
  }

  std::vector<float> scores(num_queries * kk);
  std::vector<std::int64_t> labels(num_queries * kk);
  detail::flat_block_search(impl_->flat->vectors(), total, d, normalized, num_queries, kk,
                            scores.data(), labels.data());
  impl_->ids.collect_hits(labels.data(), scores.data(), kk, out);
  return out;
}

std::size_t FlatVectorIndex::do_remove(std::size_t n, const std::int64_t* ids) {
  std::vector<std::int64_t> internal;
  internal.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t row = impl_->ids.find(ids[i]);
    if (row >= 0) {
      internal.push_back(row);
    }
  }
  std::sort(internal.begin(), internal.end());
  internal.erase(std::unique(internal.begin(), internal.end()), internal.end());
  if (internal.empty()) {
    return 0;
  }
  const faiss::IDSelectorBatch selector(internal.size(), internal.data());
  const std::size_t removed = impl_->flat->remove_ids(selector);
  WINNOW_THROW_IF_NOT(removed == internal.size(),
                      "flat index removed {} rows where {} were expected (internal error)", removed,
                      internal.size());
  impl_->ids.erase(internal);
  return removed;
}

namespace detail {

void PayloadCodec::write_flat(const FlatVectorIndex& index, ByteSink& out) {
  index.impl_->ids.write(out);
  write_faiss(*index.impl_->flat, out);
}

std::unique_ptr<VectorIndex> PayloadCodec::read_flat(std::size_t dim, ByteReader& in) {
  check_dim(dim);
  auto impl = std::make_unique<FlatVectorIndex::Impl>(dim);
  impl->ids = IdMap::read(in);
  const std::unique_ptr<faiss::Index> stored = read_faiss(in);
  auto* flat = dynamic_cast<faiss::IndexFlat*>(stored.get());
  WINNOW_THROW_IF_NOT(flat != nullptr, "{}: FAISS data is not a flat index", in.what());
  WINNOW_THROW_IF_NOT(static_cast<std::size_t>(flat->d) == dim,
                      "{}: FAISS data has dimension {}, header says {}", in.what(), flat->d, dim);
  WINNOW_THROW_IF_NOT(static_cast<std::size_t>(flat->ntotal) == impl->ids.internal_count(),
                      "{}: FAISS data holds {} vectors, id table {}", in.what(), flat->ntotal,
                      impl->ids.internal_count());
  WINNOW_THROW_IF_NOT(impl->ids.tombstone_count() == 0, "{}: flat index data has tombstones",
                      in.what());
  impl->flat = adopt_flat_ip(*flat);
  return std::unique_ptr<VectorIndex>(new FlatVectorIndex(std::move(impl)));
}

}  // namespace detail
}  // namespace winnow::index
