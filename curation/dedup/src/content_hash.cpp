#include "winnow/curation/dedup/content_hash.h"

#include <memory>
#include <vector>

// Header-only xxhash: no link dependency for installed consumers. GCC 12
// reports false -Warray-bounds positives inside its inlined update loop.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "winnow/error.h"

namespace winnow::curation::dedup {

namespace {

std::uint64_t seed_of(ContentKind kind) {
  switch (kind) {
    case ContentKind::path:
      return 0;
    case ContentKind::text:
      return 1;
    case ContentKind::pixels:
      return 2;
    case ContentKind::none:
      return 4;  // 3 is decoded_image_hash's
  }
  return 0;
}

std::string to_hex(const XXH128_hash_t& hash) {
  XXH128_canonical_t canonical;
  XXH128_canonicalFromHash(&canonical, hash);
  static const char* digits = "0123456789abcdef";
  std::string out(32, '0');
  for (std::size_t i = 0; i < 16; ++i) {
    out[2 * i] = digits[canonical.digest[i] >> 4];
    out[2 * i + 1] = digits[canonical.digest[i] & 0xF];
  }
  return out;
}

struct StateFree {
  void operator()(XXH3_state_t* s) const { XXH3_freeState(s); }
};

}  // namespace

std::string content_hash(ContentKind kind, const void* data, std::size_t size) {
  return to_hex(XXH3_128bits_withSeed(data, size, seed_of(kind)));
}

std::string decoded_image_hash(std::size_t width, std::size_t height,
                               const std::vector<std::uint8_t>& rgb) {
  constexpr std::uint64_t kDecodedImageSeed = 3;
  std::vector<std::uint8_t> bytes;
  bytes.reserve(16 + rgb.size());
  for (const std::uint64_t v : {std::uint64_t{width}, std::uint64_t{height}}) {
    for (int i = 0; i < 8; ++i) bytes.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  bytes.insert(bytes.end(), rgb.begin(), rgb.end());
  return to_hex(XXH3_128bits_withSeed(bytes.data(), bytes.size(), kDecodedImageSeed));
}

std::string file_content_hash(const std::string& path, const FileLimits& limits) {
  RegularFile file(path, limits);
  std::unique_ptr<XXH3_state_t, StateFree> state(XXH3_createState());
  WINNOW_THROW_IF_NOT_KIND(state != nullptr, internal, "cannot hash file '{}': out of memory",
                           path);
  XXH3_128bits_reset_withSeed(state.get(), seed_of(ContentKind::path));
  std::vector<unsigned char> buffer(1 << 16);
  while (const std::size_t n = file.read(buffer.data(), buffer.size())) {
    XXH3_128bits_update(state.get(), buffer.data(), n);
  }
  return to_hex(XXH3_128bits_digest(state.get()));
}

std::string record_content_hash(const ManifestRecord& record, const FileLimits& limits) {
  switch (record.kind) {
    case ContentKind::path:
      return file_content_hash(record.resolved_path.empty() ? record.path : record.resolved_path,
                               limits);
    case ContentKind::text:
      return content_hash(ContentKind::text, record.text.data(), record.text.size());
    case ContentKind::pixels:
      return content_hash(ContentKind::pixels, record.pixels.data(), record.pixels.size());
    case ContentKind::none:
      // No content to compare: a hash of the key, marked so that it never
      // equals a content's hash (exact dedup does not apply).
      return "annotations:" + content_hash(ContentKind::none, record.key.data(), record.key.size());
  }
  return {};
}

std::uint64_t hash64(std::string_view data, std::uint64_t seed) {
  return XXH3_64bits_withSeed(data.data(), data.size(), seed);
}

}  // namespace winnow::curation::dedup

#pragma GCC diagnostic pop
