#include "winnow/pruning/pruner_io.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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

namespace winnow {
namespace {

constexpr char kMagic[4] = {'W', 'N', 'P', 'R'};
constexpr std::uint32_t kVersion = 2;

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

class Reader {
 public:
  Reader(std::istream& in, const std::string& source) : in_(in), source_(source) {
    XXH64_reset(&hash_, 0);
  }
  void bytes(void* data, std::size_t size, const char* what) {
    in_.read(static_cast<char*>(data), static_cast<std::streamsize>(size));
    WINNOW_THROW_IF_NOT(static_cast<std::size_t>(in_.gcount()) == size,
                        "pruner state '{}': file ends inside {} (truncated?)", source_, what);
    XXH64_update(&hash_, data, size);
  }
  template <typename T>
  T pod(const char* what) {
    T value;
    bytes(&value, sizeof(T), what);
    return value;
  }
  // Vectors are bounded by `max_size` before anything is allocated, so a
  // corrupted length cannot ask for terabytes.
  template <typename T>
  std::vector<T> vec(const char* what, std::uint64_t max_size) {
    const auto size = pod<std::uint64_t>(what);
    WINNOW_THROW_IF_NOT(size <= max_size, "pruner state '{}': {} holds {} entries, at most {} "
                        "expected (corrupted file?)", source_, what, size, max_size);
    std::vector<T> v(size);
    bytes(v.data(), size * sizeof(T), what);
    return v;
  }
  std::string str(const char* what) {
    const auto size = pod<std::uint64_t>(what);
    WINNOW_THROW_IF_NOT(size <= 4096, "pruner state '{}': {} is {} bytes long (corrupted file?)",
                        source_, what, size);
    std::string s(size, '\0');
    bytes(s.data(), size, what);
    return s;
  }
  void verify_checksum() {
    const std::uint64_t expected = XXH64_digest(&hash_);
    std::uint64_t stored = 0;
    in_.read(reinterpret_cast<char*>(&stored), sizeof(stored));
    WINNOW_THROW_IF_NOT(static_cast<std::size_t>(in_.gcount()) == sizeof(stored),
                        "pruner state '{}': file ends before its checksum (truncated?)", source_);
    WINNOW_THROW_IF_NOT(stored == expected,
                        "pruner state '{}': checksum mismatch, the file is corrupted", source_);
  }
  const std::string& source() const { return source_; }

 private:
  std::istream& in_;
  std::string source_;
  XXH64_state_t hash_;
};

PlanKind checked_kind(std::uint8_t raw, const std::string& source) {
  WINNOW_THROW_IF_NOT(raw <= static_cast<std::uint8_t>(PlanKind::Annealing),
                      "pruner state '{}': unknown plan kind {}", source, raw);
  return static_cast<PlanKind>(raw);
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
  WINNOW_THROW_IF_NOT(out.good(), "pruner state: write failed");
}

DynamicPruner read_pruner(std::istream& in, const std::string& source) {
  Reader r(in, source);
  char magic[4];
  r.bytes(magic, sizeof(magic), "the magic number");
  WINNOW_THROW_IF_NOT(std::memcmp(magic, kMagic, sizeof(kMagic)) == 0,
                      "'{}' is not a winnow pruner state file (bad magic)", source);
  const auto version = r.pod<std::uint32_t>("the version");
  WINNOW_THROW_IF_NOT(version == 1 || version == kVersion,
                      "pruner state '{}': format version {} is not supported (this build reads 1 "
                      "to {})",
                      source, version, kVersion);
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
    WINNOW_THROW_IF_NOT(o.world_size >= 1 && o.rank < o.world_size,
                        "pruner state '{}': implausible rank {} of world_size {} (corrupted "
                        "file?)",
                        source, o.rank, o.world_size);
  }
  o.policy = r.str("the policy spec");
  const std::uint64_t n = o.num_samples;
  WINNOW_THROW_IF_NOT(n > 0 && n <= (std::uint64_t{1} << 56),
                      "pruner state '{}': implausible num_samples {} (corrupted file?)", source, n);

  const auto epoch = r.pod<std::uint64_t>("epoch");
  const bool plan_built = r.pod<std::uint8_t>("plan flag") != 0;
  const bool epoch_finished = r.pod<std::uint8_t>("epoch flag") != 0;
  const auto cursor = r.pod<std::uint64_t>("cursor");
  const auto steps_served = r.pod<std::uint64_t>("steps served");

