#include "winnow/index/vector_index_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>

#include <faiss/Index.h>
#include <faiss/impl/FaissException.h>
#include <faiss/impl/io.h>
#include <faiss/index_io.h>

#include "byte_io.h"
#include "payload_codec.h"
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

// 64-bit FNV-1a over 8-byte little-endian words, then the tail bytes.
std::uint64_t checksum(const std::uint8_t* data, std::size_t size) {
  constexpr std::uint64_t kPrime = 1099511628211ull;
  std::uint64_t h = 14695981039346656037ull;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + i, 8);
    h = (h ^ word) * kPrime;
  }
  for (; i < size; ++i) {
    h = (h ^ data[i]) * kPrime;
  }
  return h;
}

std::string errno_text(int err) { return std::strerror(err); }

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

std::string parent_directory(const std::string& path) {
  const std::size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) {
    return ".";
  }
  return slash == 0 ? "/" : path.substr(0, slash);
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

std::vector<std::uint8_t> read_file(const std::string& path, std::size_t max_bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  WINNOW_THROW_IF_NOT(fd >= 0, "cannot open vector index file '{}': {}", path, errno_text(errno));
  std::vector<std::uint8_t> data;
  struct stat st {};
  if (::fstat(fd, &st) == 0 && st.st_size > 0) {
    data.reserve(std::min(max_bytes, static_cast<std::size_t>(st.st_size)));
  }
  std::uint8_t buffer[1 << 16];
  while (data.size() < max_bytes) {
    const ssize_t n = ::read(fd, buffer, std::min(sizeof(buffer), max_bytes - data.size()));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      const int err = errno;
      if (n < 0) {
        ::close(fd);
        WINNOW_THROW("cannot read vector index file '{}': {}", path, errno_text(err));
      }
      break;
    }
    data.insert(data.end(), buffer, buffer + n);
  }
  ::close(fd);
  return data;
}

struct Header {
  VectorIndexFileInfo info;
  std::size_t header_size = 0;
  std::uint64_t payload_checksum = 0;
};

std::vector<std::uint8_t> encode_header(const VectorIndex& index, const IndexFingerprint& fp,
                                        std::uint64_t payload_size, std::uint64_t payload_checksum) {
  const std::string config = index.config();
  std::vector<std::uint8_t> out;
  detail::append_bytes(out, kMagic, sizeof(kMagic));
  detail::append_pod(out, kVersion);
  detail::append_pod(out, static_cast<std::uint32_t>(kFixedHeader + config.size()));
  detail::append_pod(out, static_cast<std::uint32_t>(index.dim()));
  detail::append_pod(out, static_cast<std::uint32_t>(config.size()));
  detail::append_pod(out, static_cast<std::uint64_t>(index.size() + index.tombstones()));
  detail::append_pod(out, static_cast<std::uint64_t>(index.size()));
  detail::append_pod(out, fp.sample_count);
  detail::append_pod(out, fp.last_sample_id);
  detail::append_pod(out, payload_size);
  detail::append_pod(out, payload_checksum);
  detail::append_bytes(out, config.data(), config.size());
  detail::append_pod(out, checksum(out.data(), out.size()));
  return out;
}

// Decodes and verifies the header at the start of `data` (which may hold just
// the header or the whole file).
Header decode_header(const std::vector<std::uint8_t>& data, const std::string& path) {
  const std::string what = fmt::format("vector index file '{}'", path);
  detail::ByteReader in(data.data(), data.size(), what);
  WINNOW_THROW_IF_NOT(data.size() >= sizeof(kMagic) && std::memcmp(data.data(), kMagic, 8) == 0,
                      "{} is not a winnow vector index (bad magic; {} bytes)", what, data.size());
  in.take(sizeof(kMagic), "the magic");
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
  const std::uint8_t* config = in.take(config_size, "the config string");
  h.info.config.assign(reinterpret_cast<const char*>(config), config_size);
  const std::size_t checked = in.position();
  const auto stored = in.read<std::uint64_t>();
  WINNOW_THROW_IF_NOT(stored == checksum(data.data(), checked), "{} has a corrupt header (checksum)",
                      what);
  WINNOW_THROW_IF_NOT(h.info.live <= h.info.rows, "{} has {} live rows out of {}", what, h.info.live,
                      h.info.rows);
  return h;
}

// Whether a stored config builds the same structure as `wanted` (type and
// construction parameters; efSearch may differ).
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
  return parsed.type == VectorIndexConfig::Type::flat ||
         (parsed.hnsw.M == wanted.hnsw.M &&
          parsed.hnsw.ef_construction == wanted.hnsw.ef_construction);
}

}  // namespace

