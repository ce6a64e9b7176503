#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "support/temp_dir.h"
#include "test_helpers.h"
#include "winnow/error.h"
#include "winnow/pruning/pruner_io.h"

using namespace winnow;

namespace {

// Serves batches of the current epoch and feeds back synthetic losses.
void serve(DynamicPruner& pruner, std::uint64_t batch, std::uint64_t batches, std::uint64_t salt,
           std::vector<std::uint64_t>& served) {
  const auto losses = test::synthetic_losses(pruner.num_samples(), salt);
  for (std::uint64_t k = 0; k < batches; ++k) {
    auto b = pruner.next_batch(batch);
    if (!b) return;
    std::vector<float> l;
    for (std::size_t i = 0; i < b->size; ++i) l.push_back(losses[b->ids[i]]);
    pruner.update(b->ids, l.data(), b->size);
    served.insert(served.end(), b->ids, b->ids + b->size);
  }
}

// Peak resident memory of this process so far, in bytes.
std::uint64_t peak_rss() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
}

std::uint64_t get_u64(const std::string& bytes, std::size_t at) {
  std::uint64_t v = 0;
  std::memcpy(&v, bytes.data() + at, sizeof(v));
  return v;
}

void put_u64(std::string& bytes, std::size_t at, std::uint64_t v) {
  std::memcpy(bytes.data() + at, &v, sizeof(v));
}

// Recomputes the trailing checksum, as a crafted (not merely damaged) file would.
void reseal(std::string& bytes) {
  put_u64(bytes, bytes.size() - 8, XXH64(bytes.data(), bytes.size() - 8, 0));
}

// Offsets in a state file (see write_pruner): magic 4, version 4, num_samples
// 8, six more options (44 bytes), option flags 1 (version 3), then the policy
// spec (length 8 + text), 43 bytes of position, then the plan ids' length.
constexpr std::size_t kNumSamplesAt = 8;
std::size_t plan_ids_length_at(const std::string& bytes) {
  std::uint32_t version = 0;
  std::memcpy(&version, bytes.data() + 4, sizeof(version));
  const std::size_t policy_at = version >= 3 ? 69 : 68;
  const std::uint64_t policy_length = get_u64(bytes, policy_at);
  REQUIRE(policy_length < bytes.size());
  return policy_at + 8 + policy_length + 43;
}

// Runs epochs [from, to) to completion, recording every id served.
void run_epochs(DynamicPruner& pruner, int from, int to, std::vector<std::uint64_t>& served) {
  for (int e = from; e < to; ++e) {
    pruner.begin_epoch();
    serve(pruner, 50, 1000, static_cast<std::uint64_t>(e), served);
  }
}

}  // namespace

TEST_CASE("a run resumed mid-epoch makes exactly the plans of an uninterrupted one", "[io]") {
  for (const char* policy : {"infobatch", "infobatch-quantile", "uniform", "ucb", "epsilon-greedy",
                             "seta", "repb(window=64)"}) {
    INFO(policy);
    std::vector<std::uint64_t> uninterrupted;
    DynamicPruner reference(777, 8, policy, 42);
    run_epochs(reference, 0, 3, uninterrupted);
    reference.begin_epoch();
    serve(reference, 50, 4, 3, uninterrupted);
    serve(reference, 50, 1000, 3, uninterrupted);
    run_epochs(reference, 4, 8, uninterrupted);

    std::vector<std::uint64_t> resumed_ids;
    test::TempDir dir;
    const std::string path = dir.file("resume.wnpr");
    {
      DynamicPruner first(777, 8, policy, 42);
      run_epochs(first, 0, 3, resumed_ids);
      first.begin_epoch();
      serve(first, 50, 4, 3, resumed_ids);
      first.save(path);
    }
    DynamicPruner resumed = DynamicPruner::load(path);
    CHECK(resumed.epoch() == 3);
    CHECK(resumed.position() == 200);
    serve(resumed, 50, 1000, 3, resumed_ids);
    run_epochs(resumed, 4, 8, resumed_ids);

    CHECK(resumed_ids == uninterrupted);
    CHECK(resumed.totals().forward_samples == reference.totals().forward_samples);
    CHECK(resumed.policy_spec() == reference.policy_spec());
  }
}

TEST_CASE("damaged state files are rejected with a clear error", "[io]") {
  DynamicPruner pruner(300, 5, "infobatch", 1);
  std::vector<std::uint64_t> served;
  run_epochs(pruner, 0, 2, served);
  std::stringstream stream;
  write_pruner(pruner, stream);
  const std::string bytes = stream.str();

  SECTION("a flipped byte fails the checksum") {
    std::string damaged = bytes;
    damaged[bytes.size() / 2] = static_cast<char>(damaged[bytes.size() / 2] ^ 0x40);
    std::istringstream in(damaged);
    CHECK_THROWS_WITH(read_pruner(in, "damaged"), Catch::Contains("damaged"));
  }
  SECTION("a truncated file says so") {
    for (std::size_t cut : {std::size_t{3}, std::size_t{40}, bytes.size() / 2, bytes.size() - 1}) {
      std::istringstream in(bytes.substr(0, cut));
      CHECK_THROWS_AS(read_pruner(in, "cut"), Error);
    }
  }
  SECTION("another file type is refused") {
    std::istringstream in("PK\x03\x04 not a winnow file at all");
    CHECK_THROWS_WITH(read_pruner(in, "zip"), Catch::Contains("bad magic"));
  }
  SECTION("a missing file names its path") {
    CHECK_THROWS_WITH(load_pruner("/nonexistent/dir/state.wnpr"),
                      Catch::Contains("/nonexistent/dir/state.wnpr"));
  }
  SECTION("an intact stream round-trips") {
    std::istringstream in(bytes);
    DynamicPruner copy = read_pruner(in, "ok");
    CHECK(copy.epoch() == pruner.epoch());
    CHECK(copy.history().size() == pruner.history().size());
    CHECK(std::equal(copy.scores().data(), copy.scores().data() + 300, pruner.scores().data()));
  }
}

