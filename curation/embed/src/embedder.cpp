#include "winnow/curation/embed/embedder.h"

#include "embedder_registry.h"
#include "winnow/curation/embed/embedder_spec.h"

#include <cmath>
#include <random>

#include <fmt/format.h>

#include "winnow/utf8.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/dedup/near_duplicate_verifier.h"
#include "winnow/error.h"

namespace winnow::curation::embed {

namespace {

void normalise(float* v, std::size_t n, const std::string& key, const char* what) {
  double norm2 = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    norm2 += static_cast<double>(v[i]) * v[i];
  }
  WINNOW_THROW_IF_NOT(norm2 > 0.0 && std::isfinite(norm2),
                      "record '{}': cannot embed a {} (zero vector after embedding)", key, what);
  const float inv = static_cast<float>(1.0 / std::sqrt(norm2));
  for (std::size_t i = 0; i < n; ++i) {
    v[i] *= inv;
  }
}

class ProvidedEmbedder final : public Embedder {
 public:
  explicit ProvidedEmbedder(std::size_t dim) : dim_(dim) {
    WINNOW_THROW_IF_NOT(dim_ > 0,
                        "embedder 'provided' needs a dimension: provided(dim=D) or "
                        "EmbedderOptions::input_dim");
  }
  std::string spec() const override { return fmt::format("provided(dim={})", dim_); }
  std::size_t dim() const override { return dim_; }
  void embed(const ManifestRecord& r, float* out) const override {
    WINNOW_THROW_IF_NOT(!r.embedding.empty(),
                        "record '{}' has no 'embedding' for the provided embedder", r.key);
    WINNOW_THROW_IF_NOT(r.embedding.size() == dim_,
                        "record '{}' has an embedding of {} values, expected {}", r.key,
                        r.embedding.size(), dim_);
    for (std::size_t i = 0; i < dim_; ++i) {
      WINNOW_THROW_IF_NOT(std::isfinite(r.embedding[i]), "record '{}': embedding[{}] is not finite",
                          r.key, i);
      out[i] = r.embedding[i];
    }
    normalise(out, dim_, r.key, "zero embedding");
  }

