#include "winnow/index/vector_index_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include <faiss/Index.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>

#include "io/byte_io.h"
#include "io/payload_codec.h"
#include "io/replacement_file.h"
#include "winnow/error.h"
#include "winnow/index/vector_index_factory.h"

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "the winnow index file format is little-endian");

namespace winnow::index {
namespace {

constexpr char kMagic[8] = {'W', 'N', 'V', 'I', 'N', 'D', 'E', 'X'};
constexpr std::uint32_t kVersion = 1;
// magic, 4 x u32, 6 x u64 (fields before the config), u64 header checksum
constexpr std::size_t kFixedHeader = 8 + 4 * 4 + 6 * 8 + 8;
constexpr std::size_t kMaxConfig = 4096;

// 64-bit FNV-1a over 8-byte little-endian words, then the tail bytes; fed in
// pieces of any size, so that a file can be checked while it streams by.
class Checksum {
 public:
  void update(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
      return;  // an empty array's data() may be null, and memcpy from null is UB
    }
    if (pending_size_ > 0) {
      const std::size_t n = std::min(size, 8 - pending_size_);
      std::memcpy(pending_ + pending_size_, data, n);
      pending_size_ += n;
      data += n;
      size -= n;
      if (pending_size_ < 8) {
        return;
      }
      mix_word(pending_);
      pending_size_ = 0;
    }
    for (; size >= 8; data += 8, size -= 8) {
      mix_word(data);
    }
    std::memcpy(pending_, data, size);
    pending_size_ = size;
  }

  std::uint64_t value() const {
    std::uint64_t h = hash_;
    for (std::size_t i = 0; i < pending_size_; ++i) {
      h = (h ^ pending_[i]) * kPrime;
    }
    return h;
  }

 private:
  static constexpr std::uint64_t kPrime = 1099511628211ull;

  void mix_word(const std::uint8_t* bytes) {
    std::uint64_t word;
    std::memcpy(&word, bytes, 8);
    hash_ = (hash_ ^ word) * kPrime;
  }

  std::uint64_t hash_ = 14695981039346656037ull;
  std::uint8_t pending_[8] = {};
  std::size_t pending_size_ = 0;
};

std::uint64_t checksum(const std::uint8_t* data, std::size_t size) {
  Checksum c;
  c.update(data, size);
  return c.value();
}

std::string errno_text(int err) {
  return std::strerror(err);
}

void write_all(int fd, const std::uint8_t* data, std::size_t size, const std::string& path) {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    WINNOW_THROW_IF_NOT(n > 0, "cannot write vector index file '{}': {}", path, errno_text(errno));
    data += n;
    size -= static_cast<std::size_t>(n);
  }
}

// Buffered writes to a file descriptor, counting and checksumming the bytes.
class ChecksummedFileSink final : public detail::ByteSink {
 public:
  ChecksummedFileSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
    buffer_.reserve(kBufferSize);
  }

  void write(const void* data, std::size_t size) override {
    const auto* p = static_cast<const std::uint8_t*>(data);
    checksum_.update(p, size);
    bytes_ += size;
    if (buffer_.size() + size > kBufferSize) {
      flush();
    }
    if (size >= kBufferSize) {
      write_all(fd_, p, size, path_);  // big arrays (the vectors) go straight out
    } else {
      buffer_.insert(buffer_.end(), p, p + size);
    }
  }

  void flush() {
    write_all(fd_, buffer_.data(), buffer_.size(), path_);
    buffer_.clear();
  }

  std::uint64_t bytes() const { return bytes_; }
  std::uint64_t checksum() const { return checksum_.value(); }

 private:
  static constexpr std::size_t kBufferSize = 1 << 20;
  int fd_;
  std::string path_;
  std::vector<std::uint8_t> buffer_;
  Checksum checksum_;
  std::uint64_t bytes_ = 0;
};

// Reads of a file descriptor from its current offset.
class FileSource final : public detail::ByteSource {
 public:
  FileSource(int fd, std::string path) : fd_(fd), path_(std::move(path)) {}

