// The ingest's thread pool (Dataset::set_threads): the same manifest
// ingested on one thread and on several gives the same decisions, event for
// event (statuses, reasons, similarities in the details), over image files
// (decoded on the pool, re-encoded and brightened copies verified in colour),
// text (near copies verified by shingles) and files that cannot be decoded.
#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "image_test_files.h"
#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/curation/core/thread_pool.h"
#include "winnow/error.h"
#include "winnow/image/image_decoder.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace winnow;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using namespace winnow::image::test;

// Every event of every batch, as text: what the store says was decided.
std::vector<std::string> decisions(winnow::test::Pipeline& pipeline) {
  std::vector<std::string> out;
  for (const store::BatchRecord& batch : pipeline.store().all_batches()) {
    for (const store::EventRecord& e : pipeline.store().events_of_batch(batch.id)) {
      out.push_back(json{{"sample", e.sample_id.value_or(-1)},
                         {"kind", e.kind},
                         {"decision", e.decision ? to_string(*e.decision) : ""},
                         {"reason", e.reason},
                         {"details", e.details_json}}
                        .dump());
    }
  }
  return out;
}

std::vector<std::string> ingest_with(int threads, const std::string& db,
                                     const std::vector<std::string>& manifests,
                                     const CurationConfig& config = {}) {
  winnow::test::Pipeline::init(db, config);
  winnow::test::Pipeline pipeline(db);
  pipeline.set_threads(threads);
  for (const std::string& m : manifests) {
    ManifestReaderOptions options;
    options.image = pipeline.image_reading();
    ManifestReader reader(m, options);
    pipeline.ingest_batch(m, file_checksum(m), reader);
  }
  return decisions(pipeline);
}

std::string write_lines(const winnow::test::TempDir& dir, const std::string& name,
                        const std::vector<std::string>& lines) {
  std::ofstream f(dir.file(name));
  for (const std::string& l : lines) f << l << "\n";
  return dir.file(name);
}

std::ptrdiff_t count_of(const std::vector<std::string>& events, const std::string& what) {
  return std::count_if(events.begin(), events.end(),
                       [&](const std::string& e) { return e.find(what) != std::string::npos; });
}

// Two batches ingested on one thread and on two: the decisions (events) must
// be the same; returns those of one thread.
std::vector<std::string> decided_alike_on_two_threads(const winnow::test::TempDir& dir,
                                                      const std::vector<std::string>& first,
                                                      const std::vector<std::string>& second,
                                                      const CurationConfig& config) {
  const std::vector<std::string> manifests = {write_lines(dir, "m1.jsonl", first),
                                              write_lines(dir, "m2.jsonl", second)};
  const std::vector<std::string> one = ingest_with(1, dir.file("one.db"), manifests, config);
  const std::vector<std::string> two = ingest_with(2, dir.file("two.db"), manifests, config);
  CHECK(one == two);
  return one;
}

}  // namespace

TEST_CASE("thread pool: for_each runs every index once and rethrows the first error",
          "[ingest][threads]") {
  const ThreadPool pool(2);
  CHECK(pool.threads() == 2);
  CHECK(ThreadPool(0).threads() == ThreadPool::available_cores());
  std::vector<int> seen(1000, 0);
  pool.for_each(seen.size(), [&](std::size_t i) { seen[i] += 1; });
  CHECK(std::count(seen.begin(), seen.end(), 1) == 1000);
  CHECK_THROWS_WITH(pool.for_each(100,
                                  [](std::size_t i) {
                                    if (i == 57) WINNOW_THROW("item {} is bad", i);
                                  }),
                    Catch::Contains("item 57 is bad"));
  CHECK_THROWS_WITH(ThreadPool(-1), Catch::Contains("threads=-1"));
}

TEST_CASE("thread pool: started work is done by wait(), which rethrows its error",
          "[ingest][threads]") {
  for (const int threads : {1, 2}) {
    INFO("threads " << threads);
    const ThreadPool pool(threads);
    std::vector<int> seen(1000, 0);
    // Work that itself uses the pool, as a chunk's preparation does.
    auto task =
        pool.start([&] { pool.for_each(seen.size(), [&](std::size_t i) { seen[i] += 1; }); });
    task->wait();
    CHECK(std::count(seen.begin(), seen.end(), 1) == 1000);
    task->wait();  // a second wait returns at once
    auto failing = pool.start([] { WINNOW_THROW("chunk {} is bad", 3); });
    CHECK_THROWS_WITH(failing->wait(), Catch::Contains("chunk 3 is bad"));
    CHECK_NOTHROW(failing->wait());  // the error was reported once
    // Destroyed without a wait (a decision threw meanwhile): it still waits
    // for the work, which may write to what the caller is about to free.
    std::atomic<bool> done{false};
    {
      auto dropped = pool.start([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        done = true;
        WINNOW_THROW("nobody asks");
      });
    }
    CHECK(done);
  }
}