 private:
  std::size_t dim_;
};

class PixelsEmbedder final : public Embedder {
 public:
  PixelsEmbedder(std::size_t width, std::size_t height, std::size_t pool, std::size_t fourier,
                 std::size_t dim, std::size_t seed, bool colour)
      : width_(width),
        height_(height),
        pool_(pool),
        fourier_(fourier),
        seed_(seed),
        channels_(colour ? 3 : 1) {
    WINNOW_THROW_IF_NOT(width_ > 0 && height_ > 0,
                        "embedder 'pixels' needs the image size: pixels(width=W,height=H) or "
                        "EmbedderOptions::width/height");
    WINNOW_THROW_IF_NOT(pool_ >= 1 && pool_ <= width_ && pool_ <= height_,
                        "embedder 'pixels': pool={} must be in [1, min(width, height)]", pool_);
    pw_ = (width_ + pool_ - 1) / pool_;
    ph_ = (height_ + pool_ - 1) / pool_;
    if (fourier_ > 0) {
      WINNOW_THROW_IF_NOT(2 * fourier_ <= pw_ && 2 * fourier_ <= ph_,
                          "embedder 'pixels': fourier={} needs at least {} pooled pixels per side",
                          fourier_, 2 * fourier_);
      // Twiddles: row frequencies u in [0, F), column frequencies v in (-F, F).
      const double two_pi = 6.283185307179586;
      cos_x_.resize(fourier_ * pw_);
      sin_x_.resize(fourier_ * pw_);
      for (std::size_t u = 0; u < fourier_; ++u) {
        for (std::size_t x = 0; x < pw_; ++x) {
          const double a = two_pi * double(u * x) / double(pw_);
          cos_x_[u * pw_ + x] = static_cast<float>(std::cos(a));
          sin_x_[u * pw_ + x] = static_cast<float>(std::sin(a));
        }
      }
      const std::size_t nv = 2 * fourier_ - 1;
      cos_y_.resize(nv * ph_);
      sin_y_.resize(nv * ph_);
      for (std::size_t vi = 0; vi < nv; ++vi) {
        const double v = double(vi) - double(fourier_ - 1);
        for (std::size_t y = 0; y < ph_; ++y) {
          const double a = two_pi * v * double(y) / double(ph_);
          cos_y_[vi * ph_ + y] = static_cast<float>(std::cos(a));
          sin_y_[vi * ph_ + y] = static_cast<float>(std::sin(a));
        }
      }
    }
    const std::size_t pooled = features();
    dim_ = dim == 0 ? pooled : dim;
    WINNOW_THROW_IF_NOT(dim_ <= pooled,
                        "embedder 'pixels': dim={} exceeds the {} features before projection", dim_,
                        pooled);
    if (dim != 0) {
      // Seeded Gaussian projection, rows of `pooled` values.
      std::mt19937_64 rng(seed_);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      projection_.resize(dim_ * pooled);
      for (float& v : projection_) {
        v = normal(rng);
      }
    }
  }
  std::string spec() const override {
    std::string s = fmt::format("pixels(width={},height={},pool={}", width_, height_, pool_);
    if (fourier_ > 0) {
      s += fmt::format(",fourier={}", fourier_);
    }
    if (channels_ == 3) {
      s += ",colour=1";
    }
    if (!projection_.empty()) {
      s += fmt::format(",dim={},seed={}", dim_, seed_);
    }
    return s + ")";
  }
  std::size_t dim() const override { return dim_; }
  ImageSize image_size() const override { return {width_, height_}; }
  void embed(const ManifestRecord& r, float* out) const override {
    if (r.kind == ContentKind::path && !r.has_image()) {
      WINNOW_THROW(
          "record '{}': file '{}' is not an image (JPEG, PNG, WebP, BMP or GIF); only exact "
          "duplicates are found for such files",
          r.key, r.path);
    }
    if (!r.has_image()) {
      throw ContentKindError(fmt::format(
          "record '{}' has {} content; the pixels embedder needs an image (pixels or an image "
          "file)",
          r.key, to_string(r.kind)));
    }
    thread_local std::vector<float> combined;
    const std::vector<float>* features = &combined;
    if (channels_ == 3) {
      // The colour working image (side x side RGB, image files only), each
      // channel pooled, centred and transformed as a grey image is, the three
      // feature vectors one after another.
      if (r.colour.empty()) {
        throw ContentKindError(
            fmt::format("record '{}' has no colour image; pixels(colour=1) embeds the colour "
                        "working images of image files (use pixels(...) without colour for "
                        "grey pixel arrays)",
                        r.key));
      }
      WINNOW_THROW_IF_NOT(r.colour.size() == 3 * width_ * height_,
                          "record '{}' has a colour image of {} bytes; pixels(colour=1) expects {} "
                          "x {} RGB ({} bytes): its width and height must be the colour image's "
                          "side (the verifier's, 32 by default)",
                          r.key, r.colour.size(), width_, height_, 3 * width_ * height_);
      combined.clear();
      for (std::size_t c = 0; c < 3; ++c) {
        const std::vector<float>& channel = channel_features(r.colour.data() + c, 3);
        combined.insert(combined.end(), channel.begin(), channel.end());
      }
    } else {
      WINNOW_THROW_IF_NOT(r.pixels.size() == width_ * height_,
                          "record '{}' has {} pixels, the pixels embedder expects {} x {} = {}",
                          r.key, r.pixels.size(), width_, height_, width_ * height_);
      WINNOW_THROW_IF_NOT(r.width == 0 || (r.width == width_ && r.height == height_),
                          "record '{}' is {} x {}, the pixels embedder expects {} x {}", r.key,
                          r.width, r.height, width_, height_);
      features = &channel_features(r.pixels.data(), 1);
    }
    const std::size_t nf = features->size();
    if (projection_.empty()) {
      std::copy(features->begin(), features->end(), out);
    } else {
      for (std::size_t j = 0; j < dim_; ++j) {
        const float* p = projection_.data() + j * nf;
        float acc = 0.0f;
        for (std::size_t i = 0; i < nf; ++i) {
          acc += p[i] * (*features)[i];
        }
        out[j] = acc;
      }
    }
    normalise(out, dim_, r.key, "constant image");
  }

