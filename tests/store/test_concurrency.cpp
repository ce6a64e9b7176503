// WAL mode: readers on their own connections never wait for the writer and
// always see a consistent, committed snapshot.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "store_test_support.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/statement.h"
#include "winnow/store/transaction.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

namespace {

// A hand-off point between the writer thread and the test's thread.
class Signal {
 public:
  void raise() {
    std::lock_guard<std::mutex> lock(mutex_);
    raised_ = true;
    changed_.notify_all();
  }
  bool wait(std::chrono::seconds timeout) {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, timeout, [&] { return raised_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool raised_ = false;
};

std::vector<NewSample> samples_from(int first, int count) {
  std::vector<NewSample> samples;
  for (int i = first; i < first + count; ++i) {
    samples.push_back(make_sample(i));
  }
  return samples;
}

struct Snapshot {
  std::int64_t samples, annotations, ingest_events;
};

// One statement, so one snapshot: the three counts must agree.
Snapshot snapshot(Database& db) {
  StatementScope query(
      db.cached("SELECT (SELECT count(*) FROM samples), (SELECT count(*) FROM annotations), "
                "(SELECT count(*) FROM events WHERE kind = 'ingest')"));
  query->bind_all();
  REQUIRE(query->step());
  return {query->column_int64(0), query->column_int64(1), query->column_int64(2)};
}

}  // namespace

TEST_CASE("a reader sees committed counts while a long write transaction is open",
          "[store][concurrency]") {
  TempDir dir;
  const std::string path = dir.file("wal.db");
  MetadataStore reader(path, DatabaseOptions{0});  // no busy wait: a lock would fail at once
  {
    MetadataStore seed(path);
    seed.insert_samples(samples_from(0, 1000));
  }

  Signal written_uncommitted;
  Signal reader_done;
  std::exception_ptr writer_error;
  std::thread writer([&] {
    try {
      MetadataStore store(path);
      Transaction transaction(store.database());
      for (int chunk = 0; chunk < 10; ++chunk) {
        store.insert_samples(samples_from(1000 + chunk * 500, 500));
      }
      written_uncommitted.raise();
      if (!reader_done.wait(std::chrono::seconds(60))) {
        throw std::runtime_error("reader never finished");
      }
      transaction.commit();
    } catch (...) {
      writer_error = std::current_exception();
      written_uncommitted.raise();
    }
  });

  REQUIRE(written_uncommitted.wait(std::chrono::seconds(120)));
  // The reader's busy timeout is 0 ms: had it needed the writer's lock, these
  // reads would fail with SQLITE_BUSY instead of returning.
  const StatusCounts during = reader.count_by_status();
  const Snapshot snap = snapshot(reader.database());
  const bool found_uncommitted = reader.find_by_external_key("sample-1200").has_value();
  reader_done.raise();
  writer.join();
  if (writer_error) {
    std::rethrow_exception(writer_error);
  }

  CHECK(during.total() == 1000);
  CHECK(during[SampleStatus::accepted] == 1000);
  CHECK(snap.samples == 1000);
  CHECK(snap.annotations == 1000);
  CHECK(snap.ingest_events == 1000);
  CHECK_FALSE(found_uncommitted);

  const Snapshot after = snapshot(reader.database());
  CHECK(after.samples == 6000);
  CHECK(after.annotations == 6000);
  CHECK(after.ingest_events == 6000);
}

TEST_CASE("a reader polling during many commits always sees whole batches",
          "[store][concurrency]") {
  TempDir dir;
  const std::string path = dir.file("poll.db");
  constexpr int kChunk = 250;
  constexpr int kChunks = 40;
  { MetadataStore create(path); }

  std::atomic<bool> writing{true};
  std::exception_ptr writer_error;
  std::thread writer([&] {
    try {
      MetadataStore store(path);
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        store.insert_samples(samples_from(chunk * kChunk, kChunk));
      }
    } catch (...) {
      writer_error = std::current_exception();
    }
    writing = false;
  });

  MetadataStore reader(path);
  int reads = 0;
  int inconsistent = 0;
  std::int64_t last = 0;
  bool went_backwards = false;
  while (writing) {
    const Snapshot snap = snapshot(reader.database());
    ++reads;
    if (snap.samples % kChunk != 0 || snap.annotations != snap.samples ||
        snap.ingest_events != snap.samples) {
      ++inconsistent;
    }
    went_backwards = went_backwards || snap.samples < last;
    last = snap.samples;
  }
  writer.join();
  if (writer_error) {
    std::rethrow_exception(writer_error);
  }
  INFO("reads while writing: " << reads);
  CHECK(reads > 0);
  CHECK(inconsistent == 0);
  CHECK_FALSE(went_backwards);
  CHECK(snapshot(reader.database()).samples == kChunk * kChunks);
}
