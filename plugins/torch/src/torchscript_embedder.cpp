#include "winnow/torch/torchscript_embedder.h"

#include <torch/script.h>

#include <cmath>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::torch {

namespace {

using curation::ContentKind;
using curation::EmbedderOptions;
using curation::ManifestRecord;

class TorchScriptEmbedder : public curation::Embedder {
 public:
  TorchScriptEmbedder(std::string path, std::size_t width, std::size_t height, std::string spec)
      : path_(std::move(path)), width_(width), height_(height), spec_(std::move(spec)) {
    try {
      module_ = ::torch::jit::load(path_, ::torch::kCPU);
    } catch (const std::exception& e) {
      WINNOW_THROW("torchscript embedder: cannot load '{}': {}", path_, first_line(e.what()));
    }
    module_.eval();
    const ::torch::Tensor out = forward(::torch::zeros({1, 1, static_cast<long>(height_),
                                                        static_cast<long>(width_)}));
    WINNOW_THROW_IF_NOT(out.dim() == 2 && out.size(0) == 1 && out.size(1) > 0,
                        "torchscript embedder '{}': a [1, 1, {}, {}] input must give [1, D] "
                        "vectors, got shape {}",
                        path_, height_, width_, c10::str(out.sizes()));
    dim_ = static_cast<std::size_t>(out.size(1));
  }

  std::string spec() const override { return spec_; }
  std::size_t dim() const override { return dim_; }

  void embed(const ManifestRecord& record, float* out) const override {
    WINNOW_THROW_IF_NOT(record.kind == ContentKind::pixels,
                        "record '{}': the torchscript embedder takes pixels records, not {}",
                        record.key, curation::to_string(record.kind));
    WINNOW_THROW_IF_NOT(record.pixels.size() == width_ * height_,
                        "record '{}': {} pixels, the torchscript embedder expects {} x {}",
                        record.key, record.pixels.size(), width_, height_);
    ::torch::Tensor image =
        ::torch::from_blob(const_cast<std::uint8_t*>(record.pixels.data()),
                           {1, 1, static_cast<long>(height_), static_cast<long>(width_)},
                           ::torch::kUInt8)
            .to(::torch::kFloat32)
            .div_(255.0f);
    const ::torch::Tensor v = forward(image).contiguous();
    const float* p = v.data_ptr<float>();
    double norm = 0.0;
    for (std::size_t i = 0; i < dim_; ++i) norm += double(p[i]) * p[i];
    norm = std::sqrt(norm);
    WINNOW_THROW_IF_NOT(std::isfinite(norm) && norm > 0.0,
                        "record '{}': the torchscript embedder gave a {} vector", record.key,
                        norm == 0.0 ? "zero" : "non-finite");
    for (std::size_t i = 0; i < dim_; ++i) out[i] = static_cast<float>(p[i] / norm);
  }

 private:
  static std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

  ::torch::Tensor forward(const ::torch::Tensor& input) const {
    ::torch::NoGradGuard no_grad;
    // Module::forward is not const; the module is not modified by a forward in eval mode.
    auto& module = const_cast<::torch::jit::script::Module&>(module_);
    ::torch::jit::IValue result;
    try {
      result = module.forward({input});
    } catch (const std::exception& e) {
      WINNOW_THROW("torchscript embedder '{}': forward failed: {}", path_, first_line(e.what()));
    }
    WINNOW_THROW_IF_NOT(result.isTensor(), "torchscript embedder '{}': forward must return a tensor",
                        path_);
    return result.toTensor().to(::torch::kFloat32);
  }

  std::string path_;
  std::size_t width_, height_;
  std::string spec_;
  ::torch::jit::script::Module module_;
  std::size_t dim_ = 0;
};

// "key=value,key=value" inside torchscript(...).
std::map<std::string, std::string> parse_keys(const std::string& spec, const std::string& body) {
  std::map<std::string, std::string> keys;
  std::size_t start = 0;
  while (start <= body.size()) {
    const std::size_t end = std::min(body.find(',', start), body.size());
    const std::string item = body.substr(start, end - start);
    const std::size_t eq = item.find('=');
    WINNOW_THROW_IF_NOT(eq != std::string::npos && eq > 0,
                        "embedder spec '{}': '{}' is not key=value", spec, item);
    keys[item.substr(0, eq)] = item.substr(eq + 1);
    start = end + 1;
  }
  return keys;
}

std::size_t positive(const std::string& spec, const std::string& key, const std::string& value) {
  std::size_t used = 0;
  long v = 0;
  try {
    v = std::stol(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  WINNOW_THROW_IF_NOT(used == value.size() && v > 0 && v <= 65536,
                      "embedder spec '{}': {}={} is not a positive size", spec, key, value);
  return static_cast<std::size_t>(v);
}

}  // namespace

std::unique_ptr<curation::Embedder> make_torchscript_embedder(const std::string& spec,
                                                              const EmbedderOptions& options) {
  std::size_t width = options.width != 0 ? options.width : 28;
  std::size_t height = options.height != 0 ? options.height : 28;
  std::string path;
  const std::string colon = "torchscript:";
  const std::string paren = "torchscript(";
  if (spec.rfind(colon, 0) == 0) {
    path = spec.substr(colon.size());
  } else if (spec.rfind(paren, 0) == 0 && spec.back() == ')') {
    auto keys = parse_keys(spec, spec.substr(paren.size(), spec.size() - paren.size() - 1));
    for (const auto& [k, v] : keys) {
      if (k == "path") {
        path = v;
      } else if (k == "width") {
        width = positive(spec, k, v);
      } else if (k == "height") {
        height = positive(spec, k, v);
      } else {
        WINNOW_THROW("embedder spec '{}': unknown key '{}' (path, width, height)", spec, k);
      }
    }
  } else {
    WINNOW_THROW("embedder spec '{}': expected torchscript:PATH or torchscript(path=..,width=..,"
                 "height=..)",
                 spec);
  }
  WINNOW_THROW_IF_NOT(!path.empty(), "embedder spec '{}': no model path", spec);
  const std::string canonical =
      fmt::format("torchscript(path={},width={},height={})", path, width, height);
  return std::make_unique<TorchScriptEmbedder>(path, width, height, canonical);
}

void register_torchscript_embedder() {
  static std::once_flag once;
  std::call_once(once, [] { curation::register_embedder("torchscript", make_torchscript_embedder); });
}

}  // namespace winnow::torch
