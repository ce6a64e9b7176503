// Progressive JPEGs with a chosen scan script, written with libjpeg's own API
// (TurboJPEG cannot set one): the decoder's scan limit is tested with them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>  // jpeglib.h needs FILE
#include <cstdlib>
#include <vector>

#include <jpeglib.h>

namespace winnow::image::test {

// A grey `side` x `side` progressive JPEG. many_scans: every DCT coefficient
// in a band of its own, refined one bit at a time (704 scans); else libjpeg's
// usual progression (a handful of scans).
inline std::vector<std::uint8_t> progressive_jpeg(int side, bool many_scans) {
  jpeg_compress_struct cinfo{};
  jpeg_error_mgr jerr{};
  cinfo.err = jpeg_std_error(&jerr);
  jpeg_create_compress(&cinfo);
  unsigned char* out = nullptr;
  unsigned long size = 0;
  jpeg_mem_dest(&cinfo, &out, &size);
  cinfo.image_width = static_cast<JDIMENSION>(side);
  cinfo.image_height = static_cast<JDIMENSION>(side);
  cinfo.input_components = 1;
  cinfo.in_color_space = JCS_GRAYSCALE;
  jpeg_set_defaults(&cinfo);
  std::vector<jpeg_scan_info> scans;
  constexpr int kFinest = 10;  // libjpeg's largest point transform for 8-bit samples
  auto add_band = [&](int ss, int se) {
    scans.push_back({1, {0, 0, 0, 0}, ss, se, 0, kFinest});
    for (int a = kFinest; a > 0; --a) scans.push_back({1, {0, 0, 0, 0}, ss, se, a, a - 1});
  };
  if (many_scans) {
    add_band(0, 0);
    for (int c = 1; c < 64; ++c) add_band(c, c);
    cinfo.scan_info = scans.data();
    cinfo.num_scans = static_cast<int>(scans.size());
  } else {
    jpeg_simple_progression(&cinfo);
  }
  jpeg_start_compress(&cinfo, TRUE);
  std::vector<JSAMPLE> row(static_cast<std::size_t>(side));
  while (cinfo.next_scanline < cinfo.image_height) {
    for (int x = 0; x < side; ++x) {
      row[static_cast<std::size_t>(x)] =
          static_cast<JSAMPLE>((x * 7 + static_cast<int>(cinfo.next_scanline) * 13) % 256);
    }
    JSAMPROW rows[1] = {row.data()};
    jpeg_write_scanlines(&cinfo, rows, 1);
  }
  jpeg_finish_compress(&cinfo);
  std::vector<std::uint8_t> bytes(out, out + size);
  std::free(out);
  jpeg_destroy_compress(&cinfo);
  return bytes;
}

// The number of scans in a JPEG: its start-of-scan markers.
inline std::size_t jpeg_scans(const std::vector<std::uint8_t>& bytes) {
  std::size_t scans = 0;
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == 0xDA) ++scans;
  }
  return scans;
}

}  // namespace winnow::image::test
