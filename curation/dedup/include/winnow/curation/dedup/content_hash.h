// Content hashes for exact deduplication, and the 64-bit hash the text
// embedder and verifier use for n-grams.
//
// content hash = XXH3-128 (xxhash, seeded by content kind: file bytes 0,
// text 1, pixels 2, a decoded image file's pixels 3), written as 32 lowercase hex digits in
// xxhash's canonical (big-endian) byte order. The seed keeps a text and a pixel array with the same
// bytes apart; a file and a text with the same bytes also hash differently.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/curation/core/regular_file.h"

namespace winnow::curation::dedup {

// Hex XXH3-128 of `size` bytes with the seed of `kind`.
std::string content_hash(ContentKind kind, const void* data, std::size_t size);

// Hex XXH3-128 of a file's bytes (seed of ContentKind::path), read in
// chunks. The file is opened as a RegularFile under `limits`; throws
// winnow::Error naming the path when it cannot be opened or read.
std::string file_content_hash(const std::string& path, const FileLimits& limits = {});

// content_hash of the record's content (text, pixels or the resolved file);
// for a record without content (kind none), "annotations:" and a hash of its
// key, which no content's hash equals. Throws winnow::Error as file_content_hash does.
std::string record_content_hash(const ManifestRecord& record, const FileLimits& limits = {});

// The content hash of a decoded image file: its width and height (8 bytes
// each, little-endian) and RGB pixels, seed 3. The same picture saved twice
// with other bytes (metadata, compression level) hashes the same.
std::string decoded_image_hash(std::size_t width, std::size_t height,
                               const std::vector<std::uint8_t>& rgb);

// XXH3-64 of `data` with `seed`.
std::uint64_t hash64(std::string_view data, std::uint64_t seed = 0);

}  // namespace winnow::curation::dedup
