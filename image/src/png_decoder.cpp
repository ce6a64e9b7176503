// PNG through libspng: chunk sizes are capped (a hostile file cannot make it
// buffer gigabytes of text chunks), CRC errors are errors, every colour type
// and bit depth comes out as 8-bit RGBA with tRNS transparency applied.
#include <spng.h>

#include <memory>
#include <vector>

#include "format_decoders.h"
#include "winnow/error.h"

namespace winnow::image::detail {

namespace {

struct ContextFree {
  void operator()(spng_ctx* ctx) const { spng_ctx_free(ctx); }
};
using Context = std::unique_ptr<spng_ctx, ContextFree>;

// Ancillary chunks over 16 MiB, or 64 MiB of them in all, are refused.
constexpr std::size_t kMaxChunkBytes = std::size_t{16} << 20;
constexpr std::size_t kMaxChunkCacheBytes = std::size_t{64} << 20;

void check(int rc, const char* what) {
  WINNOW_THROW_IF_NOT_KIND(rc == 0, invalid_input, "corrupt or truncated PNG ({}): {}", what,
                           spng_strerror(rc));
}

Context open(const std::uint8_t* data, std::size_t size, spng_ihdr& ihdr) {
  Context ctx(spng_ctx_new(0));
  WINNOW_THROW_IF_NOT_KIND(ctx != nullptr, internal, "cannot start the PNG decoder");
  check(spng_set_chunk_limits(ctx.get(), kMaxChunkBytes, kMaxChunkCacheBytes), "limits");
  check(spng_set_png_buffer(ctx.get(), data, size), "buffer");
  check(spng_get_ihdr(ctx.get(), &ihdr), "header");
  return ctx;
}

}  // namespace

ImageHeader png_header(const std::uint8_t* data, std::size_t size) {
  spng_ihdr ihdr{};
  open(data, size, ihdr);
  return {ImageFormat::png, ihdr.width, ihdr.height};
}

Image decode_png(const std::uint8_t* data, std::size_t size) {
  spng_ihdr ihdr{};
  Context ctx = open(data, size, ihdr);
  std::size_t bytes = 0;
  check(spng_decoded_image_size(ctx.get(), SPNG_FMT_RGBA8, &bytes), "size");
  Image image;
  image.width = ihdr.width;
  image.height = ihdr.height;
  WINNOW_THROW_IF_NOT_KIND(bytes == image.width * image.height * 4, internal,
                           "PNG decoder: unexpected buffer size {}", bytes);
  std::vector<std::uint8_t> rgba(bytes);
  check(spng_decode_image(ctx.get(), rgba.data(), rgba.size(), SPNG_FMT_RGBA8, SPNG_DECODE_TRNS),
        "pixels");
  image.rgb.resize(image.width * image.height * 3);
  composite_on_white(rgba.data(), image.width * image.height, image.rgb.data());
  return image;
}

}  // namespace winnow::image::detail
