#include "winnow/index/hnsw_vector_index.h"

#include <algorithm>
#include <limits>
#include <utility>

#include <faiss/IndexHNSW.h>
#include <faiss/impl/AuxIndexStructures.h>
#include <faiss/impl/IDSelector.h>
#include <faiss/utils/Heap.h>

#include "faiss/id_map.h"
#include "faiss/one_omp_thread.h"
#include "faiss/simd_flat_storage.h"
#include "io/payload_codec.h"
#include "winnow/error.h"

namespace winnow::index {
namespace {

using faiss_idx_t = faiss::Index::idx_t;

// Batches up to this size are searched on the calling thread through
// faiss::HNSW::search; IndexHNSW::search opens an OpenMP region and allocates
// a visited table per thread even for a single query.
constexpr std::size_t kSerialQueryLimit = 8;

constexpr std::size_t kMaxDim = 1u << 16;
constexpr int kMaxM = 1024;
constexpr int kMaxEf = 1 << 20;
// FAISS's HNSW numbers its nodes with int32.
constexpr std::size_t kMaxNodes = static_cast<std::size_t>(std::numeric_limits<int>::max());

void check_dim(std::size_t dim) {
  WINNOW_THROW_IF_NOT(dim >= 1 && dim <= kMaxDim, "index dimension must be in [1, {}], got {}",
                      kMaxDim, dim);
}

// An IndexHNSWFlat (so that faiss::write_index can store it) over winnow's
// vectorised storage. The index owns the storage.
std::unique_ptr<faiss::IndexHNSWFlat> make_hnsw(std::size_t dim, const HnswParams& params,
                                                std::unique_ptr<detail::SimdFlatIP> storage) {
  auto index = std::make_unique<faiss::IndexHNSWFlat>();
  index->d = static_cast<int>(dim);
  index->metric_type = faiss::METRIC_INNER_PRODUCT;
  index->hnsw = faiss::HNSW(params.M);
  index->hnsw.efConstruction = params.ef_construction;
  index->hnsw.efSearch = params.ef_search;
  index->ntotal = storage->ntotal;
  index->storage = storage.release();
  index->own_fields = true;
  index->is_trained = true;
  return index;
}

}  // namespace

void validate_hnsw_params(const HnswParams& params) {
  WINNOW_THROW_IF_NOT(params.M >= 2 && params.M <= kMaxM,
                      "HNSW parameter M must be in [2, {}], got {}", kMaxM, params.M);
  WINNOW_THROW_IF_NOT(params.ef_construction >= 1 && params.ef_construction <= kMaxEf,
                      "HNSW parameter efConstruction must be in [1, {}], got {}", kMaxEf,
                      params.ef_construction);
  WINNOW_THROW_IF_NOT(params.ef_search >= 1 && params.ef_search <= kMaxEf,
                      "HNSW parameter efSearch must be in [1, {}], got {}", kMaxEf,
                      params.ef_search);
}

std::string hnsw_config_string(const HnswParams& params) {
  return fmt::format("hnsw(M={},efConstruction={},efSearch={})", params.M, params.ef_construction,
                     params.ef_search);
}

struct HnswVectorIndex::Impl {
  Impl(std::size_t d, const HnswParams& p)
      : params(p),
        index(make_hnsw(d, p, std::make_unique<detail::SimdFlatIP>(static_cast<faiss_idx_t>(d)))) {}

  const detail::SimdFlatIP& storage() const {
    return *static_cast<const detail::SimdFlatIP*>(index->storage);
  }