 private:
  // Length of the vector before projection: per channel, then all channels.
  std::size_t features_per_channel() const {
    return fourier_ > 0 ? fourier_ * (2 * fourier_ - 1) - 1 : pw_ * ph_;
  }
  std::size_t features() const { return channels_ * features_per_channel(); }

  // One channel's features: its width x height values, `step` bytes apart,
  // pooled, centred, and with fourier > 0 their DFT magnitudes. Returns a
  // buffer of this thread's, valid until the next call.
  const std::vector<float>& channel_features(const std::uint8_t* pixels, std::size_t step) const {
    const std::size_t pooled = pw_ * ph_;
    thread_local std::vector<float> buf;
    thread_local std::vector<float> spectrum;
    buf.assign(pooled, 0.0f);
    // Pixel (x, y) adds to pooled cell (x / pool, y / pool), counted along
    // instead of divided (a division per pixel was about 1/8 of the embedding).
    for (std::size_t y = 0, y_in_cell = 0, cell_row = 0; y < height_; ++y) {
      const std::uint8_t* row = pixels + y * width_ * step;
      float* dst = buf.data() + cell_row * pw_;
      for (std::size_t x = 0, x_in_cell = 0, cell = 0; x < width_; ++x) {
        dst[cell] += static_cast<float>(row[x * step]);
        if (++x_in_cell == pool_) {
          x_in_cell = 0;
          ++cell;
        }
      }
      if (++y_in_cell == pool_) {
        y_in_cell = 0;
        ++cell_row;
      }
    }
    double mean = 0.0;
    for (const float v : buf) {
      mean += v;
    }
    mean /= static_cast<double>(pooled);
    for (float& v : buf) {
      v -= static_cast<float>(mean);
    }
    if (fourier_ == 0) return buf;
    fourier_magnitudes(buf, spectrum);
    return spectrum;
  }

  // |DFT| of the pooled image at row frequencies [0, F) x column frequencies
  // (-F, F), without the DC term (half of the spectrum: the other half is its
  // mirror). Magnitudes do not change when the image is translated
  // (cyclically; nearly so for objects on a blank background).
  void fourier_magnitudes(const std::vector<float>& img, std::vector<float>& out) const {
    const std::size_t f = fourier_;
    const std::size_t nv = 2 * f - 1;
    thread_local std::vector<float> re, im;
    re.assign(ph_ * f, 0.0f);
    im.assign(ph_ * f, 0.0f);
    for (std::size_t y = 0; y < ph_; ++y) {
      const float* row = img.data() + y * pw_;
      for (std::size_t u = 0; u < f; ++u) {
        const float* c = cos_x_.data() + u * pw_;
        const float* s = sin_x_.data() + u * pw_;
        float ar = 0.0f, ai = 0.0f;
        for (std::size_t x = 0; x < pw_; ++x) {
          ar += row[x] * c[x];
          ai -= row[x] * s[x];
        }
        re[y * f + u] = ar;
        im[y * f + u] = ai;
      }
    }
    out.clear();
    for (std::size_t vi = 0; vi < nv; ++vi) {
      const float* c = cos_y_.data() + vi * ph_;
      const float* s = sin_y_.data() + vi * ph_;
      for (std::size_t u = 0; u < f; ++u) {
        if (u == 0 && vi == f - 1) {
          continue;  // DC
        }
        float ar = 0.0f, ai = 0.0f;
        for (std::size_t y = 0; y < ph_; ++y) {
          // (re + i im) * (cos - i sin)
          const float r0 = re[y * f + u], i0 = im[y * f + u];
          ar += r0 * c[y] + i0 * s[y];
          ai += i0 * c[y] - r0 * s[y];
        }
        out.push_back(std::sqrt(ar * ar + ai * ai));
      }
    }
  }