TEST_CASE("saving replaces the file atomically and leaves no temporary behind", "[io]") {
  test::TempDir dir;
  const std::string path = dir.file("atomic.wnpr");
  DynamicPruner a(50, 3, "infobatch", 1);
  a.save(path);
  DynamicPruner b(80, 3, "uniform", 2);
  b.save(path);
  CHECK(DynamicPruner::load(path).num_samples() == 80);
  CHECK(dir.entries() == 1);
}

TEST_CASE("damaged state files are errors of kind corrupt, found before any allocation", "[io]") {
  DynamicPruner pruner(300, 5, "infobatch", 1);
  std::vector<std::uint64_t> served;
  run_epochs(pruner, 0, 2, served);
  pruner.begin_epoch();
  std::stringstream stream;
  write_pruner(pruner, stream);
  const std::string bytes = stream.str();
  const std::size_t ids_at = plan_ids_length_at(bytes);
  REQUIRE(get_u64(bytes, ids_at) == pruner.plan().size());

  SECTION("edited length fields, with or without a recomputed checksum") {
    const std::uint64_t rss_before = peak_rss();
    for (bool sealed : {false, true}) {
      for (std::uint64_t length :
           {pruner.plan().size() + 1000, std::uint64_t{1} << 31, std::uint64_t{1} << 55}) {
        INFO("sealed " << sealed << ", length " << length);
        std::string edited = bytes;
        put_u64(edited, kNumSamplesAt, std::uint64_t{1} << 40);
        put_u64(edited, ids_at, length);
        if (sealed) reseal(edited);
        std::istringstream in(edited);
        const auto error = test::thrown_error([&] { read_pruner(in, "edited.wnpr"); });
        REQUIRE(error);
        CHECK(error->kind() == ErrorKind::corrupt);
        CHECK_THAT(error->what(), Catch::Contains("edited.wnpr"));
        if (!sealed) CHECK_THAT(error->what(), Catch::Contains("checksum"));
      }
    }
    // The old reader zero-filled up to 16 GiB before noticing.
    CHECK(peak_rss() - rss_before < (std::uint64_t{256} << 20));
  }
  SECTION("any flipped byte after the magic number") {
    for (std::size_t at = 4; at < bytes.size(); ++at) {
      std::string damaged = bytes;
      damaged[at] = static_cast<char>(damaged[at] ^ 0x01);
      std::istringstream in(damaged);
      const auto error = test::thrown_error([&] { read_pruner(in, "flipped"); });
      REQUIRE(error);
      CHECK(error->kind() == ErrorKind::corrupt);
    }
  }
  SECTION("every truncation") {
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      std::istringstream in(bytes.substr(0, cut));
      const auto error = test::thrown_error([&] { read_pruner(in, "cut"); });
      REQUIRE(error);
      CHECK(error->kind() == ErrorKind::corrupt);
      CHECK_THAT(error->what(), Catch::Contains("'cut'"));
    }
  }
  SECTION("a damaged file on disk names its path") {
    test::TempDir dir;
    const std::string path = dir.file("damaged.wnpr");
    std::ofstream(path, std::ios::binary) << bytes.substr(0, bytes.size() / 2);
    const auto error = test::thrown_error([&] { load_pruner(path); });
    REQUIRE(error);
    CHECK(error->kind() == ErrorKind::corrupt);
    CHECK_THAT(error->what(), Catch::Contains(path));
  }
}

TEST_CASE("a failed save is an io error naming the path and keeps the old checkpoint", "[io]") {
  test::TempDir dir;
  DynamicPruner old_state(50, 3, "infobatch", 1);
  DynamicPruner new_state(80, 3, "uniform", 2);
  const auto expect_io = [](const std::optional<Error>& error, const std::string& path) {
    REQUIRE(error);
    CHECK(error->kind() == ErrorKind::io);
    CHECK_THAT(error->what(), Catch::Contains(path));
  };

  SECTION("a missing folder") {
    const std::string path = dir.file("missing/state.wnpr");
    expect_io(test::thrown_error([&] { new_state.save(path); }), path);
    CHECK(dir.entries() == 0);
  }
  SECTION("the temporary file cannot be created: the old checkpoint stays") {
    // The longest name a file may have: the temporary's longer name is refused.
    const std::string path = dir.file(std::string(250, 'a'));
    {
      std::ofstream out(path, std::ios::binary);
      write_pruner(old_state, out);
    }
    expect_io(test::thrown_error([&] { new_state.save(path); }), path);
    CHECK(DynamicPruner::load(path).num_samples() == 50);
    CHECK(dir.entries() == 1);
  }
  SECTION("the target is a folder: the rename fails and no temporary is left") {
    const std::string path = dir.file("taken");
    std::filesystem::create_directory(path);
    std::filesystem::create_directory(path + "/inside");
    expect_io(test::thrown_error([&] { new_state.save(path); }), path);
    CHECK(dir.entries() == 1);
  }
  SECTION("a read-only folder") {
    if (::geteuid() == 0) return;  // root writes anyway
    const std::string path = dir.file("state.wnpr");
    old_state.save(path);
    ::chmod(dir.path().c_str(), 0555);
    const auto error = test::thrown_error([&] { new_state.save(path); });
    ::chmod(dir.path().c_str(), 0755);
    expect_io(error, path);
    CHECK(DynamicPruner::load(path).num_samples() == 50);
    CHECK(dir.entries() == 1);
  }
}
