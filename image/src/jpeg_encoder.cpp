#include "winnow/image/image_encoder.h"

#include <memory>

#include <turbojpeg.h>

#include "winnow/error.h"

namespace winnow::image {

std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality) {
  WINNOW_THROW_IF_NOT(
      image.width > 0 && image.height > 0 && image.rgb.size() == image.width * image.height * 3,
      "cannot encode an empty or inconsistent image as JPEG ({} x {})", image.width, image.height);
  WINNOW_THROW_IF_NOT(quality >= 1 && quality <= 100, "JPEG quality {} is not in 1..100", quality);
  const std::unique_ptr<void, int (*)(tjhandle)> handle(tjInitCompress(), &tjDestroy);
  WINNOW_THROW_IF_NOT(handle != nullptr, "libjpeg-turbo: cannot start a compressor");
  unsigned char* out = nullptr;
  unsigned long size = 0;  // NOLINT(google-runtime-int): the library's type
  const int rc = tjCompress2(handle.get(), image.rgb.data(), static_cast<int>(image.width), 0,
                             static_cast<int>(image.height), TJPF_RGB, &out, &size, TJSAMP_420,
                             quality, TJFLAG_FASTDCT);
  const std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(out, &tjFree);
  WINNOW_THROW_IF_NOT(rc == 0, "libjpeg-turbo: cannot encode a {} x {} image: {}", image.width,
                      image.height, tjGetErrorStr2(handle.get()));
  return {out, out + size};
}

}  // namespace winnow::image
