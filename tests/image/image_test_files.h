// Helpers for the image tests: fixture files, hand-built PNG headers and
// JPEG re-encoding (TurboJPEG's compressor, used only here).
#pragma once

#include <zlib.h>
#include <turbojpeg.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "winnow/image/image.h"

namespace winnow::image::test {

inline std::vector<std::uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline std::vector<std::uint8_t> fixture(const std::string& name) {
  return read_bytes(std::string(WINNOW_IMAGE_FIXTURES) + "/" + name);
}

inline void write_bytes(const std::string& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

// A PNG signature, an IHDR claiming width x height (8-bit RGBA), one tiny
// IDAT and IEND, with correct CRCs: a decompression bomb's header.
inline std::vector<std::uint8_t> png_claiming(std::uint32_t width, std::uint32_t height) {
  std::vector<std::uint8_t> out = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'};
  auto chunk = [&](const char* type, std::vector<std::uint8_t> data) {
    const auto n = static_cast<std::uint32_t>(data.size());
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(n >> s));
    std::vector<std::uint8_t> body(type, type + 4);
    body.insert(body.end(), data.begin(), data.end());
    out.insert(out.end(), body.begin(), body.end());
    const auto crc =
        static_cast<std::uint32_t>(crc32(0, body.data(), static_cast<uInt>(body.size())));
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(crc >> s));
  };
  std::vector<std::uint8_t> ihdr;
  for (std::uint32_t v : {width, height})
    for (int s = 24; s >= 0; s -= 8) ihdr.push_back(static_cast<std::uint8_t>(v >> s));
  ihdr.insert(ihdr.end(), {8, 6, 0, 0, 0});
  chunk("IHDR", ihdr);
  chunk("IDAT", {0x78, 0x9C, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01});
  chunk("IEND", {});
  return out;
}

// `image` as a JPEG of the given quality.
inline std::vector<std::uint8_t> encode_jpeg(const Image& image, int quality) {
  tjhandle handle = tjInitCompress();
  unsigned char* jpeg = nullptr;
  unsigned long size = 0;
  const int rc =
      tjCompress2(handle, image.rgb.data(), static_cast<int>(image.width), 0,
                  static_cast<int>(image.height), TJPF_RGB, &jpeg, &size, TJSAMP_420, quality, 0);
  std::vector<std::uint8_t> out;
  if (rc == 0) out.assign(jpeg, jpeg + size);
  tjFree(jpeg);
  tjDestroy(handle);
  return out;
}

}  // namespace winnow::image::test