  HnswParams params;
  std::unique_ptr<faiss::IndexHNSWFlat> index;
  detail::IdMap ids;
};

HnswVectorIndex::HnswVectorIndex(std::size_t dim, HnswParams params) {
  check_dim(dim);
  validate_hnsw_params(params);
  impl_ = std::make_unique<Impl>(dim, params);
}

HnswVectorIndex::HnswVectorIndex(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HnswVectorIndex::~HnswVectorIndex() = default;

std::string HnswVectorIndex::config() const {
  return hnsw_config_string(impl_->params);
}
std::size_t HnswVectorIndex::dim() const {
  return static_cast<std::size_t>(impl_->index->d);
}
std::size_t HnswVectorIndex::size() const {
  return impl_->ids.live_count();
}
bool HnswVectorIndex::contains(std::int64_t id) const {
  return impl_->ids.contains(id);
}
std::vector<std::int64_t> HnswVectorIndex::ids() const {
  return impl_->ids.live_external();
}
std::size_t HnswVectorIndex::tombstones() const {
  return impl_->ids.tombstone_count();
}
const HnswParams& HnswVectorIndex::params() const {
  return impl_->params;
}

void HnswVectorIndex::set_ef_search(int ef_search) {
  HnswParams next = impl_->params;
  next.ef_search = ef_search;
  validate_hnsw_params(next);
  impl_->params = next;
  impl_->index->hnsw.efSearch = ef_search;
}

namespace {

// FAISS inserts into the graph on every OpenMP thread, in an order that
// changes from run to run, so the graph (and every later search result)
// would depend on the thread count and on timing. winnow's decisions must
// not: insertion runs on one thread. Searches stay parallel (each query's
// result depends only on the graph).
void add_on_one_thread(faiss::IndexHNSW& index, std::size_t n, const float* vectors) {
  const detail::OneOmpThread one_thread;
  index.add(static_cast<faiss_idx_t>(n), vectors);
}

}  // namespace

void HnswVectorIndex::do_add(std::size_t n, const std::int64_t* ids, const float* normalized) {
  impl_->ids.check_new(n, ids);
  WINNOW_THROW_IF_NOT(n <= kMaxNodes - impl_->ids.internal_count(),
                      "HNSW index cannot hold {} more vectors: it already has {} rows (limit {})",
                      n, impl_->ids.internal_count(), kMaxNodes);
  add_on_one_thread(*impl_->index, n, normalized);
  impl_->ids.append(n, ids);
}

SearchResults HnswVectorIndex::do_search(std::size_t num_queries, const float* normalized,
                                         std::size_t k) const {
  SearchResults out = SearchResults::padded(num_queries, k);
  const auto total = static_cast<std::size_t>(impl_->index->ntotal);
  const std::size_t kk = std::min(k, total);
  if (kk == 0 || impl_->ids.live_count() == 0) {
    return out;
  }

  // Tombstones: select every internal id whose bit is not set. efSearch is
  // copied into the parameters because FAISS 1.7.3 sizes the candidate heap
  // from hnsw.efSearch but stops the search on params->efSearch.
  const std::vector<std::uint8_t>& dead = impl_->ids.dead_bitmap();
  const faiss::IDSelectorBitmap dead_selector(dead.size(), dead.data());
  const faiss::IDSelectorNot live_selector(&dead_selector);
  faiss::SearchParametersHNSW search_params;
  search_params.efSearch = std::max(impl_->params.ef_search, static_cast<int>(kk));
  search_params.sel = impl_->ids.tombstone_count() > 0
                          ? const_cast<faiss::IDSelectorNot*>(&live_selector)
                          : nullptr;

  std::vector<float> distances(num_queries * kk);
  std::vector<faiss_idx_t> labels(num_queries * kk);
  const std::size_t d = dim();
  if (num_queries <= kSerialQueryLimit) {
    faiss::VisitedTable visited(static_cast<int>(total));
    const std::unique_ptr<faiss::DistanceComputer> computer(
        detail::make_inner_product_computer(impl_->storage(), /*negate=*/true));
    for (std::size_t q = 0; q < num_queries; ++q) {
      float* dq = distances.data() + q * kk;
      faiss_idx_t* lq = labels.data() + q * kk;
      computer->set_query(normalized + q * d);
      faiss::maxheap_heapify(kk, dq, lq);
      impl_->index->hnsw.search(*computer, static_cast<int>(kk), lq, dq, visited, &search_params);
      faiss::maxheap_reorder(kk, dq, lq);
      for (std::size_t r = 0; r < kk; ++r) {
        dq[r] = -dq[r];  // back from distance (-inner product) to similarity
      }
    }
  } else {
    impl_->index->search(static_cast<faiss_idx_t>(num_queries), normalized,
                         static_cast<faiss_idx_t>(kk), distances.data(), labels.data(),
                         &search_params);
  }

  impl_->ids.collect_hits(labels.data(), distances.data(), kk, out);
  return out;
}

std::size_t HnswVectorIndex::do_remove(std::size_t n, const std::int64_t* ids) {
  return impl_->ids.tombstone_all(n, ids);
}

void HnswVectorIndex::compact() {
  if (impl_->ids.tombstone_count() == 0) {
    return;
  }
  const std::size_t d = dim();
  const std::vector<std::int64_t> live = impl_->ids.live_internal();
  std::vector<std::int64_t> external(live.size());
  std::vector<float> vectors(live.size() * d);
  const float* base = impl_->storage().vectors();
  for (std::size_t i = 0; i < live.size(); ++i) {
    external[i] = impl_->ids.external(live[i]);
    std::copy_n(base + static_cast<std::size_t>(live[i]) * d, d, vectors.data() + i * d);
  }
  auto next = std::make_unique<Impl>(d, impl_->params);
  add_on_one_thread(*next->index, live.size(), vectors.data());
  next->ids.append(external.size(), external.data());
  impl_ = std::move(next);
}

namespace detail {

void PayloadCodec::write_hnsw(const HnswVectorIndex& index, ByteSink& out) {
  index.impl_->ids.write(out);
  write_faiss(*index.impl_->index, out);
}

std::unique_ptr<VectorIndex> PayloadCodec::read_hnsw(const HnswParams& params, std::size_t dim,
                                                     ByteReader& in) {
  check_dim(dim);
  validate_hnsw_params(params);
  IdMap ids = IdMap::read(in);
  std::unique_ptr<faiss::Index> stored = read_faiss(in);
  auto* hnsw = dynamic_cast<faiss::IndexHNSWFlat*>(stored.get());
  WINNOW_THROW_IF_NOT(hnsw != nullptr, "{}: FAISS data is not an HNSW flat index", in.what());
  auto* flat = dynamic_cast<faiss::IndexFlat*>(hnsw->storage);
  WINNOW_THROW_IF_NOT(flat != nullptr, "{}: FAISS HNSW data has no flat storage", in.what());
  WINNOW_THROW_IF_NOT(static_cast<std::size_t>(hnsw->d) == dim && flat->d == hnsw->d,
                      "{}: FAISS data has dimension {}, header says {}", in.what(), hnsw->d, dim);
  WINNOW_THROW_IF_NOT(hnsw->metric_type == faiss::METRIC_INNER_PRODUCT,
                      "{}: FAISS HNSW data does not use inner product", in.what());
  WINNOW_THROW_IF_NOT(static_cast<std::size_t>(hnsw->ntotal) == ids.internal_count() &&
                          flat->ntotal == hnsw->ntotal &&
                          hnsw->hnsw.levels.size() == static_cast<std::size_t>(hnsw->ntotal),
                      "{}: FAISS data holds {} vectors, id table {}", in.what(), hnsw->ntotal,
                      ids.internal_count());
  WINNOW_THROW_IF_NOT(hnsw->hnsw.nb_neighbors(0) == 2 * params.M,
                      "{}: FAISS HNSW graph has {} base-layer links per node, config says M={}",
                      in.what(), hnsw->hnsw.nb_neighbors(0), params.M);

  auto impl = std::make_unique<HnswVectorIndex::Impl>(dim, params);
  std::unique_ptr<SimdFlatIP> storage = adopt_flat_ip(*flat);
  // Swap winnow's storage in; the graph is kept as stored.
  if (hnsw->own_fields) {
    delete hnsw->storage;
  }
  hnsw->storage = storage.release();
  hnsw->own_fields = true;
  hnsw->hnsw.efConstruction = params.ef_construction;
  hnsw->hnsw.efSearch = params.ef_search;
  stored.release();
  impl->index.reset(hnsw);
  impl->ids = std::move(ids);
  return std::unique_ptr<VectorIndex>(new HnswVectorIndex(std::move(impl)));
}

}  // namespace detail
}  // namespace winnow::index