  EpochPlan plan;
  plan.num_samples = n;
  plan.epoch = r.pod<std::uint64_t>("plan epoch");
  plan.kind = checked_kind(r.pod<std::uint8_t>("plan kind"), source);
  plan.candidates = r.pod<std::uint64_t>("plan candidates");
  plan.ids = r.vec<std::uint64_t>("plan ids", n);
  plan.weight_codes = r.vec<std::uint8_t>("plan weight codes", n);
  plan.palette = r.vec<float>("plan palette", 256);

  const auto history_size = r.pod<std::uint64_t>("history size");
  WINNOW_THROW_IF_NOT(history_size <= (std::uint64_t{1} << 32),
                      "pruner state '{}': implausible history size {}", source, history_size);
  std::vector<EpochStats> history(history_size);
  for (EpochStats& e : history) {
    e.epoch = r.pod<std::uint64_t>("history");
    e.kind = checked_kind(r.pod<std::uint8_t>("history"), source);
    e.planned_samples = r.pod<std::uint64_t>("history");
    e.forward_samples = r.pod<std::uint64_t>("history");
    e.full_forward_samples = r.pod<std::uint64_t>("history");
    e.candidates = r.pod<std::uint64_t>("history");
  }
  const std::vector<float> scores = r.vec<float>("scores", n);
  const std::vector<float> policy_state = r.vec<float>("policy state", n);
  r.verify_checksum();

  // The file is intact; check that its parts fit together.
  WINNOW_THROW_IF_NOT(scores.size() == n, "pruner state '{}': {} scores for {} samples", source,
                      scores.size(), n);
  WINNOW_THROW_IF_NOT(!plan.palette.empty() && plan.palette[0] == 1.0f,
                      "pruner state '{}': bad weight palette", source);
  WINNOW_THROW_IF_NOT(plan.weight_codes.empty() || plan.weight_codes.size() == plan.ids.size(),
                      "pruner state '{}': {} weight codes for {} plan entries", source,
                      plan.weight_codes.size(), plan.ids.size());
  for (std::uint64_t id : plan.ids) {
    WINNOW_THROW_IF_NOT(id < n, "pruner state '{}': plan id {} out of range", source, id);
  }
  for (std::uint8_t code : plan.weight_codes) {
    WINNOW_THROW_IF_NOT(code < plan.palette.size(), "pruner state '{}': bad weight code {}",
                        source, code);
  }
  WINNOW_THROW_IF_NOT(cursor <= plan.ids.size(), "pruner state '{}': position {} beyond plan "
                      "of {}", source, cursor, plan.ids.size());

  DynamicPruner pruner(o);
  pruner.assign_scores(scores.data(), scores.size());
  pruner.policy_->set_state(policy_state);
  pruner.epoch_ = epoch;
  pruner.plan_built_ = plan_built;
  pruner.epoch_finished_ = epoch_finished;
  pruner.cursor_ = cursor;
  pruner.steps_served_ = steps_served;
  pruner.history_ = std::move(history);
  if (plan_built) pruner.weights_.assign(plan);
  pruner.plan_ = std::move(plan);
  if (plan_built) pruner.build_shard();
  WINNOW_THROW_IF_NOT(!plan_built || cursor <= pruner.shard_size(),
                      "pruner state '{}': position {} beyond this rank's shard of {}", source,
                      cursor, pruner.shard_size());
  pruner.plan_generation_ = plan_built ? 1 : 0;
  return pruner;
}

void save_pruner(const DynamicPruner& pruner, const std::string& path) {
  const std::string temp = fmt::format("{}.tmp.{}", path, ::getpid());
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    WINNOW_THROW_IF_NOT(out.is_open(), "cannot write pruner state '{}': {}", temp,
                        std::strerror(errno));
    write_pruner(pruner, out);
    out.flush();
    WINNOW_THROW_IF_NOT(out.good(), "cannot write pruner state '{}': write failed", temp);
  }
  // Reach the disk before the rename makes the new file visible.
  const int fd = ::open(temp.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  if (std::rename(temp.c_str(), path.c_str()) != 0) {
    const std::string reason = std::strerror(errno);
    std::remove(temp.c_str());
    WINNOW_THROW("cannot move pruner state into place at '{}': {}", path, reason);
  }
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
  WINNOW_THROW_IF_NOT(in.is_open(), "cannot read pruner state '{}': {}", path,
                      std::strerror(errno));
  return read_pruner(in, path);
}

}  // namespace winnow

#pragma GCC diagnostic pop
