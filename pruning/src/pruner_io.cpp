#include "winnow/pruning/pruner_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <type_traits>

// Header-only xxhash: no link dependency for installed consumers. GCC 12
// reports false -Warray-bounds positives inside its inlined update loop.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Warray-bounds"
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "winnow/error.h"
#include "winnow/file_sync.h"

namespace winnow {
namespace {

constexpr char kMagic[4] = {'W', 'N', 'P', 'R'};
constexpr std::uint32_t kVersion = 3;
// A policy keeps at most this many values per sample (repb: 2) plus a few.
constexpr std::uint64_t kMaxPolicyStatePerSample = 4;
// epoch, kind, planned, forward, full forward, candidates.
constexpr std::uint64_t kHistoryRecordSize = 8 + 1 + 8 + 8 + 8 + 8;

// Writes little-endian PODs and keeps a running checksum of every byte.
class Writer {
 public:
  explicit Writer(std::ostream& out) : out_(out) { XXH64_reset(&hash_, 0); }
  void bytes(const void* data, std::size_t size) {
    XXH64_update(&hash_, data, size);
    out_.write(static_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  template <typename T>
  void pod(T value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes(&value, sizeof(T));
  }
  template <typename T>
  void vec(const std::vector<T>& v) {
    pod<std::uint64_t>(v.size());
    bytes(v.data(), v.size() * sizeof(T));
  }
  void str(const std::string& s) {
    pod<std::uint64_t>(s.size());
    bytes(s.data(), s.size());
  }
  void checksum() {
    const std::uint64_t digest = XXH64_digest(&hash_);
    out_.write(reinterpret_cast<const char*>(&digest), sizeof(digest));
  }

 private:
  std::ostream& out_;
  XXH64_state_t hash_;
};

// Reads the payload of a stream whose checksum was already verified. Every
// length is checked against the payload bytes actually left before anything
// is allocated from it, so no edited field can ask for more memory than the
// file holds.
class Reader {
 public:
  Reader(std::istream& in, std::uint64_t payload_size, const std::string& source)
      : in_(in), left_(payload_size), source_(source) {}
  void bytes(void* data, std::size_t size, const char* what) {
    WINNOW_THROW_IF_NOT_KIND(size <= left_, corrupt,
                             "pruner state '{}': file ends inside {} (truncated?)", source_, what);
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
    WINNOW_THROW_IF_NOT_KIND(static_cast<std::size_t>(in_.gcount()) == size, corrupt,
                             "pruner state '{}': file ends inside {} (truncated?)", source_, what);
    left_ -= size;
  }
  template <typename T>
  T pod(const char* what) {
    T value;
    bytes(&value, sizeof(T), what);
    return value;
  }
  // Throws unless `count` records of `record_size` bytes fit in what is left.
  void check_fits(std::uint64_t count, std::uint64_t record_size, const char* what) {
    WINNOW_THROW_IF_NOT_KIND(count <= left_ / record_size, corrupt,
                             "pruner state '{}': {} claims {} entries of {} bytes, but only {} "
                             "bytes are left in the file (corrupted length field?)",
                             source_, what, count, record_size, left_);
  }
  template <typename T>
  std::vector<T> vec(const char* what, std::uint64_t max_size) {
    const auto size = pod<std::uint64_t>(what);
    WINNOW_THROW_IF_NOT_KIND(size <= max_size, corrupt,
                             "pruner state '{}': {} holds {} entries, at most {} expected "
                             "(corrupted file?)",
                             source_, what, size, max_size);
    check_fits(size, sizeof(T), what);
    std::vector<T> v(size);
    bytes(v.data(), size * sizeof(T), what);
    return v;
  }
  std::string str(const char* what) {
    const auto size = pod<std::uint64_t>(what);
    WINNOW_THROW_IF_NOT_KIND(size <= 4096, corrupt,
                             "pruner state '{}': {} is {} bytes long (corrupted file?)", source_,
                             what, size);
    check_fits(size, 1, what);
    std::string s(size, '\0');
    bytes(s.data(), size, what);
    return s;
  }
  std::uint64_t left() const { return left_; }

 private:
  std::istream& in_;
  std::uint64_t left_;
  std::string source_;
};

// Bytes from the current position to the end of a seekable stream; the
// position is left unchanged.
std::uint64_t bytes_to_end(std::istream& in, const std::string& source) {
  const std::istream::pos_type start = in.tellg();
  in.seekg(0, std::ios::end);
  const std::istream::pos_type end = in.tellg();
  in.seekg(start);
  WINNOW_THROW_IF_NOT_KIND(
      start != std::istream::pos_type(-1) && end != std::istream::pos_type(-1) && in.good(), io,
      "pruner state '{}': cannot determine the stream's size", source);
  return static_cast<std::uint64_t>(end - start);
}

// Hashes the `payload_size` bytes from the current position and compares
// them with the stored checksum that follows; rewinds to where it started.
void verify_checksum(std::istream& in, std::uint64_t payload_size, const std::string& source) {
  const std::istream::pos_type start = in.tellg();
  XXH64_state_t hash;
  XXH64_reset(&hash, 0);
  std::vector<char> chunk(std::min<std::uint64_t>(payload_size, std::uint64_t{1} << 20));
  for (std::uint64_t left = payload_size; left > 0;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(left, chunk.size()));
    in.read(chunk.data(), static_cast<std::streamsize>(n));
    WINNOW_THROW_IF_NOT_KIND(static_cast<std::size_t>(in.gcount()) == n, io,
                             "pruner state '{}': read failed", source);
    XXH64_update(&hash, chunk.data(), n);
    left -= n;
  }
  std::uint64_t stored = 0;
  in.read(reinterpret_cast<char*>(&stored), sizeof(stored));
  WINNOW_THROW_IF_NOT_KIND(static_cast<std::size_t>(in.gcount()) == sizeof(stored), io,
                           "pruner state '{}': read failed", source);
  WINNOW_THROW_IF_NOT_KIND(stored == XXH64_digest(&hash), corrupt,
                           "pruner state '{}': checksum mismatch, the file is corrupted or "
                           "truncated",
                           source);
  in.seekg(start);
  WINNOW_THROW_IF_NOT_KIND(in.good(), io, "pruner state '{}': cannot rewind the stream", source);
}

PlanKind checked_kind(std::uint8_t raw, const std::string& source) {
  WINNOW_THROW_IF_NOT_KIND(raw <= static_cast<std::uint8_t>(PlanKind::Annealing), corrupt,
                           "pruner state '{}': unknown plan kind {}", source, raw);
  return static_cast<PlanKind>(raw);
}

// A state file's fields as read, before they are handed to a pruner.
struct SavedPruner {
  PrunerOptions options;
  std::uint64_t epoch = 0;
  bool plan_built = false;
  bool epoch_finished = false;
  std::uint64_t cursor = 0;
  std::uint64_t steps_served = 0;
  EpochPlan plan;
  std::vector<EpochStats> history;
  std::vector<float> scores;
  std::vector<float> policy_state;
};

// Checks the magic number and the checksum of a seekable stream; returns the
// payload size (all bytes before the checksum) with the stream back at the
// magic number.
std::uint64_t verified_payload_size(std::istream& in, const std::string& source) {
  const std::uint64_t size = bytes_to_end(in, source);
  constexpr std::uint64_t kChecksumSize = sizeof(std::uint64_t);
  char magic[sizeof(kMagic)] = {};
  in.read(magic, sizeof(magic));
  WINNOW_THROW_IF_NOT_KIND(static_cast<std::size_t>(in.gcount()) == sizeof(magic), corrupt,
                           "pruner state '{}': file ends inside the magic number (truncated?)",
                           source);
  WINNOW_THROW_IF_NOT(std::memcmp(magic, kMagic, sizeof(kMagic)) == 0,
                      "'{}' is not a winnow pruner state file (bad magic)", source);
  WINNOW_THROW_IF_NOT_KIND(size >= sizeof(kMagic) + sizeof(std::uint32_t) + kChecksumSize, corrupt,
                           "pruner state '{}': file of {} bytes is too short (truncated?)", source,
                           size);
  in.seekg(-static_cast<std::streamoff>(sizeof(magic)), std::ios::cur);
  // Nothing in the file is trusted before its checksum matches.
  verify_checksum(in, size - kChecksumSize, source);
  return size - kChecksumSize;
}

// The magic number (already checked) and the format version.
std::uint32_t read_version(Reader& r, const std::string& source) {
  char magic[sizeof(kMagic)] = {};
  r.bytes(magic, sizeof(magic), "the magic number");
  const auto version = r.pod<std::uint32_t>("the version");
  WINNOW_THROW_IF_NOT(version >= 1 && version <= kVersion,
                      "pruner state '{}': format version {} is not supported (this build reads 1 "
                      "to {})",
                      source, version, kVersion);
  return version;
}

PrunerOptions read_options(Reader& r, std::uint32_t version, const std::string& source) {
  PrunerOptions o;
  o.num_samples = r.pod<std::uint64_t>("num_samples");
  o.num_epochs = r.pod<std::uint64_t>("num_epochs");
  o.seed = r.pod<std::uint64_t>("seed");
  o.initial_score = r.pod<float>("initial_score");
  o.step_budget = r.pod<std::uint64_t>("step_budget");
  o.batch_size = r.pod<std::uint64_t>("batch_size");
  if (version >= 2) {
    o.world_size = r.pod<std::uint64_t>("world_size");
    o.rank = r.pod<std::uint64_t>("rank");
    WINNOW_THROW_IF_NOT_KIND(o.world_size >= 1 && o.rank < o.world_size, corrupt,
                             "pruner state '{}': implausible rank {} of world_size {} (corrupted "
                             "file?)",
                             source, o.rank, o.world_size);
  }
  if (version >= 3) {
    const auto flags = r.pod<std::uint8_t>("the option flags");
    WINNOW_THROW_IF_NOT_KIND(flags <= 1, corrupt, "pruner state '{}': unknown option flags {}",
                             source, flags);
    o.allow_negative_losses = (flags & 1) != 0;
  }
  o.policy = r.str("the policy spec");
  WINNOW_THROW_IF_NOT_KIND(o.num_samples > 0 && o.num_samples <= (std::uint64_t{1} << 56), corrupt,
                           "pruner state '{}': implausible num_samples {} (corrupted file?)",
                           source, o.num_samples);
  return o;
}

EpochPlan read_plan(Reader& r, std::uint64_t n, const std::string& source) {
  EpochPlan plan;
  plan.num_samples = n;
  plan.epoch = r.pod<std::uint64_t>("plan epoch");
  plan.kind = checked_kind(r.pod<std::uint8_t>("plan kind"), source);
  plan.candidates = r.pod<std::uint64_t>("plan candidates");
  plan.ids = r.vec<std::uint64_t>("plan ids", n);
  plan.weight_codes = r.vec<std::uint8_t>("plan weight codes", n);
  plan.palette = r.vec<float>("plan palette", 256);
  return plan;
}

std::vector<EpochStats> read_history(Reader& r, const std::string& source) {
  const auto history_size = r.pod<std::uint64_t>("history size");
  WINNOW_THROW_IF_NOT_KIND(history_size <= (std::uint64_t{1} << 32), corrupt,
                           "pruner state '{}': implausible history size {}", source, history_size);
  r.check_fits(history_size, kHistoryRecordSize, "the history");
  std::vector<EpochStats> history(history_size);
  for (EpochStats& e : history) {
    e.epoch = r.pod<std::uint64_t>("history");
    e.kind = checked_kind(r.pod<std::uint8_t>("history"), source);
    e.planned_samples = r.pod<std::uint64_t>("history");
    e.forward_samples = r.pod<std::uint64_t>("history");
    e.full_forward_samples = r.pod<std::uint64_t>("history");
    e.candidates = r.pod<std::uint64_t>("history");
  }
  return history;
}

// Reads the whole payload, in file order, to its last byte.
SavedPruner read_saved_pruner(Reader& r, const std::string& source) {
  SavedPruner saved;
  const std::uint32_t version = read_version(r, source);
  saved.options = read_options(r, version, source);
  const std::uint64_t n = saved.options.num_samples;
  saved.epoch = r.pod<std::uint64_t>("epoch");
  saved.plan_built = r.pod<std::uint8_t>("plan flag") != 0;
  saved.epoch_finished = r.pod<std::uint8_t>("epoch flag") != 0;
  saved.cursor = r.pod<std::uint64_t>("cursor");
  saved.steps_served = r.pod<std::uint64_t>("steps served");
  saved.plan = read_plan(r, n, source);
  saved.history = read_history(r, source);
  saved.scores = r.vec<float>("scores", n);
  saved.policy_state = r.vec<float>("policy state", kMaxPolicyStatePerSample * n + 64);
  WINNOW_THROW_IF_NOT_KIND(r.left() == 0, corrupt,
                           "pruner state '{}': {} unexpected bytes after the state", source,
                           r.left());
  return saved;
}

// The file is intact; checks that its parts fit together.
void check_consistent(const SavedPruner& saved, const std::string& source) {
  const std::uint64_t n = saved.options.num_samples;
  const EpochPlan& plan = saved.plan;
  WINNOW_THROW_IF_NOT_KIND(saved.scores.size() == n, corrupt,
                           "pruner state '{}': {} scores for {} samples", source,
                           saved.scores.size(), n);
  WINNOW_THROW_IF_NOT_KIND(!plan.palette.empty() && plan.palette[0] == 1.0f, corrupt,
                           "pruner state '{}': bad weight palette", source);
  WINNOW_THROW_IF_NOT_KIND(plan.weight_codes.empty() || plan.weight_codes.size() == plan.ids.size(),
                           corrupt, "pruner state '{}': {} weight codes for {} plan entries",
                           source, plan.weight_codes.size(), plan.ids.size());
  for (std::uint64_t id : plan.ids) {
    WINNOW_THROW_IF_NOT_KIND(id < n, corrupt, "pruner state '{}': plan id {} out of range", source,
                             id);
  }
  for (std::uint8_t code : plan.weight_codes) {
    WINNOW_THROW_IF_NOT_KIND(code < plan.palette.size(), corrupt,
                             "pruner state '{}': bad weight code {}", source, code);
  }
  WINNOW_THROW_IF_NOT_KIND(saved.cursor <= plan.ids.size(), corrupt,
                           "pruner state '{}': position {} beyond plan of {}", source, saved.cursor,
                           plan.ids.size());
}

}  // namespace

void write_pruner(const DynamicPruner& p, std::ostream& out) {
  Writer w(out);
  w.bytes(kMagic, sizeof(kMagic));
  w.pod(kVersion);
  const PrunerOptions& o = p.options_;
  w.pod(o.num_samples);
  w.pod(o.num_epochs);
  w.pod(o.seed);
  w.pod(o.initial_score);
  w.pod(o.step_budget);
  w.pod(o.batch_size);
  w.pod(o.world_size);
  w.pod(o.rank);
  w.pod<std::uint8_t>(o.allow_negative_losses ? 1 : 0);  // option flags (version 3)
  w.str(p.policy_spec());

  w.pod(p.epoch_);
  w.pod<std::uint8_t>(p.plan_built_ ? 1 : 0);
  w.pod<std::uint8_t>(p.epoch_finished_ ? 1 : 0);
  w.pod(p.cursor_);
  w.pod(p.steps_served_);

  // Without a built plan, the plan's buffers hold nothing worth keeping.
  static const EpochPlan kNoPlan;
  const EpochPlan& plan = p.plan_built_ ? p.plan_ : kNoPlan;
  w.pod(plan.epoch);
  w.pod(static_cast<std::uint8_t>(plan.kind));
  w.pod(plan.candidates);
  w.vec(plan.ids);
  w.vec(plan.weight_codes);
  w.vec(plan.palette);

  w.pod<std::uint64_t>(p.history_.size());
  for (const EpochStats& e : p.history_) {
    w.pod(e.epoch);
    w.pod(static_cast<std::uint8_t>(e.kind));
    w.pod(e.planned_samples);
    w.pod(e.forward_samples);
    w.pod(e.full_forward_samples);
    w.pod(e.candidates);
  }

  const std::vector<float> scores(p.scores_.data(), p.scores_.data() + p.scores_.size());
  w.vec(scores);
  w.vec(p.policy_->state());
  w.checksum();
  WINNOW_THROW_IF_NOT_KIND(out.good(), io, "pruner state: write failed");
}

DynamicPruner read_pruner(std::istream& in, const std::string& source) {
  if (in.tellg() == std::istream::pos_type(-1)) {
    // Not seekable (a pipe): the checksum is verified in a first pass, so
    // buffer the stream.
    std::ostringstream all;
    all << in.rdbuf();
    std::istringstream copy(all.str());
    return read_pruner(copy, source);
  }
  Reader r(in, verified_payload_size(in, source), source);
  SavedPruner saved = read_saved_pruner(r, source);
  check_consistent(saved, source);

  try {
    DynamicPruner pruner(saved.options);
    pruner.assign_scores(saved.scores.data(), saved.scores.size());
    pruner.policy_->set_state(saved.policy_state);
    pruner.epoch_ = saved.epoch;
    pruner.plan_built_ = saved.plan_built;
    pruner.epoch_finished_ = saved.epoch_finished;
    pruner.cursor_ = saved.cursor;
    pruner.steps_served_ = saved.steps_served;
    pruner.history_ = std::move(saved.history);
    if (saved.plan_built) pruner.weights_.assign(saved.plan);
    pruner.plan_ = std::move(saved.plan);
    if (saved.plan_built) pruner.build_shard();
    WINNOW_THROW_IF_NOT(!saved.plan_built || saved.cursor <= pruner.shard_size(),
                        "position {} beyond this rank's shard of {}", saved.cursor,
                        pruner.shard_size());
    pruner.plan_generation_ = saved.plan_built ? 1 : 0;
    return pruner;
  } catch (const Error& e) {
    // An intact file whose content the pruner refuses (options, policy state).
    WINNOW_THROW_KIND(corrupt, "pruner state '{}': {}", source, e.what());
  }
}

namespace {

// fsyncs `path` (a file or a directory) and checks the result.
void sync_to_disk(const std::string& path, int flags, const char* what, const std::string& target) {
  const int error = fsync_path(path.c_str(), flags);
  // EINVAL: the file system cannot sync this kind of file (some refuse
  // directories); there is nothing more to do.
  WINNOW_THROW_IF_NOT_KIND(error == 0 || error == EINVAL, io,
                           "cannot save pruner state '{}': syncing {} '{}' failed: {}", target,
                           what, path, std::strerror(error));
}

// Removes the temporary file unless it was moved into place.
struct TempFile {
  std::string path;
  bool moved = false;
  ~TempFile() {
    if (!moved) std::remove(path.c_str());
  }
};

}  // namespace

void save_pruner(const DynamicPruner& pruner, const std::string& path) {
  static std::atomic<std::uint64_t> counter{0};
  TempFile temp{fmt::format("{}.tmp.{}.{}", path, ::getpid(), counter++)};
  {
    std::ofstream out(temp.path, std::ios::binary | std::ios::trunc);
    WINNOW_THROW_IF_NOT_KIND(out.is_open(), io,
                             "cannot save pruner state '{}': cannot create '{}': {}", path,
                             temp.path, std::strerror(errno));
    write_pruner(pruner, out);
    out.close();
    WINNOW_THROW_IF_NOT_KIND(!out.fail(), io, "cannot save pruner state '{}': writing '{}' failed",
                             path, temp.path);
  }
  // The data reaches the disk before the rename makes it visible, and the
  // rename itself reaches it before save returns.
  sync_to_disk(temp.path, O_RDONLY, "the temporary file", path);
  WINNOW_THROW_IF_NOT_KIND(std::rename(temp.path.c_str(), path.c_str()) == 0, io,
                           "cannot save pruner state '{}': cannot move '{}' into place: {}", path,
                           temp.path, std::strerror(errno));
  temp.moved = true;
  std::string folder = std::filesystem::path(path).parent_path().string();
  if (folder.empty()) folder = ".";
  sync_to_disk(folder, O_RDONLY | O_DIRECTORY, "the folder", path);
}

std::uint64_t plan_hash(const EpochPlan& plan) {
  XXH64_state_t state;
  XXH64_reset(&state, 0);
  const std::uint64_t size = plan.ids.size();
  XXH64_update(&state, &size, sizeof(size));
  XXH64_update(&state, plan.ids.data(), plan.ids.size() * sizeof(std::uint64_t));
  XXH64_update(&state, plan.weight_codes.data(), plan.weight_codes.size());
  XXH64_update(&state, plan.palette.data(), plan.palette.size() * sizeof(float));
  return XXH64_digest(&state);
}

DynamicPruner load_pruner(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) {
    const int error = errno;
    if (error == ENOENT) {
      WINNOW_THROW_KIND(not_found, "cannot read pruner state '{}': {}", path, std::strerror(error));
    }
    WINNOW_THROW_KIND(io, "cannot read pruner state '{}': {}", path, std::strerror(error));
  }
  return read_pruner(in, path);
}

}  // namespace winnow

#pragma GCC diagnostic pop