  std::size_t width_, height_, pool_, fourier_, seed_;
  std::size_t channels_;  // 1: the grey working image; 3: the colour one
  std::vector<float> cos_x_, sin_x_, cos_y_, sin_y_;
  std::size_t pw_ = 0, ph_ = 0, dim_ = 0;
  std::vector<float> projection_;  // dim_ x pooled, empty when not projecting
};

class HashedNgramsEmbedder final : public Embedder {
 public:
  HashedNgramsEmbedder(std::size_t n, std::size_t dim, std::size_t seed)
      : n_(n), dim_(dim), seed_(seed) {
    WINNOW_THROW_IF_NOT(n_ >= 1 && n_ <= 64, "embedder 'hashed-ngrams': n={} must be in [1, 64]",
                        n_);
    WINNOW_THROW_IF_NOT(dim_ >= 1 && dim_ <= (1u << 24),
                        "embedder 'hashed-ngrams': dim={} must be in [1, 16777216]", dim_);
  }
  std::string spec() const override {
    return fmt::format("hashed-ngrams(n={},dim={},seed={})", n_, dim_, seed_);
  }
  std::size_t dim() const override { return dim_; }
  void embed(const ManifestRecord& r, float* out) const override {
    if (r.kind != ContentKind::text) {
      throw ContentKindError(
          fmt::format("record '{}' has {} content; the hashed-ngrams embedder needs text", r.key,
                      to_string(r.kind)));
    }
    WINNOW_THROW_IF_NOT(!r.text.empty(), "record '{}' has empty text", r.key);
    std::fill(out, out + dim_, 0.0f);
    const std::vector<std::size_t> offs = winnow::codepoint_offsets(r.text);
    const std::size_t cps = offs.size() - 1;
    const std::string_view text(r.text);
    auto add = [&](std::size_t from, std::size_t to) {
      const std::uint64_t h = dedup::hash64(text.substr(from, to - from), seed_);
      out[(h & 0x7FFFFFFFFFFFFFFFull) % dim_] += (h >> 63) != 0 ? -1.0f : 1.0f;
    };
    if (cps < n_) {
      add(0, text.size());
    } else {
      for (std::size_t i = 0; i + n_ <= cps; ++i) {
        add(offs[i], offs[i + n_]);
      }
    }
    normalise(out, dim_, r.key, "text whose n-gram counts cancel out");
  }

 private:
  std::size_t n_, dim_, seed_;
};

}  // namespace

std::vector<float> Embedder::embed(const ManifestRecord& record) const {
  std::vector<float> out(dim());
  embed(record, out.data());
  return out;
}

std::unique_ptr<Embedder> make_embedder(const std::string& spec, const EmbedderOptions& options) {
  if (auto made = make_registered_embedder(spec, options)) return made;
  WINNOW_THROW_IF_NOT(spec.rfind("torchscript", 0) != 0,
                      "embedder spec '{}': torchscript embedders need winnow built with LibTorch: "
                      "no TorchScript plugin was found (libwinnow_torchscript.so in lib/winnow/ "
                      "beside the program's bin/, or in $WINNOW_PLUGIN_DIR)",
                      spec);
  EmbedderSpec p(spec);
  if (p.name() == "provided") {
    const std::size_t dim = p.take_size("dim", options.input_dim);
    p.check_no_extra();
    return std::make_unique<ProvidedEmbedder>(dim);
  }
  if (p.name() == "pixels") {
    const std::size_t width = p.take_size("width", options.width);
    const std::size_t height = p.take_size("height", options.height);
    const std::size_t pool = p.take_size("pool", 1);
    const std::size_t fourier = p.take_size("fourier", 0);
    const std::size_t dim = p.take_size("dim", 0);
    const std::size_t seed = p.take_size("seed", 1);
    const std::size_t colour = p.take_size("colour", 0);
    p.check_no_extra();
    WINNOW_THROW_IF_NOT(colour <= 1, "embedder spec '{}': colour={} must be 0 or 1", spec, colour);
    return std::make_unique<PixelsEmbedder>(width, height, pool, fourier, dim, seed, colour == 1);
  }
  if (p.name() == "hashed-ngrams") {
    const std::size_t n = p.take_size("n", 3);
    const std::size_t dim = p.take_size("dim", 256);
    const std::size_t seed = p.take_size("seed", 0);
    p.check_no_extra();
    return std::make_unique<HashedNgramsEmbedder>(n, dim, seed);
  }
  WINNOW_THROW("embedder spec '{}': unknown embedder '{}' (provided, pixels, hashed-ngrams)", spec,
               p.name());
}

}  // namespace winnow::curation::embed
