// bench_image_quality: what measuring image quality adds to decoding an image
// file as ingest does (JPEGs at a DCT scale of at least 224 px, then the
// 28 x 28 grey working image). Per file, both steps are timed over
// --repeat rounds on one core; prints JSON with the mean microseconds per
// image of each step and their ratio (docs/benchmarks.md, "Image
// decoding").
#include <chrono>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "winnow/image/image_decoder.h"
#include "winnow/image/image_quality.h"
#include "winnow/image/image_resize.h"

int main(int argc, char** argv) {
  CLI::App app("time decoding + working image against the image-quality scores");
  std::vector<std::string> files;
  int repeat = 5;
  app.add_option("files", files, "image files")->required();
  app.add_option("--repeat", repeat, "rounds over all files")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  std::vector<std::vector<std::uint8_t>> bytes;
  for (const std::string& f : files) {
    std::ifstream in(f, std::ios::binary);
    bytes.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  using clock = std::chrono::steady_clock;
  double decode_s = 0.0, quality_s = 0.0, checksum = 0.0;
  std::size_t images = 0;
  winnow::image::DecodeOptions options;
  options.min_width = options.min_height = 8 * 28;  // as ingest with the default embedder
  for (int r = 0; r < repeat; ++r) {
    for (const auto& b : bytes) {
      const auto t0 = clock::now();
      const winnow::image::Image image = winnow::image::decode_image(b.data(), b.size(), options);
      const std::vector<std::uint8_t> grey = winnow::image::grey_thumbnail(image, 28, 28);
      const auto t1 = clock::now();
      const winnow::image::ImageQualityScores s = winnow::image::measure_image_quality(image);
      const auto t2 = clock::now();
      decode_s += std::chrono::duration<double>(t1 - t0).count();
      quality_s += std::chrono::duration<double>(t2 - t1).count();
      checksum += s.blurry + grey[0];
      ++images;
    }
  }
  std::cout << nlohmann::json{{"files", files.size()},
                              {"images_timed", images},
                              {"decode_and_working_image_us", 1e6 * decode_s / images},
                              {"quality_scores_us", 1e6 * quality_s / images},
                              {"added_share", quality_s / decode_s},
                              {"checksum", checksum}}
                   .dump()
            << "\n";
  return 0;
}