namespace detail {

void PayloadCodec::write(const VectorIndex& index, std::vector<std::uint8_t>& out) {
  if (const auto* flat = dynamic_cast<const FlatVectorIndex*>(&index)) {
    write_flat(*flat, out);
  } else if (const auto* hnsw = dynamic_cast<const HnswVectorIndex*>(&index)) {
    write_hnsw(*hnsw, out);
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
  if (parsed.type == VectorIndexConfig::Type::flat) {
    return read_flat(dim, in);
  }
  return read_hnsw(parsed.hnsw, dim, in);
}

void PayloadCodec::write_faiss(const faiss::Index& index, std::vector<std::uint8_t>& out) {
  faiss::VectorIOWriter writer;
  try {
    faiss::write_index(&index, &writer);
  } catch (const faiss::FaissException& e) {
    WINNOW_THROW("FAISS could not serialise the index: {}", e.what());
  }
  append_pod(out, static_cast<std::uint64_t>(writer.data.size()));
  append_bytes(out, writer.data.data(), writer.data.size());
}

std::unique_ptr<faiss::Index> PayloadCodec::read_faiss(ByteReader& in) {
  const auto size = in.read<std::uint64_t>();
  WINNOW_THROW_IF_NOT(size <= in.remaining(), "{}: FAISS data of {} bytes but only {} remain",
                      in.what(), size, in.remaining());
  const std::uint8_t* data = in.take(static_cast<std::size_t>(size), "the FAISS data");
  faiss::VectorIOReader reader;
  reader.data.assign(data, data + size);
  try {
    std::unique_ptr<faiss::Index> index(faiss::read_index(&reader));
    WINNOW_THROW_IF_NOT(reader.rp == reader.data.size(),
                        "{}: FAISS data has {} unread trailing bytes", in.what(),
                        reader.data.size() - reader.rp);
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
  std::vector<std::uint8_t> payload;
  detail::PayloadCodec::write(index, payload);
  const std::vector<std::uint8_t> header =
      encode_header(index, fingerprint, payload.size(), checksum(payload.data(), payload.size()));

  static std::atomic<unsigned> counter{0};
  const std::string tmp =
      fmt::format("{}.tmp.{}.{}", path, static_cast<long>(::getpid()), counter.fetch_add(1));
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  WINNOW_THROW_IF_NOT(fd >= 0, "cannot create temporary file '{}' for vector index '{}': {}", tmp,
                      path, errno_text(errno));
  try {
    write_all(fd, header.data(), header.size(), tmp);
    write_all(fd, payload.data(), payload.size(), tmp);
    WINNOW_THROW_IF_NOT(::fsync(fd) == 0, "cannot fsync '{}': {}", tmp, errno_text(errno));
    const int rc = ::close(fd);
    WINNOW_THROW_IF_NOT(rc == 0, "cannot close '{}': {}", tmp, errno_text(errno));
  } catch (...) {
    ::close(fd);
    ::unlink(tmp.c_str());
    throw;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    WINNOW_THROW("cannot rename '{}' to vector index file '{}': {}", tmp, path, errno_text(err));
  }
  // Make the rename itself durable.
  const std::string dir = parent_directory(path);
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

VectorIndexFileInfo read_vector_index_info(const std::string& path) {
  WINNOW_THROW_IF_NOT(file_exists(path), "vector index file '{}' does not exist", path);
  const std::vector<std::uint8_t> data = read_file(path, kFixedHeader + kMaxConfig);
  return decode_header(data, path).info;
}

LoadedVectorIndex load_vector_index(const std::string& path) {
  WINNOW_THROW_IF_NOT(file_exists(path), "vector index file '{}' does not exist", path);
  const std::vector<std::uint8_t> data = read_file(path, static_cast<std::size_t>(-1));
  const Header h = decode_header(data, path);
  const std::string what = fmt::format("vector index file '{}'", path);
  const std::uint64_t expected = h.header_size + h.info.payload_size;
  WINNOW_THROW_IF_NOT(data.size() == expected,
                      "{} is {} bytes but its header says {} (truncated or appended to)", what,
                      data.size(), expected);
  const std::uint8_t* payload = data.data() + h.header_size;
  const auto payload_size = static_cast<std::size_t>(h.info.payload_size);
  WINNOW_THROW_IF_NOT(checksum(payload, payload_size) == h.payload_checksum,
                      "{} is corrupt (payload checksum mismatch)", what);

  detail::ByteReader in(payload, payload_size, what);
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
  }
  return "unknown";
}

OpenResult open_or_rebuild(const std::string& path, const std::string& config, std::size_t dim,
                           const IndexFingerprint& fingerprint, const RebuildSource& rebuild) {
  const VectorIndexConfig wanted = parse_vector_index_config(config);
  const std::string wanted_config = wanted.to_string();
  WINNOW_THROW_IF_NOT(static_cast<bool>(rebuild), "open_or_rebuild('{}'): no rebuild source given",
                      path);

  OpenResult result;
  if (!file_exists(path)) {
    result.reason = RebuildReason::missing;
    result.detail = fmt::format("vector index file '{}' does not exist", path);
  } else {
    try {
      const VectorIndexFileInfo info = read_vector_index_info(path);
      if (!same_structure(info.config, wanted) || info.dim != dim) {
        result.reason = RebuildReason::config_changed;
        result.detail = fmt::format("'{}' holds {} with dim {}, wanted {} with dim {}", path,
                                    info.config, info.dim, wanted_config, dim);
      } else if (info.fingerprint != fingerprint) {
        result.reason = RebuildReason::stale;
        result.detail = fmt::format(
            "'{}' was built from {} samples up to id {}, the store now has {} up to id {}", path,
            info.fingerprint.sample_count, info.fingerprint.last_sample_id,
            fingerprint.sample_count, fingerprint.last_sample_id);
      } else {
        result.index = load_vector_index(path).index;
        // efSearch is a search-time knob: take the caller's without a rebuild.
        if (auto* hnsw = dynamic_cast<HnswVectorIndex*>(result.index.get())) {
          hnsw->set_ef_search(wanted.hnsw.ef_search);
        }
        return result;
      }
    } catch (const Error& e) {
      result.reason = RebuildReason::corrupt;
      result.detail = e.what();
    }
  }

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
    save_vector_index(*result.index, path, fingerprint);
    result.saved = true;
  } catch (const Error& e) {
    result.save_error = e.what();
  }
  return result;
}

}  // namespace winnow::index
