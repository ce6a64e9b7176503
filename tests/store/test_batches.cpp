#include <catch2/catch.hpp>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

TEST_CASE("an ingest batch goes pending, running, done with its counts", "[store][batches]") {
  TempDir dir;
  MetadataStore store(dir.file("batches.db"));
  const BatchRecord registered = store.register_batch("manifest-001.jsonl", "sha256:aa");
  CHECK(registered.state == BatchState::pending);
  CHECK(registered.attempts == 0);
  CHECK_FALSE(registered.started_at);

  // Registering the same manifest again (same checksum) is a no-op.
  const BatchRecord again = store.register_batch("renamed.jsonl", "sha256:aa");
  CHECK(again.id == registered.id);
  CHECK(again.file_name == "manifest-001.jsonl");
  REQUIRE_THROWS_WITH(store.finish_batch(registered.id), Catch::Contains("not running"));

  const BatchRecord running = store.start_batch(registered.id);
  CHECK(running.state == BatchState::running);
  CHECK(running.attempts == 1);
  CHECK(running.started_at);

  std::vector<NewSample> samples;
  for (int i = 0; i < 10; ++i) {
    samples.push_back(make_sample(i));
    samples.back().batch_id = registered.id;
  }
  samples[9].decision = {SampleStatus::rejected, std::nullopt, "unreadable", ""};
  const auto ids = store.insert_samples(samples);
  store.update_status(ids[8], {SampleStatus::duplicate_near, ids[0], "near", ""}, registered.id);
  store.insert_sample(make_sample(100));  // outside the batch

  const BatchRecord done = store.finish_batch(registered.id);
  CHECK(done.state == BatchState::done);
  CHECK(done.finished_at);
  CHECK(done.counts.total() == 10);
  CHECK(done.counts[SampleStatus::accepted] == 8);
  CHECK(done.counts[SampleStatus::duplicate_near] == 1);
  CHECK(done.counts[SampleStatus::rejected] == 1);
  CHECK(store.find_batch_by_checksum("sha256:aa")->state == BatchState::done);
  CHECK_FALSE(store.find_batch_by_checksum("sha256:bb"));
  REQUIRE_THROWS_WITH(store.start_batch(registered.id),
                      Catch::Contains("already done") && Catch::Contains("manifest-001.jsonl"));

  const auto events = store.events_of_batch(registered.id);
  REQUIRE(events.size() == 13);  // started, 10 ingests, 1 revisit, done
  CHECK(events.front().kind == kEventBatchStarted);
  CHECK(events.back().kind == kEventBatchDone);
  CHECK_FALSE(events.back().sample_id);
}

TEST_CASE("a failed or interrupted batch can be started again", "[store][batches]") {
  TempDir dir;
  const std::string path = dir.file("redo.db");
  std::int64_t id = 0;
  {
    MetadataStore store(path);
    id = store.register_batch("m.jsonl", "c1").id;
    store.start_batch(id);
    // The process dies here: the batch stays running.
  }
  MetadataStore store(path);
  const auto running = store.batches_in_state(BatchState::running);
  REQUIRE(running.size() == 1);
  CHECK(running[0].id == id);
  CHECK(store.start_batch(id).attempts == 2);

  const BatchRecord failed = store.fail_batch(id, "manifest line 7: bad JSON");
  CHECK(failed.state == BatchState::failed);
  CHECK(failed.error == "manifest line 7: bad JSON");
  REQUIRE_THROWS_WITH(store.fail_batch(id, "again"), Catch::Contains("it is failed"));
  CHECK(store.batches_in_state(BatchState::failed).size() == 1);

  const BatchRecord retried = store.start_batch(id);
  CHECK(retried.attempts == 3);
  CHECK(retried.error.empty());
  CHECK_FALSE(retried.finished_at);
  CHECK(store.finish_batch(id).state == BatchState::done);
  REQUIRE_THROWS_WITH(store.start_batch(777), Catch::Contains("no ingest batch with id 777"));
  REQUIRE_THROWS_WITH(store.register_batch("x.jsonl", ""), Catch::Contains("without a checksum"));
}