TEST_CASE("thread pool: decisions on two threads are those of one, event for event",
          "[ingest][threads][image]") {
  const std::vector<fs::path> originals = clip_art(80);
  if (originals.size() < 80) {
    FAIL("Debian's openclipart-png is not installed (scripts/install-deps installs it)");
  }
  winnow::test::TempDir dir;
  std::vector<std::string> first, second;
  for (std::size_t i = 0; i < originals.size(); ++i) {
    json j = {{"key", "img" + std::to_string(i)},
              {"path", originals[i].string()},
              {"label", i % 2 ? "odd" : "even"}};
    (i < 50 ? first : second).push_back(j.dump());
  }
  // Copies of first-batch images in the second batch (stored candidates) and
  // in the first (candidates from the same chunk): re-encoded, brightened.
  for (std::size_t i = 0; i < 12; ++i) {
    const std::vector<std::uint8_t> bytes = read_bytes(originals[i * 3].string());
    image::Image im = image::decode_image(bytes.data(), bytes.size());
    if (i % 2) im = mapped(im, [](double v) { return v * 1.08; });
    const std::string copy = dir.file("copy" + std::to_string(i) + ".jpg");
    write_bytes(copy, encode_jpeg(im, 85));
    json j = {{"key", "copy" + std::to_string(i)}, {"path", copy}, {"label", "even"}};
    (i < 4 ? first : second).push_back(j.dump());
  }
  const std::string broken = dir.file("broken.png");
  write_bytes(broken, png_claiming(100000, 100000));
  second.push_back(json{{"key", "bomb"}, {"path", broken}}.dump());
  const std::vector<std::string> manifests = {write_lines(dir, "m1.jsonl", first),
                                              write_lines(dir, "m2.jsonl", second)};
  const std::vector<std::string> one = ingest_with(1, dir.file("one.db"), manifests);
  const std::vector<std::string> two = ingest_with(2, dir.file("two.db"), manifests);
  REQUIRE(one.size() >= first.size() + second.size());
  CHECK(one == two);
  // The copies were found (the comparison is not of two empty outcomes).
  CHECK(count_of(one, "\"decision\":\"duplicate_near\"") >= 10);
  CHECK(count_of(one, "\"decision\":\"rejected\"") == 1);
}

TEST_CASE("thread pool: text near copies are decided on two threads as on one",
          "[ingest][threads]") {
  winnow::test::TempDir dir;
  std::vector<std::string> first, second;
  for (int i = 0; i < 300; ++i) {
    const std::string text = "paragraph " + std::to_string(i) + " about topic " +
                             std::to_string(i * 7919 % 31) + " and " +
                             std::to_string(i * 104729 % 47) +
                             ", with enough words that shingles count for something";
    first.push_back(json{{"key", "t" + std::to_string(i)}, {"text", text}}.dump());
    if (i % 5 == 0) {
      second.push_back(json{{"key", "t-copy" + std::to_string(i)}, {"text", text + "!"}}.dump());
    }
  }
  CurationConfig config;
  config.embedder = "hashed-ngrams(n=3,dim=256)";
  // HNSW and IVF too: their structure must not depend on the threads either,
  // and their searches are split over them (IVF: 300 texts make two cells, of
  // which nprobe=1 scans one).
  config.index = GENERATE(as<std::string>{}, "flat", "hnsw", "ivf(nprobe=1)");
  const std::vector<std::string> one = decided_alike_on_two_threads(dir, first, second, config);
  CHECK(count_of(one, "\"decision\":\"duplicate_near\"") >= 60);
}

TEST_CASE("thread pool: labels re-judged after a batch are those of one thread",
          "[ingest][threads]") {
  // 600 labelled records in four clusters (a provided 8-d embedding), one
  // label in ten flipped, in batches of 200 and 400: the first batch's labels
  // are judged before any label has label_k samples, so the batches'
  // re-judging flags the flips, on the pool's threads.
  winnow::test::TempDir dir;
  std::mt19937 rng(17);
  std::normal_distribution<float> noise(0.0f, 0.2f);
  std::uniform_int_distribution<int> letter('a', 'z');
  std::vector<std::string> first, second;
  for (int i = 0; i < 600; ++i) {
    const int cluster = i % 4;
    std::vector<float> v(8);
    for (int d = 0; d < 8; ++d)
      v[static_cast<std::size_t>(d)] = (d == cluster ? 1.0f : 0.0f) + noise(rng);
    std::string text;
    for (int c = 0; c < 40; ++c) text += static_cast<char>(letter(rng));
    const int label = i % 10 == 0 ? (cluster + 1 + i / 10 % 3) % 4 : cluster;
    (i < 200 ? first : second)
        .push_back(json{
            {"key", "r" + std::to_string(i)},
            {"text", text},
            {"label", std::to_string(label)},
            {"embedding",
             v}}.dump());
  }
  CurationConfig config;
  config.embedder = "provided(dim=8)";
  config.index = GENERATE(as<std::string>{}, "flat", "hnsw", "ivf(nprobe=1)");
  const std::vector<std::string> one = decided_alike_on_two_threads(dir, first, second, config);
  CHECK(count_of(one, "re-judged against") >= 10);
}
