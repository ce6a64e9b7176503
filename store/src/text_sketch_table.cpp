#include "winnow/store/text_sketch_table.h"

#include <cstring>
#include <limits>
#include <string>
#include <string_view>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

// Where each part of a packed sketch starts: the sample id, the size, the
// bits; each number in the machine's byte order (as the embeddings' floats:
// little-endian where winnow builds).
constexpr std::size_t kSizeAt = sizeof(std::int64_t);
constexpr std::size_t kBitsAt = kSizeAt + sizeof(std::uint32_t);
static_assert(TextSketchTable::kPackedBytes == kBitsAt + sizeof(std::array<std::uint64_t, 2>));

// What a user can do about a damaged row: the sketches are a cache of what
// the texts say, so ingest only reads more texts without them.
constexpr const char* kCacheHint =
    " (the table only spares reading texts: `DELETE FROM text_sketches` is safe)";

// A row's checksum, after its sketches: 64-bit FNV-1a of the shingle length
// and the packed sketches. It finds damage (a zeroed filter would rule near
// duplicates out unread); it is no seal against whoever can write the file.
constexpr std::size_t kChecksumBytes = sizeof(std::uint64_t);

std::uint64_t row_checksum(std::int64_t shingle, std::string_view packed) {
  std::uint64_t h = 14695981039346656037ull;
  const auto mix = [&h](const char* bytes, std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(bytes[i]);
      h *= 1099511628211ull;
    }
  };
  mix(reinterpret_cast<const char*>(&shingle), sizeof(shingle));
  mix(packed.data(), packed.size());
  return h;
}

}  // namespace

void TextSketchTable::add(std::int64_t shingle, const std::vector<StoredTextSketch>& sketches) {
  if (sketches.empty()) return;
  WINNOW_THROW_IF_NOT(shingle > 0, "{}: text sketches of sample {} and on have shingle {}",
                      db_.path(), sketches.front().sample_id, shingle);
  std::string packed(sketches.size() * kPackedBytes, '\0');
  char* at = packed.data();
  for (const StoredTextSketch& sketch : sketches) {
    WINNOW_THROW_IF_NOT(sketch.sample_id >= 1 && sketch.size >= 0 &&
                            sketch.size < std::numeric_limits<std::uint32_t>::max(),
                        "{}: text sketch of sample {} has size {}", db_.path(), sketch.sample_id,
                        sketch.size);
    WINNOW_THROW_IF_NOT(sketch.size == 0 || sketch.bits[0] != 0 || sketch.bits[1] != 0,
                        "{}: text sketch of sample {} has {} shingles and an empty filter",
                        db_.path(), sketch.sample_id, sketch.size);
    const auto size = static_cast<std::uint32_t>(sketch.size);
    std::memcpy(at, &sketch.sample_id, sizeof(sketch.sample_id));
    std::memcpy(at + kSizeAt, &size, sizeof(size));
    std::memcpy(at + kBitsAt, sketch.bits.data(), sizeof(sketch.bits));
    at += kPackedBytes;
  }
  Statement& insert = db_.cached("INSERT INTO text_sketches(shingle, sketches) VALUES (?1, ?2)");
  const std::uint64_t checksum = row_checksum(shingle, packed);
  packed.append(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
  insert.bind_all(shingle, BlobView{packed.data(), packed.size()});
  insert.run();
}

void TextSketchTable::for_each(std::int64_t shingle,
                               const std::function<void(const StoredTextSketch&)>& visit) {
  // A sketch names a stored sample: a larger id means a damaged row (whose
  // reader would size its tables by it).
  std::int64_t last_sample = 0;
  {
    StatementScope last(db_.cached("SELECT coalesce(max(id), 0) FROM samples"));
    last->bind_all();
    WINNOW_THROW_IF_NOT(last->step(), "{}: max(id) of samples returned no row", db_.path());
    last_sample = last->column_int64(0);
  }
  StatementScope query(
      db_.cached("SELECT id, sketches FROM text_sketches WHERE shingle = ?1 ORDER BY id"));
  query->bind_all(shingle);
  StoredTextSketch sketch;
  while (query->step()) {
    const std::int64_t row = query->column_int64(0);
    std::string_view packed = query->column_blob(1);
    // Rows written since the checksum came end with it; older ones hold
    // whole sketches only (28k bytes against 28k + 8: never both).
    if (packed.size() % kPackedBytes == kChecksumBytes) {
      std::uint64_t stored = 0;
      std::memcpy(&stored, packed.data() + packed.size() - kChecksumBytes, kChecksumBytes);
      packed.remove_suffix(kChecksumBytes);
      WINNOW_THROW_IF_NOT_KIND(stored == row_checksum(shingle, packed), corrupt,
                               "{}: text_sketches row {} does not match its checksum{}", db_.path(),
                               row, kCacheHint);
    }
    WINNOW_THROW_IF_NOT(packed.size() % kPackedBytes == 0,
                        "{}: text_sketches row {} has {} bytes, not a whole number of sketches "
                        "of {} bytes{}",
                        db_.path(), row, packed.size(), kPackedBytes, kCacheHint);
    for (const char* at = packed.data(); at != packed.data() + packed.size(); at += kPackedBytes) {
      std::uint32_t size = 0;
      std::memcpy(&sketch.sample_id, at, sizeof(sketch.sample_id));
      std::memcpy(&size, at + kSizeAt, sizeof(size));
      std::memcpy(sketch.bits.data(), at + kBitsAt, sizeof(sketch.bits));
      WINNOW_THROW_IF_NOT(sketch.sample_id >= 1 && sketch.sample_id <= last_sample,
                          "{}: text_sketches row {} holds sample id {}, not a stored sample's{}",
                          db_.path(), row, sketch.sample_id, kCacheHint);
      // A set of shingles sets at least one bit: an empty filter is damage
      // (in a row from before the checksum too).
      WINNOW_THROW_IF_NOT_KIND(size == 0 || sketch.bits[0] != 0 || sketch.bits[1] != 0, corrupt,
                               "{}: text_sketches row {} holds an empty filter for sample {} of "
                               "{} shingles{}",
                               db_.path(), row, sketch.sample_id, size, kCacheHint);
      sketch.size = size;
      visit(sketch);
    }
  }
}

}  // namespace winnow::store
