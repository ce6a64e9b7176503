#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>

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

// Runs epochs [from, to) to completion, recording every id served.
void run_epochs(DynamicPruner& pruner, int from, int to, std::vector<std::uint64_t>& served) {
  for (int e = from; e < to; ++e) {
    pruner.begin_epoch();
    serve(pruner, 50, 1000, static_cast<std::uint64_t>(e), served);
  }
}

}  // namespace

TEST_CASE("a run resumed mid-epoch makes exactly the plans of an uninterrupted one", "[io]") {
  for (const char* policy : {"infobatch", "infobatch-quantile", "uniform", "ucb", "epsilon-greedy"}) {
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
