// Little helpers to write plain values to a byte stream and read them back
// with bounds checks (private to winnow_index).
//
// Index files are written and read as streams, never as one buffer holding the
// whole file: at a million 128-d vectors an HNSW index is about 0.7 GB, and a
// serialised copy (or two, FAISS's buffer and ours) next to the index would
// double or triple the peak memory of every save and load.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "winnow/error.h"

namespace winnow::index::detail {

// Where encoded bytes go (a file, a buffer, a byte counter).
class ByteSink {
 public:
  virtual ~ByteSink() = default;
  virtual void write(const void* data, std::size_t size) = 0;
};

// A sink appending to a caller's buffer (small things: the file header).
class VectorSink final : public ByteSink {
 public:
  explicit VectorSink(std::vector<std::uint8_t>& out) : out_(out) {}
  void write(const void* data, std::size_t size) override {
    const auto* p = static_cast<const std::uint8_t*>(data);
    out_.insert(out_.end(), p, p + size);
  }

 private:
  std::vector<std::uint8_t>& out_;
};

template <typename T>
void append_pod(ByteSink& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  out.write(&value, sizeof(T));
}

inline void append_bytes(ByteSink& out, const void* data, std::size_t size) {
  out.write(data, size);
}

// Where a ByteReader's bytes come from (a file descriptor). read_some returns
// how many bytes it put into `dst` (at most `size`), 0 at the end.
class ByteSource {
 public:
  virtual ~ByteSource() = default;
  virtual std::size_t read_some(void* dst, std::size_t size) = 0;
};

// Reads `size` bytes from memory or from a ByteSource; every read past the end
// throws winnow::Error naming `what` (the file or section being decoded).
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}
  // The next `size` bytes of `source` (which must outlive the reader).
  ByteReader(ByteSource& source, std::size_t size, std::string what)
      : source_(&source), size_(size), what_(std::move(what)) {}

  template <typename T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    read_bytes(&value, sizeof(T), "value");
    return value;
  }

  // Copies the next `size` bytes into `dst` and advances past them.
  void read_bytes(void* dst, std::size_t size, const char* field) {
    WINNOW_THROW_IF_NOT(size <= size_ - pos_,
                        "{}: truncated while reading {} ({} bytes needed at offset {}, {} left)",
                        what_, field, size, pos_, size_ - pos_);
    if (source_ == nullptr) {
      if (size > 0) std::memcpy(dst, data_ + pos_, size);
      pos_ += size;
      return;
    }
    auto* out = static_cast<std::uint8_t*>(dst);
    std::size_t done = 0;
    while (done < size) {
      const std::size_t n = source_->read_some(out + done, size - done);
      WINNOW_THROW_IF_NOT(n > 0, "{}: truncated while reading {} ({} bytes needed at offset {})",
                          what_, field, size - done, pos_ + done);
      done += n;
    }
    pos_ += size;
  }

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return size_ - pos_; }
  const std::string& what() const { return what_; }

 private:
  const std::uint8_t* data_ = nullptr;
  ByteSource* source_ = nullptr;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace winnow::index::detail
