// FAISS flat inner-product storage whose distance computer uses winnow's
// vectorised kernel (private to winnow_index).
//
// Debian's libfaiss computes the distances of IndexFlatIP::get_distance_computer
// with scalar code, and HNSW construction spends most of its time there.
// SimdFlatIP is an IndexFlatIP (so faiss::write_index stores it as a plain
// "IxFI" and any FAISS can read it back) whose FlatCodesDistanceComputer calls
// winnow::index::inner_product. Batched flat search (IndexFlat::search) still
// goes through FAISS and BLAS.
#pragma once

#include <cstddef>
#include <memory>

#include <faiss/IndexFlat.h>

namespace winnow::index::detail {

struct SimdFlatIP : faiss::IndexFlatIP {
  explicit SimdFlatIP(faiss::Index::idx_t dim) : faiss::IndexFlatIP(dim) {}

  faiss::FlatCodesDistanceComputer* get_FlatCodesDistanceComputer() const override;

  const float* vectors() const { return reinterpret_cast<const float*>(codes.data()); }
};

// Takes over the vectors of a plain flat IP index (as read by
// faiss::read_index); `flat` is left empty.
std::unique_ptr<SimdFlatIP> adopt_flat_ip(faiss::IndexFlat& flat);

// Distance computer over SimdFlatIP storage. With negate = false it returns
// the inner product (FAISS's convention for similarity metrics); with
// negate = true it returns -inner product, a distance to minimise, which is
// what faiss::HNSW::search expects of its DistanceComputer.
faiss::FlatCodesDistanceComputer* make_inner_product_computer(const SimdFlatIP& storage,
                                                              bool negate);

}  // namespace winnow::index::detail
