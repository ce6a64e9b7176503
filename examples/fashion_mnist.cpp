#include "fashion_mnist.h"

#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>

#include "winnow/error.h"

namespace winnow::examples {
namespace {

// gzread also reads plain (uncompressed) files, so both forms work.
class GzFile {
 public:
  explicit GzFile(const std::string& path) : path_(path), file_(gzopen(path.c_str(), "rb")) {
    WINNOW_THROW_IF_NOT(file_ != nullptr, "cannot open IDX file '{}'", path);
  }
  ~GzFile() {
    if (file_ != nullptr) gzclose(file_);
  }
  GzFile(const GzFile&) = delete;
  GzFile& operator=(const GzFile&) = delete;

  void read(void* out, std::size_t size, const char* what) {
    auto* p = static_cast<unsigned char*>(out);
    while (size > 0) {
      const unsigned chunk = size > (1u << 30) ? (1u << 30) : static_cast<unsigned>(size);
      const int got = gzread(file_, p, chunk);
      WINNOW_THROW_IF_NOT(got > 0, "IDX file '{}' ends inside the {} (truncated or corrupt)",
                          path_, what);
      p += got;
      size -= static_cast<std::size_t>(got);
    }
  }
  std::uint32_t big_endian_u32(const char* what) {
    unsigned char b[4];
    read(b, 4, what);
    return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
           std::uint32_t{b[3]};
  }

 private:
  std::string path_;
  gzFile file_;
};

std::string find_file(const std::string& dir, const std::string& stem) {
  for (const std::string& name : {stem, stem + ".gz"}) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    if (std::filesystem::exists(path)) return path;
  }
  WINNOW_THROW("Fashion-MNIST file '{}' (or '{}.gz') not found in '{}'; install Debian's "
               "dataset-fashion-mnist (scripts/install-deps) or set WINNOW_FASHION_MNIST_DIR",
               stem, stem, dir);
}

}  // namespace

std::string default_fashion_mnist_dir() {
  const char* env = std::getenv("WINNOW_FASHION_MNIST_DIR");
  return env != nullptr && *env != '\0' ? env : WINNOW_DEFAULT_FASHION_MNIST_DIR;
}

at::Tensor read_idx_images(const std::string& path) {
  GzFile file(path);
  const std::uint32_t magic = file.big_endian_u32("header");
  WINNOW_THROW_IF_NOT(magic == 0x00000803, "'{}' is not an IDX image file (magic {:#010x}, "
                      "expected 0x00000803)", path, magic);
  const std::uint32_t count = file.big_endian_u32("header");
  const std::uint32_t rows = file.big_endian_u32("header");
  const std::uint32_t cols = file.big_endian_u32("header");
  WINNOW_THROW_IF_NOT(rows > 0 && cols > 0 && rows <= 4096 && cols <= 4096 && count <= (1u << 28),
                      "IDX file '{}' declares implausible dimensions {} x {} x {}", path, count,
                      rows, cols);
  at::Tensor images = at::empty({count, rows, cols}, at::kByte);
  file.read(images.data_ptr<std::uint8_t>(), static_cast<std::size_t>(images.numel()), "pixels");
  return images;
}

at::Tensor read_idx_labels(const std::string& path) {
  GzFile file(path);
  const std::uint32_t magic = file.big_endian_u32("header");
  WINNOW_THROW_IF_NOT(magic == 0x00000801, "'{}' is not an IDX label file (magic {:#010x}, "
                      "expected 0x00000801)", path, magic);
  const std::uint32_t count = file.big_endian_u32("header");
  WINNOW_THROW_IF_NOT(count <= (1u << 28), "IDX file '{}' declares {} labels", path, count);
  at::Tensor labels = at::empty({count}, at::kByte);
  file.read(labels.data_ptr<std::uint8_t>(), count, "labels");
  return labels;
}

LabelledImages load_fashion_mnist(const std::string& dir, Split split, std::int64_t limit) {
  const std::string prefix = split == Split::Train ? "train" : "t10k";
  at::Tensor images = read_idx_images(find_file(dir, prefix + "-images-idx3-ubyte"));
  at::Tensor labels = read_idx_labels(find_file(dir, prefix + "-labels-idx1-ubyte"));
  WINNOW_THROW_IF_NOT(images.size(0) == labels.size(0),
                      "Fashion-MNIST {} split in '{}': {} images but {} labels", prefix, dir,
                      images.size(0), labels.size(0));
  if (limit > 0 && limit < images.size(0)) {
    images = images.narrow(0, 0, limit);
    labels = labels.narrow(0, 0, limit);
  }
  // Standardise with the training set's pixel mean and standard deviation.
  constexpr double kMean = 0.2860;
  constexpr double kStd = 0.3530;
  at::Tensor x = images.to(at::kFloat).div_(255.0).sub_(kMean).div_(kStd).unsqueeze(1);
  return LabelledImages{x.contiguous(), labels.to(at::kLong)};
}

}  // namespace winnow::examples
