#include "winnow/dataset/idx_reader.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>
#include <type_traits>

#include "winnow/error.h"

namespace winnow::dataset {

namespace {

constexpr std::uint32_t kImagesMagic = 0x00000803;
constexpr std::uint32_t kLabelsMagic = 0x00000801;

// Reads up to n bytes into out; returns the number read (short only at EOF).
using ReadFn = std::function<std::size_t(void* out, std::size_t n)>;

std::uint32_t read_u32(const ReadFn& read, const std::string& name, const char* what) {
  unsigned char b[4];
  const std::size_t got = read(b, 4);
  WINNOW_THROW_IF_NOT(got == 4, "IDX file '{}' is truncated: missing the {} field of the header",
                      name, what);
  return (std::uint32_t{b[0]} << 24) | (std::uint32_t{b[1]} << 16) | (std::uint32_t{b[2]} << 8) |
         std::uint32_t{b[3]};
}

void check_magic(std::uint32_t magic, std::uint32_t expected, const std::string& name,
                 const char* kind) {
  WINNOW_THROW_IF_NOT(magic == expected, "IDX file '{}' has magic 0x{:08x}, expected 0x{:08x} ({})",
                      name, magic, expected, kind);
}

// Reads n payload bytes. The buffer is not sized from the header up front:
// it grows by at most the bytes already read (1 MiB at first), so a
// truncated file declaring gigabytes costs at most twice the bytes it holds.
void read_payload(const ReadFn& read, std::vector<std::uint8_t>& out, std::size_t n,
                  const std::string& name) {
  constexpr std::size_t kFirstChunkBytes = std::size_t{1} << 20;
  out.clear();
  std::size_t done = 0;
  while (done < n) {
    const std::size_t want = std::min(n - done, std::max(done, kFirstChunkBytes));
    out.reserve(done + want);  // exact: no geometric over-allocation
    out.resize(done + want);
    const std::size_t got = read(out.data() + done, want);
    done += got;
    if (got < want) {  // readers return short only at the end of the data
      out.resize(done);
      break;
    }
  }
  WINNOW_THROW_IF_NOT(done == n, "IDX file '{}' is truncated: expected {} data bytes, got {}", name,
                      n, done);
  unsigned char extra;
  WINNOW_THROW_IF_NOT(read(&extra, 1) == 0,
                      "IDX file '{}' has trailing bytes after its {} data bytes", name, n);
}

IdxImages parse_images(const ReadFn& read, const std::string& name) {
  check_magic(read_u32(read, name, "magic"), kImagesMagic, name,
              "unsigned-byte images with 3 dimensions");
  IdxImages images;
  images.count = read_u32(read, name, "count");
  images.rows = read_u32(read, name, "rows");
  images.cols = read_u32(read, name, "cols");
  WINNOW_THROW_IF_NOT(images.count > 0 && images.rows > 0 && images.cols > 0,
                      "IDX file '{}' has a zero dimension ({} images of {} x {})", name,
                      images.count, images.rows, images.cols);
  WINNOW_THROW_IF_NOT(images.rows <= 65536 && images.cols <= 65536 &&
                          images.count * images.rows * images.cols <= kMaxIdxBytes,
                      "IDX file '{}' declares {} images of {} x {}, more than the {} byte limit",
                      name, images.count, images.rows, images.cols, kMaxIdxBytes);
  read_payload(read, images.pixels, images.count * images.rows * images.cols, name);
  return images;
}

std::vector<std::uint8_t> parse_labels(const ReadFn& read, const std::string& name) {
  check_magic(read_u32(read, name, "magic"), kLabelsMagic, name,
              "unsigned-byte labels with 1 dimension");
  const std::size_t count = read_u32(read, name, "count");
  WINNOW_THROW_IF_NOT(count > 0, "IDX file '{}' declares 0 labels", name);
  std::vector<std::uint8_t> labels;
  read_payload(read, labels, count, name);
  return labels;
}

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};
using GzPtr = std::unique_ptr<std::remove_pointer_t<gzFile>, GzCloser>;

GzPtr open_gz(const std::string& path) {
  GzPtr file(gzopen(path.c_str(), "rb"));
  WINNOW_THROW_IF_NOT(file != nullptr, "cannot open IDX file '{}': {}", path,
                      errno != 0 ? std::strerror(errno) : "out of memory");
  gzbuffer(file.get(), 1 << 17);
  return file;
}

ReadFn gz_reader(gzFile file, const std::string& path) {
  return [file, path](void* out, std::size_t n) -> std::size_t {
    std::size_t done = 0;
    while (done < n) {
      const unsigned chunk = static_cast<unsigned>(std::min<std::size_t>(n - done, 1u << 30));
      const int got = gzread(file, static_cast<char*>(out) + done, chunk);
      if (got < 0) {
        int err = 0;
        const char* msg = gzerror(file, &err);
        WINNOW_THROW("cannot read IDX file '{}': {}", path, msg != nullptr ? msg : "zlib error");
      }
      if (got == 0) {
        // gzread returns 0 at EOF, and also on a truncated gzip stream.
        int err = 0;
        const char* msg = gzerror(file, &err);
        WINNOW_THROW_IF_NOT(err == Z_OK || err == Z_BUF_ERROR, "cannot read IDX file '{}': {}",
                            path, msg != nullptr ? msg : "zlib error");
        WINNOW_THROW_IF_NOT(err != Z_BUF_ERROR,
                            "IDX file '{}' is truncated: the gzip stream ends early", path);
        break;
      }
      done += static_cast<std::size_t>(got);
    }
    return done;
  };
}

ReadFn memory_reader(std::string_view bytes) {
  auto pos = std::make_shared<std::size_t>(0);
  return [bytes, pos](void* out, std::size_t n) -> std::size_t {
    const std::size_t got = std::min(n, bytes.size() - *pos);
    std::memcpy(out, bytes.data() + *pos, got);
    *pos += got;
    return got;
  };
}

}  // namespace

IdxImages read_idx_images(const std::string& path) {
  GzPtr file = open_gz(path);
  return parse_images(gz_reader(file.get(), path), path);
}

std::vector<std::uint8_t> read_idx_labels(const std::string& path) {
  GzPtr file = open_gz(path);
  return parse_labels(gz_reader(file.get(), path), path);
}

IdxImages parse_idx_images(std::string_view bytes, const std::string& name) {
  return parse_images(memory_reader(bytes), name);
}

std::vector<std::uint8_t> parse_idx_labels(std::string_view bytes, const std::string& name) {
  return parse_labels(memory_reader(bytes), name);
}

}  // namespace winnow::dataset
