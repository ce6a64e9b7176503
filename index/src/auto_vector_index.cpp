#include "winnow/index/auto_vector_index.h"

#include <fmt/format.h>

#include "io/payload_codec.h"
#include "winnow/error.h"

namespace winnow::index {

void validate_auto_params(const AutoParams& params) {
  WINNOW_THROW_IF_NOT(params.switch_at >= 1,
                      "auto index parameter switchAt must be at least 1, got {}", params.switch_at);
  validate_ivf_params(params.ivf);
}

std::string auto_config_string(const AutoParams& params) {
  std::string ivf = ivf_config_string(params.ivf);  // "ivf(nprobe=..,...)"
  return fmt::format("auto(switchAt={},{}", params.switch_at, ivf.substr(ivf.find('(') + 1));
}

AutoVectorIndex::AutoVectorIndex(std::size_t dim, AutoParams params)
    : params_(params), flat_(std::make_unique<FlatVectorIndex>(dim)) {
  validate_auto_params(params_);
}

AutoVectorIndex::AutoVectorIndex(AutoParams params, std::unique_ptr<FlatVectorIndex> flat,
                                 std::unique_ptr<IvfVectorIndex> ivf)
    : params_(params), flat_(std::move(flat)), ivf_(std::move(ivf)) {}

AutoVectorIndex::~AutoVectorIndex() = default;

const VectorIndex& AutoVectorIndex::part() const {
  if (ivf_) return *ivf_;
  return *flat_;
}

VectorIndex& AutoVectorIndex::part() {
  if (ivf_) return *ivf_;
  return *flat_;
}

void AutoVectorIndex::set_search_params(const AutoParams& wanted) {
  validate_auto_params(wanted);
  params_.ivf.nprobe = wanted.ivf.nprobe;
  params_.ivf.shared_scan_from = wanted.ivf.shared_scan_from;
  if (ivf_) ivf_->set_search_params(params_.ivf);
}

// The flat index's vectors go to the IVF in one add, in insertion order: the
// IVF then splits its one cell as often as its rule asks, as a rebuild from
// the store would in larger steps. Built before the flat index is dropped,
// so a failure leaves the index as it was.
void AutoVectorIndex::switch_to_ivf() {
  auto ivf = std::make_unique<IvfVectorIndex>(flat_->dim(), params_.ivf);
  const std::vector<std::int64_t> ids = flat_->ids();
  add_normalized(*ivf, ids.size(), ids.data(), flat_->vectors());
  ivf_ = std::move(ivf);
  flat_.reset();
}

void AutoVectorIndex::do_add(std::size_t n, const std::int64_t* ids, const float* normalized) {
  add_normalized(part(), n, ids, normalized);
  if (!ivf_ && flat_->size() >= static_cast<std::size_t>(params_.switch_at)) switch_to_ivf();
}

SearchResults AutoVectorIndex::do_search(std::size_t num_queries, const float* normalized,
                                         std::size_t k) const {
  return search_normalized(part(), num_queries, normalized, k);
}

std::size_t AutoVectorIndex::do_remove(std::size_t n, const std::int64_t* ids) {
  return part().remove(n, ids);
}

namespace detail {

// Payload: u8 part (0 flat, 1 IVF), then that part's own payload.
void PayloadCodec::write_auto(const AutoVectorIndex& index, ByteSink& out) {
  append_pod(out, static_cast<std::uint8_t>(index.ivf_ ? 1 : 0));
  if (index.ivf_) {
    write_ivf(*index.ivf_, out);
  } else {
    write_flat(*index.flat_, out);
  }
}

std::unique_ptr<VectorIndex> PayloadCodec::read_auto(const AutoParams& params, std::size_t dim,
                                                     ByteReader& in) {
  validate_auto_params(params);
  const auto part = in.read<std::uint8_t>();
  WINNOW_THROW_IF_NOT(part <= 1, "{}: auto index part {} is neither flat (0) nor IVF (1)",
                      in.what(), part);
  std::unique_ptr<FlatVectorIndex> flat;
  std::unique_ptr<IvfVectorIndex> ivf;
  if (part == 1) {
    ivf.reset(static_cast<IvfVectorIndex*>(read_ivf(params.ivf, dim, in).release()));
  } else {
    flat.reset(static_cast<FlatVectorIndex*>(read_flat(dim, in).release()));
    WINNOW_THROW_IF_NOT(flat->size() < static_cast<std::size_t>(params.switch_at),
                        "{}: auto index holds {} vectors in its flat part, switchAt is {}",
                        in.what(), flat->size(), params.switch_at);
  }
  return std::unique_ptr<VectorIndex>(new AutoVectorIndex(params, std::move(flat), std::move(ivf)));
}

}  // namespace detail
}  // namespace winnow::index