  std::size_t read_some(void* dst, std::size_t size) override {
    for (;;) {
      const ssize_t n = ::read(fd_, dst, std::min<std::size_t>(size, 1 << 30));
      if (n < 0 && errno == EINTR) {
        continue;
      }
      WINNOW_THROW_IF_NOT(n >= 0, "cannot read vector index file '{}': {}", path_,
                          errno_text(errno));
      return static_cast<std::size_t>(n);
    }
  }

 private:
  int fd_;
  std::string path_;
};

// Closes a file descriptor when it goes out of scope.
struct FdCloser {
  int fd;
  ~FdCloser() { ::close(fd); }
};

// Opens the index file for reading: never through a link, and without
// blocking on a FIFO or a device planted at its path; anything but a regular
// file is refused (the caller rebuilds the index from the store).
int open_for_reading(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
  WINNOW_THROW_IF_NOT(fd >= 0, "cannot open vector index file '{}': {}", path, errno_text(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    WINNOW_THROW("vector index file '{}' is not a regular file", path);
  }
  return fd;
}

void seek_to(int fd, std::uint64_t offset, const std::string& what) {
  WINNOW_THROW_IF_NOT(
      ::lseek(fd, static_cast<off_t>(offset), SEEK_SET) == static_cast<off_t>(offset),
      "cannot seek in {}: {}", what, errno_text(errno));
}

// Up to `max_bytes` from the source's current position (fewer at the end).
std::vector<std::uint8_t> read_prefix(detail::ByteSource& source, std::size_t max_bytes) {
  std::vector<std::uint8_t> data(max_bytes);
  std::size_t size = 0;
  while (size < max_bytes) {
    const std::size_t n = source.read_some(data.data() + size, max_bytes - size);
    if (n == 0) {
      break;
    }
    size += n;
  }
  data.resize(size);
  return data;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

struct Header {
  VectorIndexFileInfo info;
  std::size_t header_size = 0;
  std::uint64_t payload_checksum = 0;
};

std::vector<std::uint8_t> encode_header(const VectorIndex& index, const IndexFingerprint& fp,
                                        std::uint64_t payload_size,
                                        std::uint64_t payload_checksum) {
  const std::string config = index.config();
  std::vector<std::uint8_t> out;
  detail::VectorSink sink(out);
  detail::append_bytes(sink, kMagic, sizeof(kMagic));
  detail::append_pod(sink, kVersion);
  detail::append_pod(sink, static_cast<std::uint32_t>(kFixedHeader + config.size()));
  detail::append_pod(sink, static_cast<std::uint32_t>(index.dim()));
  detail::append_pod(sink, static_cast<std::uint32_t>(config.size()));
  detail::append_pod(sink, static_cast<std::uint64_t>(index.size() + index.tombstones()));
  detail::append_pod(sink, static_cast<std::uint64_t>(index.size()));
  detail::append_pod(sink, fp.sample_count);
  detail::append_pod(sink, fp.last_sample_id);
  detail::append_pod(sink, payload_size);
  detail::append_pod(sink, payload_checksum);
  detail::append_bytes(sink, config.data(), config.size());
  const std::uint64_t header_checksum = checksum(out.data(), out.size());
  detail::append_pod(sink, header_checksum);
  return out;
}

// Decodes and verifies the header at the start of `data` (which may hold just
// the header or the whole file).
Header decode_header(const std::vector<std::uint8_t>& data, const std::string& path) {
  const std::string what = fmt::format("vector index file '{}'", path);
  detail::ByteReader in(data.data(), data.size(), what);
  WINNOW_THROW_IF_NOT(data.size() >= sizeof(kMagic) && std::memcmp(data.data(), kMagic, 8) == 0,
                      "{} is not a winnow vector index (bad magic; {} bytes)", what, data.size());
  char magic[sizeof(kMagic)];
  in.read_bytes(magic, sizeof(magic), "the magic");
  Header h;
  h.info.version = in.read<std::uint32_t>();
  WINNOW_THROW_IF_NOT(h.info.version == kVersion, "{} has format version {}, this build reads {}",
                      what, h.info.version, kVersion);
  h.header_size = in.read<std::uint32_t>();
  h.info.dim = in.read<std::uint32_t>();
  const auto config_size = in.read<std::uint32_t>();
  WINNOW_THROW_IF_NOT(config_size <= kMaxConfig && h.header_size == kFixedHeader + config_size,
                      "{} has an inconsistent header (config size {}, header size {})", what,
                      config_size, h.header_size);
  h.info.rows = in.read<std::uint64_t>();
  h.info.live = in.read<std::uint64_t>();
  h.info.fingerprint.sample_count = in.read<std::uint64_t>();
  h.info.fingerprint.last_sample_id = in.read<std::int64_t>();
  h.info.payload_size = in.read<std::uint64_t>();
  h.payload_checksum = in.read<std::uint64_t>();
  h.info.config.resize(config_size);
  in.read_bytes(h.info.config.data(), config_size, "the config string");
  const std::size_t checked = in.position();
  const auto stored = in.read<std::uint64_t>();
  WINNOW_THROW_IF_NOT(stored == checksum(data.data(), checked),
                      "{} has a corrupt header (checksum)", what);
  WINNOW_THROW_IF_NOT(h.info.live <= h.info.rows, "{} has {} live rows out of {}", what,
                      h.info.live, h.info.rows);
  return h;
}

// Whether two IVF configs make the same cells (cellScale and cellCap; nprobe
// and sharedScanFrom are search-time knobs).
bool same_cells(const IvfParams& a, const IvfParams& b) {
  return a.cell_scale == b.cell_scale && a.cell_cap == b.cell_cap;
}

// Whether a stored config builds the same structure as `wanted` (type and
// construction parameters; efSearch, nprobe and sharedScanFrom may differ).
bool same_structure(const std::string& stored, const VectorIndexConfig& wanted) {
  VectorIndexConfig parsed;
  try {
    parsed = parse_vector_index_config(stored);
  } catch (const Error&) {
    return false;
  }
  if (parsed.type != wanted.type) {
    return false;
  }
  switch (parsed.type) {
    case VectorIndexConfig::Type::flat:
      return true;
    case VectorIndexConfig::Type::hnsw:
      return parsed.hnsw.M == wanted.hnsw.M &&
             parsed.hnsw.ef_construction == wanted.hnsw.ef_construction;
    case VectorIndexConfig::Type::ivf:
      return same_cells(parsed.ivf, wanted.ivf);
    case VectorIndexConfig::Type::automatic:
      return parsed.automatic.switch_at == wanted.automatic.switch_at &&
             same_cells(parsed.automatic.ivf, wanted.automatic.ivf);
  }
  return false;
}

}  // namespace

namespace detail {

void PayloadCodec::write(const VectorIndex& index, ByteSink& out) {
  if (const auto* flat = dynamic_cast<const FlatVectorIndex*>(&index)) {
    write_flat(*flat, out);
  } else if (const auto* automatic = dynamic_cast<const AutoVectorIndex*>(&index)) {
    write_auto(*automatic, out);
  } else if (const auto* hnsw = dynamic_cast<const HnswVectorIndex*>(&index)) {
    write_hnsw(*hnsw, out);
  } else if (const auto* ivf = dynamic_cast<const IvfVectorIndex*>(&index)) {
    write_ivf(*ivf, out);
  } else {
    WINNOW_THROW("cannot save a vector index of type '{}': not a winnow index implementation",
                 index.type());
  }
}

std::unique_ptr<VectorIndex> PayloadCodec::read(const std::string& config, std::size_t dim,
                                                ByteReader& in) {
  VectorIndexConfig parsed;
  try {
    parsed = parse_vector_index_config(config);
  } catch (const Error& e) {
    WINNOW_THROW("{}: bad index config in header: {}", in.what(), e.what());
  }
  switch (parsed.type) {
    case VectorIndexConfig::Type::flat:
      return read_flat(dim, in);
    case VectorIndexConfig::Type::hnsw:
      return read_hnsw(parsed.hnsw, dim, in);
    case VectorIndexConfig::Type::ivf:
      return read_ivf(parsed.ivf, dim, in);
    case VectorIndexConfig::Type::automatic:
      return read_auto(parsed.automatic, dim, in);
  }
  WINNOW_THROW("{}: unknown index type in header", in.what());
}

namespace {

// faiss::IOWriter that only counts bytes: the FAISS data's size goes before
// the data, so write_faiss serialises twice, once to count.
struct CountingIOWriter : faiss::IOWriter {
  std::uint64_t bytes = 0;
  size_t operator()(const void*, size_t size, size_t nitems) override {
    bytes += static_cast<std::uint64_t>(size) * nitems;
    return nitems;
  }
};

struct SinkIOWriter : faiss::IOWriter {
  explicit SinkIOWriter(ByteSink& sink) : out(sink) {}
  size_t operator()(const void* ptr, size_t size, size_t nitems) override {
    out.write(ptr, size * nitems);
    return nitems;
  }
  ByteSink& out;
};

// faiss::IOReader over the next `left` bytes of a ByteReader; reading past
// them returns short, which FAISS reports as a read error.
struct ByteReaderIOReader : faiss::IOReader {
  ByteReaderIOReader(ByteReader& reader, std::uint64_t size) : in(reader), left(size) {}
  size_t operator()(void* ptr, size_t size, size_t nitems) override {
    if (size == 0) {
      return nitems;
    }
    const std::uint64_t available = std::min<std::uint64_t>(nitems, left / size);
    const auto bytes = static_cast<std::size_t>(available * size);
    in.read_bytes(ptr, bytes, "the FAISS data");
    left -= bytes;
    return static_cast<size_t>(available);
  }
  ByteReader& in;
  std::uint64_t left;
};

}  // namespace

void PayloadCodec::write_faiss(const faiss::Index& index, ByteSink& out) {
  try {
    CountingIOWriter counter;
    faiss::write_index(&index, &counter);
    append_pod(out, counter.bytes);
    SinkIOWriter writer(out);
    faiss::write_index(&index, &writer);
  } catch (const faiss::FaissException& e) {
    WINNOW_THROW("FAISS could not serialise the index: {}", e.what());
  }
}

std::unique_ptr<faiss::Index> PayloadCodec::read_faiss(ByteReader& in) {
  const auto size = in.read<std::uint64_t>();
  WINNOW_THROW_IF_NOT(size <= in.remaining(), "{}: FAISS data of {} bytes but only {} remain",
                      in.what(), size, in.remaining());
  ByteReaderIOReader reader(in, size);
  try {
    std::unique_ptr<faiss::Index> index(faiss::read_index(&reader));
    WINNOW_THROW_IF_NOT(reader.left == 0, "{}: FAISS data has {} unread trailing bytes", in.what(),
                        reader.left);
    return index;
  } catch (const faiss::FaissException& e) {
    WINNOW_THROW("{}: FAISS could not read the index data: {}", in.what(), e.what());
  } catch (const std::bad_alloc&) {
    WINNOW_THROW("{}: FAISS data asks for an impossible allocation (corrupt?)", in.what());
  } catch (const std::length_error& e) {
    WINNOW_THROW("{}: FAISS data is corrupt: {}", in.what(), e.what());
  }
}

}  // namespace detail

void save_vector_index(const VectorIndex& index, const std::string& path,
                       const IndexFingerprint& fingerprint) {
  WINNOW_THROW_IF_NOT(!path.empty(), "save_vector_index: empty path");
  // The payload streams into the file behind a placeholder header; the real
  // header (payload size and checksum) overwrites it once they are known.
  const std::vector<std::uint8_t> placeholder = encode_header(index, fingerprint, 0, 0);
  detail::ReplacementFile file(path);
  const int fd = file.fd();
  write_all(fd, placeholder.data(), placeholder.size(), file.name());
  ChecksummedFileSink payload(fd, file.name());
  detail::PayloadCodec::write(index, payload);
  payload.flush();
  const std::vector<std::uint8_t> header =
      encode_header(index, fingerprint, payload.bytes(), payload.checksum());
  WINNOW_THROW_IF_NOT(header.size() == placeholder.size() && ::lseek(fd, 0, SEEK_SET) == 0,
                      "cannot rewind '{}' to write the vector index header: {}", file.name(),
                      errno_text(errno));
  write_all(fd, header.data(), header.size(), file.name());
  file.commit(header.size() + payload.bytes());
}

VectorIndexFileInfo read_vector_index_info(const std::string& path) {
  WINNOW_THROW_IF_NOT(file_exists(path), "vector index file '{}' does not exist", path);
  const int fd = open_for_reading(path);
  const FdCloser closer{fd};
  FileSource source(fd, path);
  return decode_header(read_prefix(source, kFixedHeader + kMaxConfig), path).info;
}

// Reads the file twice without holding it in memory: once to verify the
// payload checksum (so that FAISS never parses corrupt data), once to decode.
LoadedVectorIndex load_vector_index(const std::string& path) {
  WINNOW_THROW_IF_NOT(file_exists(path), "vector index file '{}' does not exist", path);
  const int fd = open_for_reading(path);
  const FdCloser closer{fd};
  FileSource source(fd, path);
  const Header h = decode_header(read_prefix(source, kFixedHeader + kMaxConfig), path);
  const std::string what = fmt::format("vector index file '{}'", path);
  struct stat st {};
  WINNOW_THROW_IF_NOT(::fstat(fd, &st) == 0, "cannot stat {}: {}", what, errno_text(errno));
  const auto file_size = static_cast<std::uint64_t>(st.st_size);
  const std::uint64_t expected = h.header_size + h.info.payload_size;
  WINNOW_THROW_IF_NOT(file_size == expected,
                      "{} is {} bytes but its header says {} (truncated or appended to)", what,
                      file_size, expected);
  const auto payload_size = static_cast<std::size_t>(h.info.payload_size);

  seek_to(fd, h.header_size, what);
  {
    detail::ByteReader payload(source, payload_size, what);
    std::vector<std::uint8_t> buffer(std::min<std::size_t>(payload_size, 1 << 20));
    Checksum sum;
    while (payload.remaining() > 0) {
      const std::size_t n = std::min(buffer.size(), payload.remaining());
      payload.read_bytes(buffer.data(), n, "the payload");
      sum.update(buffer.data(), n);
    }
    WINNOW_THROW_IF_NOT(sum.value() == h.payload_checksum,
                        "{} is corrupt (payload checksum mismatch)", what);
  }

  seek_to(fd, h.header_size, what);
  detail::ByteReader in(source, payload_size, what);
  LoadedVectorIndex out;
  out.index = detail::PayloadCodec::read(h.info.config, h.info.dim, in);
  out.fingerprint = h.info.fingerprint;
  WINNOW_THROW_IF_NOT(in.remaining() == 0, "{} has {} unread bytes after the index data", what,
                      in.remaining());
  WINNOW_THROW_IF_NOT(out.index->size() == h.info.live &&
                          out.index->size() + out.index->tombstones() == h.info.rows,
                      "{}: header says {} live of {} rows, data holds {} live of {}", what,
                      h.info.live, h.info.rows, out.index->size(),
                      out.index->size() + out.index->tombstones());
  return out;
}

const char* to_string(RebuildReason reason) {
  switch (reason) {
    case RebuildReason::none:
      return "none";
    case RebuildReason::missing:
      return "missing";
    case RebuildReason::corrupt:
      return "corrupt";
    case RebuildReason::config_changed:
      return "config_changed";
    case RebuildReason::stale:
      return "stale";
    case RebuildReason::foreign:
      return "foreign";
  }
  return "unknown";
}

namespace {

// The index at `path` when the file exists, is intact, holds `wanted`'s
// structure with `dim` and, when `fingerprint` is given, carries it; else
// nothing, with the reason and its detail set in `result`.
std::unique_ptr<VectorIndex> load_if_usable(const std::string& path,
                                            const VectorIndexConfig& wanted, std::size_t dim,
                                            const IndexFingerprint* fingerprint,
                                            OpenResult& result) {
  if (!file_exists(path)) {
    result.reason = RebuildReason::missing;
    result.detail = fmt::format("vector index file '{}' does not exist", path);
    return nullptr;
  }
  try {
    const VectorIndexFileInfo info = read_vector_index_info(path);
    if (!same_structure(info.config, wanted) || info.dim != dim) {
      result.reason = RebuildReason::config_changed;
      result.detail = fmt::format("'{}' holds {} with dim {}, wanted {} with dim {}", path,
                                  info.config, info.dim, wanted.to_string(), dim);
      return nullptr;
    }
    if (fingerprint != nullptr && info.fingerprint != *fingerprint) {
      result.reason = RebuildReason::stale;
      result.detail = fmt::format(
          "'{}' was built from {} samples up to id {}, the store now has {} up to id {}", path,
          info.fingerprint.sample_count, info.fingerprint.last_sample_id, fingerprint->sample_count,
          fingerprint->last_sample_id);
      return nullptr;
    }
    std::unique_ptr<VectorIndex> index = load_vector_index(path).index;
    // efSearch, nprobe and sharedScanFrom are search-time knobs: take the
    // caller's without a rebuild.
    if (auto* hnsw = dynamic_cast<HnswVectorIndex*>(index.get())) {
      hnsw->set_ef_search(wanted.hnsw.ef_search);
    } else if (auto* ivf = dynamic_cast<IvfVectorIndex*>(index.get())) {
      ivf->set_search_params(wanted.ivf);
    } else if (auto* automatic = dynamic_cast<AutoVectorIndex*>(index.get())) {
      automatic->set_search_params(wanted.automatic);
    }
    return index;
  } catch (const Error& e) {
    result.reason = RebuildReason::corrupt;
    result.detail = e.what();
    return nullptr;
  }
}

// Builds `result.index` from `rebuild` and saves it to `path` (a failed save
// is reported in `result`, not thrown): with `fingerprint`, or its own.
void rebuild_and_save(const std::string& path, const VectorIndexConfig& wanted, std::size_t dim,
                      const RebuildSource& rebuild, const IndexFingerprint* fingerprint,
                      OpenResult& result) {
  std::unique_ptr<VectorIndex> index = make_vector_index(wanted, dim);
  VectorBatch batch;
  for (;;) {
    batch.ids.clear();
    batch.vectors.clear();
    if (!rebuild(batch)) {
      break;
    }
    index->add(batch.ids, batch.vectors);
  }
  result.index = std::move(index);
  result.rebuilt = true;
  try {
    const auto t0 = std::chrono::steady_clock::now();
    save_vector_index(*result.index, path,
                      fingerprint != nullptr ? *fingerprint : fingerprint_of(*result.index));
    result.save_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    result.saved = true;
  } catch (const Error& e) {
    result.save_error = e.what();
  }
}

}  // namespace

IndexFingerprint fingerprint_of(const VectorIndex& index) {
  IndexFingerprint fp;
  fp.sample_count = index.size();
  for (const std::int64_t id : index.ids()) fp.last_sample_id = std::max(fp.last_sample_id, id);
  return fp;
}

OpenResult open_or_rebuild(const std::string& path, const std::string& config, std::size_t dim,
                           const IndexFingerprint& fingerprint, const RebuildSource& rebuild) {
  const VectorIndexConfig wanted = parse_vector_index_config(config);
  WINNOW_THROW_IF_NOT(static_cast<bool>(rebuild), "open_or_rebuild('{}'): no rebuild source given",
                      path);
  OpenResult result;
  result.index = load_if_usable(path, wanted, dim, &fingerprint, result);
  if (!result.index) rebuild_and_save(path, wanted, dim, rebuild, &fingerprint, result);
  return result;
}

CaughtUpIndex open_or_catch_up(const std::string& path, const std::string& config, std::size_t dim,
                               const RebuildSource& rebuild, const CatchUp& catch_up) {
  const VectorIndexConfig wanted = parse_vector_index_config(config);
  WINNOW_THROW_IF_NOT(static_cast<bool>(rebuild) && static_cast<bool>(catch_up),
                      "open_or_catch_up('{}'): no rebuild or catch-up given", path);
  CaughtUpIndex out;
  out.open.index = load_if_usable(path, wanted, dim, nullptr, out.open);
  if (out.open.index) {
    out.counts = catch_up(*out.open.index);
    if (!out.counts.foreign.empty()) {
      out.open.index.reset();
      out.open.reason = RebuildReason::foreign;
      out.open.detail = std::move(out.counts.foreign);
      out.counts = {};
    }
  }
  if (!out.open.index) {
    rebuild_and_save(path, wanted, dim, rebuild, nullptr, out.open);
  }
  return out;
}

}  // namespace winnow::index
