// Little helpers to append plain values to a byte buffer and read them back
// with bounds checks (private to winnow_index).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "winnow/error.h"

namespace winnow::index::detail {

template <typename T>
void append_pod(std::vector<std::uint8_t>& out, const T& value) {
  static_assert(std::is_trivially_copyable_v<T>);
  const auto* p = reinterpret_cast<const std::uint8_t*>(&value);
  out.insert(out.end(), p, p + sizeof(T));
}

inline void append_bytes(std::vector<std::uint8_t>& out, const void* data, std::size_t size) {
  const auto* p = static_cast<const std::uint8_t*>(data);
  out.insert(out.end(), p, p + size);
}

// Reads from [data, data + size); every read past the end throws winnow::Error
// naming `what` (the file or section being decoded).
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size, std::string what)
      : data_(data), size_(size), what_(std::move(what)) {}

  template <typename T>
  T read() {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T), "value"), sizeof(T));
    return value;
  }

  // Returns a pointer to the next `size` bytes and advances past them.
  const std::uint8_t* take(std::size_t size, const char* field) {
    WINNOW_THROW_IF_NOT(size <= size_ - pos_,
                        "{}: truncated while reading {} ({} bytes needed at offset {}, {} left)",
                        what_, field, size, pos_, size_ - pos_);
    const std::uint8_t* p = data_ + pos_;
    pos_ += size;
    return p;
  }

  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return size_ - pos_; }
  const std::string& what() const { return what_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace winnow::index::detail
