#include "winnow/torch/torchscript_embedder.h"

#include <torch/script.h>

#include <cmath>
#include <mutex>

#include <fmt/format.h>

#include "winnow/curation/embed/embedder_spec.h"
#include "winnow/error.h"

namespace winnow {

namespace {

using curation::ContentKind;
using curation::ManifestRecord;
using curation::embed::EmbedderOptions;

class TorchScriptEmbedder : public curation::embed::Embedder {
 public:
  TorchScriptEmbedder(std::string path, std::size_t width, std::size_t height, std::string spec)
      : path_(std::move(path)), width_(width), height_(height), spec_(std::move(spec)) {
    try {
      module_ = torch::jit::load(path_, torch::kCPU);
    } catch (const std::exception& e) {
      WINNOW_THROW("torchscript embedder: cannot load '{}': {}", path_, first_line(e.what()));
    }
    module_.eval();
    const torch::Tensor out =
        forward(torch::zeros({1, 1, static_cast<long>(height_), static_cast<long>(width_)}));
    WINNOW_THROW_IF_NOT(out.dim() == 2 && out.size(0) == 1 && out.size(1) > 0,
                        "torchscript embedder '{}': a [1, 1, {}, {}] input must give [1, D] "
                        "vectors, got shape {}",
                        path_, height_, width_, c10::str(out.sizes()));
    dim_ = static_cast<std::size_t>(out.size(1));
  }

  std::string spec() const override { return spec_; }
  std::size_t dim() const override { return dim_; }
  ImageSize image_size() const override { return {width_, height_}; }
  // One module, run from one thread: torch parallelises inside a forward.
  bool thread_safe() const override { return false; }

  void embed(const ManifestRecord& record, float* out) const override {
    WINNOW_THROW_IF_NOT(record.has_image(),
                        "record '{}': the torchscript embedder takes images (pixels records or "
                        "image files), not {}",
                        record.key, curation::to_string(record.kind));
    WINNOW_THROW_IF_NOT(record.pixels.size() == width_ * height_,
                        "record '{}': {} pixels, the torchscript embedder expects {} x {}",
                        record.key, record.pixels.size(), width_, height_);
    torch::Tensor image =
        torch::from_blob(const_cast<std::uint8_t*>(record.pixels.data()),
                         {1, 1, static_cast<long>(height_), static_cast<long>(width_)},
                         torch::kUInt8)
            .to(torch::kFloat32)
            .div_(255.0f);
    const torch::Tensor v = forward(image).contiguous();
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

  torch::Tensor forward(const torch::Tensor& input) const {
    torch::NoGradGuard no_grad;
    // Module::forward is not const; the module is not modified by a forward in eval mode.
    auto& module = const_cast<torch::jit::script::Module&>(module_);
    torch::jit::IValue result;
    try {
      result = module.forward({input});
    } catch (const std::exception& e) {
      WINNOW_THROW("torchscript embedder '{}': forward failed: {}", path_, first_line(e.what()));
    }
    WINNOW_THROW_IF_NOT(result.isTensor(),
                        "torchscript embedder '{}': forward must return a tensor", path_);
    return result.toTensor().to(torch::kFloat32);
  }

  std::string path_;
  std::size_t width_, height_;
  std::string spec_;
  torch::jit::script::Module module_;
  std::size_t dim_ = 0;
};

}  // namespace

std::unique_ptr<curation::embed::Embedder> make_torchscript_embedder(
    const std::string& spec, const EmbedderOptions& options) {
  std::size_t width = options.width != 0 ? options.width : 28;
  std::size_t height = options.height != 0 ? options.height : 28;
  std::string path;
  const std::string colon = "torchscript:";
  if (spec.rfind(colon, 0) == 0) {
    path = spec.substr(colon.size());
  } else {
    curation::embed::EmbedderSpec p(spec);
    WINNOW_THROW_IF_NOT(p.name() == "torchscript",
                        "embedder spec '{}': expected torchscript:PATH or "
                        "torchscript(path=..,width=..,height=..)",
                        spec);
    path = p.take_string("path", "");
    width = p.take_size("width", width);
    height = p.take_size("height", height);
    p.check_no_extra();
    WINNOW_THROW_IF_NOT(width > 0 && width <= 65536 && height > 0 && height <= 65536,
                        "embedder spec '{}': width {} and height {} must be in [1, 65536]", spec,
                        width, height);
  }
  WINNOW_THROW_IF_NOT(!path.empty(), "embedder spec '{}': no model path", spec);
  const std::string canonical =
      fmt::format("torchscript(path={},width={},height={})", path, width, height);
  return std::make_unique<TorchScriptEmbedder>(path, width, height, canonical);
}

void register_torchscript_embedder() {
  static std::once_flag once;
  std::call_once(
      once, [] { curation::embed::register_embedder("torchscript", make_torchscript_embedder); });
}

}  // namespace winnow
