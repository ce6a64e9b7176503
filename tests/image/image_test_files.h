// Helpers for the image tests: fixture files, hand-built PNG headers and
// JPEG re-encoding (TurboJPEG's compressor, used only here).
#pragma once

#include <zlib.h>
#include <turbojpeg.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
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

// Up to `n` regular (not linked) PNG files under 200 kB of the clip-art set
// (Debian's openclipart-png) in one folder, in name order.
inline std::vector<std::filesystem::path> clip_art(std::size_t n,
                                                   const std::string& folder = "animals") {
  namespace fs = std::filesystem;
  const fs::path root = fs::path("/usr/share/openclipart/png") / folder;
  std::vector<fs::path> files;
  if (!fs::is_directory(root)) return files;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && !entry.is_symlink() && entry.path().extension() == ".png" &&
        entry.file_size() < 200000) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  if (files.size() > n) files.resize(n);
  return files;
}

// Every channel value v of `image` as f(v), rounded and clamped.
template <typename F>
Image mapped(Image image, F f) {
  for (std::uint8_t& v : image.rgb) {
    v = static_cast<std::uint8_t>(std::clamp(std::lround(f(double(v))), 0L, 255L));
  }
  return image;
}

// `keep` of each pixel's colour kept around its luma (0: grey).
inline Image desaturated(Image image, double keep) {
  for (std::size_t i = 0; i + 2 < image.rgb.size(); i += 3) {
    const double luma = 0.299 * image.rgb[i] + 0.587 * image.rgb[i + 1] + 0.114 * image.rgb[i + 2];
    for (std::size_t c = 0; c < 3; ++c) {
      const double v = luma + keep * (image.rgb[i + c] - luma);
      image.rgb[i + c] = static_cast<std::uint8_t>(std::clamp(std::lround(v), 0L, 255L));
    }
  }
  return image;
}

// Three box blurs of radius r along each axis (close to a Gaussian of sigma r).
inline Image blurred(const Image& image, std::size_t r) {
  Image out = image;
  const long w = static_cast<long>(image.width), h = static_cast<long>(image.height);
  for (int pass = 0; pass < 6; ++pass) {
    const bool horizontal = pass % 2 == 0;
    const Image in = out;
    for (long y = 0; y < h; ++y) {
      for (long x = 0; x < w; ++x) {
        for (long c = 0; c < 3; ++c) {
          double sum = 0;
          int n = 0;
          for (long d = -static_cast<long>(r); d <= static_cast<long>(r); ++d) {
            const long xx = horizontal ? x + d : x, yy = horizontal ? y : y + d;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
            sum += in.rgb[static_cast<std::size_t>(3 * (yy * w + xx) + c)];
            ++n;
          }
          out.rgb[static_cast<std::size_t>(3 * (y * w + x) + c)] =
              static_cast<std::uint8_t>(std::lround(sum / n));
        }
      }
    }
  }
  return out;
}

}  // namespace winnow::image::test
