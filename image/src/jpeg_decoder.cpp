// JPEG through libjpeg-turbo's TurboJPEG API: scaled decoding in the DCT
// domain (1/2, 1/4, 1/8) when the caller needs fewer pixels, and warnings
// (a truncated file, corrupt data) stop the decode instead of leaving grey
// rows (TJFLAG_STOPONWARNING). A progressive JPEG of more than 500 scans is
// refused (TJFLAG_LIMITSCANS): each scan is a pass over the whole image, so
// a small file of thousands of scans would hold a decoder for minutes.
#include <turbojpeg.h>

#include <memory>

#include "format_decoders.h"
#include "winnow/error.h"

namespace winnow::image::detail {

namespace {

struct HandleFree {
  void operator()(void* handle) const { tjDestroy(handle); }
};
using Handle = std::unique_ptr<void, HandleFree>;

Handle open_decompressor() {
  Handle handle(tjInitDecompress());
  WINNOW_THROW_IF_NOT_KIND(handle != nullptr, internal, "cannot start the JPEG decoder: {}",
                           tjGetErrorStr2(nullptr));
  return handle;
}

struct JpegInfo {
  int width = 0;
  int height = 0;
  int colourspace = 0;
};

JpegInfo read_info(void* handle, const std::uint8_t* data, std::size_t size) {
  JpegInfo info;
  int subsampling = 0;
  if (tjDecompressHeader3(handle, data, static_cast<unsigned long>(size), &info.width, &info.height,
                          &subsampling, &info.colourspace) != 0) {
    WINNOW_THROW_KIND(invalid_input, "unreadable JPEG header: {}", tjGetErrorStr2(handle));
  }
  return info;
}

// The smallest libjpeg-turbo scale that keeps both sides at least the wanted size.
tjscalingfactor pick_scale(const JpegInfo& info, const DecodeOptions& options) {
  tjscalingfactor best{1, 1};
  if (options.min_width == 0 || options.min_height == 0) return best;
  int count = 0;
  const tjscalingfactor* factors = tjGetScalingFactors(&count);
  for (int i = 0; factors != nullptr && i < count; ++i) {
    const tjscalingfactor f = factors[i];
    if (f.num > f.denom) continue;  // never enlarge
    const auto w = static_cast<std::size_t>(TJSCALED(info.width, f));
    const auto h = static_cast<std::size_t>(TJSCALED(info.height, f));
    if (w >= options.min_width && h >= options.min_height &&
        f.num * best.denom < best.num * f.denom) {
      best = f;
    }
  }
  return best;
}

}  // namespace

ImageHeader jpeg_header(const std::uint8_t* data, std::size_t size) {
  Handle handle = open_decompressor();
  const JpegInfo info = read_info(handle.get(), data, size);
  return {ImageFormat::jpeg, static_cast<std::size_t>(info.width),
          static_cast<std::size_t>(info.height)};
}

Image decode_jpeg(const std::uint8_t* data, std::size_t size, const DecodeOptions& options) {
  Handle handle = open_decompressor();
  const JpegInfo info = read_info(handle.get(), data, size);
  const tjscalingfactor scale = pick_scale(info, options);
  Image image;
  image.width = static_cast<std::size_t>(TJSCALED(info.width, scale));
  image.height = static_cast<std::size_t>(TJSCALED(info.height, scale));
  // CMYK cannot be converted to RGB by libjpeg: take CMYK and convert here.
  const bool cmyk = info.colourspace == TJCS_CMYK || info.colourspace == TJCS_YCCK;
  const int channels = cmyk ? 4 : 3;
  std::vector<std::uint8_t> buffer(image.width * image.height * channels);
  if (tjDecompress2(handle.get(), data, static_cast<unsigned long>(size), buffer.data(),
                    static_cast<int>(image.width), 0, static_cast<int>(image.height),
                    cmyk ? TJPF_CMYK : TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    WINNOW_THROW_KIND(invalid_input, "corrupt or truncated JPEG: {}", tjGetErrorStr2(handle.get()));
  }
  if (!cmyk) {
    image.rgb = std::move(buffer);
    return image;
  }
  // Adobe's CMYK JPEGs store inverted values: channel = 255 - ink.
  image.rgb.resize(image.width * image.height * 3);
  for (std::size_t i = 0; i < image.width * image.height; ++i) {
    const unsigned k = buffer[4 * i + 3];
    for (int c = 0; c < 3; ++c) {
      image.rgb[3 * i + c] = static_cast<std::uint8_t>((buffer[4 * i + c] * k + 127u) / 255u);
    }
  }
  return image;
}

}  // namespace winnow::image::detail
