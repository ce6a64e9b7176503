#include "faiss/simd_flat_storage.h"

#include <utility>

#include "kernels/simd_distance.h"
#include "winnow/error.h"

namespace winnow::index::detail {
namespace {

class InnerProductComputer final : public faiss::FlatCodesDistanceComputer {
 public:
  InnerProductComputer(const SimdFlatIP& storage, bool negate)
      : faiss::FlatCodesDistanceComputer(storage.codes.data(), storage.code_size),
        base_(storage.vectors()),
        d_(static_cast<std::size_t>(storage.d)),
        sign_(negate ? -1.0f : 1.0f),
        kernel_(inner_product_kernel()) {}

  void set_query(const float* x) override { query_ = x; }

  float distance_to_code(const std::uint8_t* code) override {
    return sign_ * kernel_(query_, reinterpret_cast<const float*>(code), d_);
  }

  float symmetric_dis(idx_t i, idx_t j) override {
    return sign_ * kernel_(base_ + static_cast<std::size_t>(i) * d_,
                           base_ + static_cast<std::size_t>(j) * d_, d_);
  }

 private:
  const float* base_;
  std::size_t d_;
  float sign_;
  InnerProductKernel kernel_;
  const float* query_ = nullptr;
};

}  // namespace

faiss::FlatCodesDistanceComputer* SimdFlatIP::get_FlatCodesDistanceComputer() const {
  return new InnerProductComputer(*this, /*negate=*/false);
}

faiss::FlatCodesDistanceComputer* make_inner_product_computer(const SimdFlatIP& storage,
                                                              bool negate) {
  return new InnerProductComputer(storage, negate);
}

std::unique_ptr<SimdFlatIP> adopt_flat_ip(faiss::IndexFlat& flat) {
  WINNOW_THROW_IF_NOT(flat.metric_type == faiss::METRIC_INNER_PRODUCT,
                      "stored flat index uses metric {}, expected inner product",
                      static_cast<int>(flat.metric_type));
  auto storage = std::make_unique<SimdFlatIP>(flat.d);
  WINNOW_THROW_IF_NOT(
      flat.codes.size() == static_cast<std::size_t>(flat.ntotal) * storage->code_size,
      "stored flat index holds {} bytes for {} vectors of dim {}", flat.codes.size(), flat.ntotal,
      flat.d);
  storage->codes = std::move(flat.codes);
  storage->ntotal = flat.ntotal;
  flat.codes.clear();
  flat.ntotal = 0;
  return storage;
}

}  // namespace winnow::index::detail
