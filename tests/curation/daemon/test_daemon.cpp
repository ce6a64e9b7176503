// `winnow serve` end to end: the real daemon process on a real inbox folder
// and SQLite file, killed with SIGKILL mid-batch and restarted, stopped with
// SIGTERM, fed malformed manifests, and asked for its status over HTTP.
#include <catch2/catch.hpp>

#include <httplib.h>

#include <chrono>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "support/temp_dir.h"
#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/readers/idx_importer.h"
#include "winnow/store/metadata_store.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

const std::string kFashion = "/usr/share/datasets/fashion-mnist/";

// The `winnow` CLI as a child process (support/cli_process.h).
using Winnow = winnow::test::CliProcess;

bool wait_until(const std::function<bool()>& done, double seconds = 120.0) {
  return winnow::test::poll_until(done, seconds);
}

int run_cli(const fs::path& dir, std::vector<std::string> args) {
  Winnow w(dir, std::move(args), "cli");
  auto rc = w.wait();
  INFO(w.err());
  REQUIRE(rc);
  return *rc;
}

std::optional<json> read_json(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// Writes a manifest the way the inbox protocol asks: hidden name, then rename.
void drop(const fs::path& inbox, const std::string& name, const std::string& content) {
  const fs::path tmp = inbox / ("." + name + ".tmp");
  std::ofstream(tmp, std::ios::binary) << content;
  fs::rename(tmp, inbox / name);
}

// Fashion-MNIST records [begin, end) of `images` as a pixels manifest.
std::string pixel_manifest(const std::vector<winnow::curation::ManifestRecord>& images,
                           std::size_t begin, std::size_t end, const std::string& key_prefix,
                           const std::string& source) {
  std::string out;
  for (std::size_t i = begin; i < end; ++i) {
    const auto& r = images[i];
    json j = {{"key", key_prefix + std::to_string(i)},
              {"pixels", r.pixels},
              {"width", r.width},
              {"height", r.height},
              {"label", *r.label},
              {"source", source}};
    out += j.dump() + "\n";
  }
  return out;
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

const std::vector<winnow::curation::ManifestRecord>& fashion_test() {
  static const auto records = winnow::curation::readers::import_idx(
      kFashion + "t10k-images-idx3-ubyte.gz", kFashion + "t10k-labels-idx1-ubyte.gz", "test");
  return records;
}

const std::vector<winnow::curation::ManifestRecord>& fashion_train_slice() {
  static const auto records = [] {
    auto all = winnow::curation::readers::import_idx(
        kFashion + "train-images-idx3-ubyte.gz", kFashion + "train-labels-idx1-ubyte.gz", "train");
    all.resize(6000);
    return all;
  }();
  return records;
}

}  // namespace

TEST_CASE("SIGKILL mid-batch, restart: every record is in the store exactly once", "[daemon]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("data.db");
  REQUIRE(run_cli(dir.path(), {"init", "--db", db}) == 0);
  const auto& train = fashion_train_slice();
  const auto& test = fashion_test();

  const std::string a = pixel_manifest(train, 0, 3000, "a-", "vendor-a");
  const std::string b = pixel_manifest(test, 0, test.size(), "b-", "vendor-b");
  // C: new images plus 200 re-submissions of A's images under new keys.
  std::string c = pixel_manifest(train, 3000, 5000, "c-", "vendor-c") +
                  pixel_manifest(train, 0, 200, "c-copy-", "vendor-c");
  const auto expected_total = static_cast<std::int64_t>(3000 + test.size() + 2200);

  std::vector<std::string> serve = {"serve",        "--db",      db,          "--inbox",
                                    inbox.string(), "--no-http", "--poll-ms", "100"};
  {
    Winnow daemon(dir.path(), serve, "serve1");
    drop(inbox, "a.jsonl", a);
    REQUIRE(wait_until([&] { return fs::exists(inbox / "processed" / "a.jsonl"); }));

    // B is ingested in one transaction: kill the daemon while it is open.
    drop(inbox, "b.jsonl", b);
    const std::string b_checksum =
        winnow::curation::dedup::file_content_hash((inbox / "b.jsonl").string());
    winnow::store::MetadataStore reader(db);
    REQUIRE(wait_until([&] {
      auto batch = reader.find_batch_by_checksum(b_checksum);
      return batch && batch->state == winnow::store::BatchState::running;
    }));
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    daemon.signal(SIGKILL);
    REQUIRE(daemon.wait() == 128 + SIGKILL);
    // Killed mid-batch: the manifest is still claimed and nothing of B committed.
    REQUIRE(fs::exists(inbox / "processing" / "b.jsonl"));
    CHECK(reader.find_batch_by_checksum(b_checksum)->state == winnow::store::BatchState::running);
    CHECK(reader.count_by_status().total() == 3000);
  }
  // While it is down: C arrives, and A again under another name.
  drop(inbox, "c.jsonl", c);
  drop(inbox, "a-again.jsonl", a);

  serve.push_back("--once");
  Winnow daemon(dir.path(), serve, "serve2");
  const auto rc = daemon.wait();
  INFO(daemon.err());
  REQUIRE(rc == 0);
  const json summary = json::parse(daemon.out());
  CHECK(summary["manifests"]["ingested"] == 2);  // B (redone) and C
  CHECK(summary["manifests"]["skipped"] == 1);   // A again
  CHECK(summary["manifests"]["failed"] == 0);

  CHECK(files_in(inbox / "processing") == 0);
  CHECK(files_in(inbox / "processed") == 4);
  CHECK(files_in(inbox) == 0);

  winnow::store::MetadataStore store(db);
  const winnow::store::StatusCounts counts = store.count_by_status();
  CHECK(counts.total() == expected_total);
  CHECK(counts[winnow::store::SampleStatus::duplicate_exact] >= 200);
  std::set<std::string> keys;
  store.for_each_sample([&](const winnow::store::SampleRecord& s) { keys.insert(s.external_key); });
  CHECK(static_cast<std::int64_t>(keys.size()) == expected_total);  // no key twice
  const auto done = store.batches_in_state(winnow::store::BatchState::done);
  REQUIRE(done.size() == 3);
  CHECK(store.batches_in_state(winnow::store::BatchState::running).empty());
  for (const auto& batch : done) {
    CHECK(batch.attempts == (batch.file_name == "b.jsonl" ? 2 : 1));
  }

  // The index (rebuilt or saved) holds exactly the judged samples: accepted
  // and label_issue.
  {
    Winnow status(dir.path(), {"status", "--db", db, "--json"}, "status");
    REQUIRE(status.wait() == 0);
    const json st = json::parse(status.out());
    CHECK(st["total"] == expected_total);
    CHECK(st["index"]["vectors"] == counts[winnow::store::SampleStatus::accepted] +
                                        counts[winnow::store::SampleStatus::label_issue]);
    // The daemon saved what its batches left unsaved when it stopped.
    CHECK_FALSE(st["index"].contains("caught_up_on_open"));
    CHECK_FALSE(st["index"]["rebuilt_on_open"].get<bool>());
  }
  const auto heartbeat = read_json(db + ".serve.json");
  REQUIRE(heartbeat);
  CHECK((*heartbeat)["state"] == "stopped");
}

TEST_CASE("SIGTERM interrupts the running batch: rolled back, redone at the next start",
          "[daemon]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("data.db");
  REQUIRE(run_cli(dir.path(), {"init", "--db", db}) == 0);
  Winnow daemon(dir.path(),
                {"serve", "--db", db, "--inbox", inbox.string(), "--no-http", "--poll-ms", "100"},
                "serve");
  drop(inbox, "m.jsonl", pixel_manifest(fashion_test(), 0, 10000, "t-", "s"));
  const std::string checksum =
      winnow::curation::dedup::file_content_hash((inbox / "m.jsonl").string());
  winnow::store::MetadataStore reader(db);
  REQUIRE(wait_until([&] {
    auto batch = reader.find_batch_by_checksum(checksum);
    return batch && batch->state == winnow::store::BatchState::running;
  }));
  daemon.signal(SIGTERM);
  const auto rc = daemon.wait();
  INFO(daemon.err());
  REQUIRE(rc == 0);
  // Nothing of the batch was kept; the manifest waits in processing/.
  CHECK(fs::exists(inbox / "processing" / "m.jsonl"));
  CHECK_FALSE(fs::exists(inbox / "processed" / "m.jsonl"));
  CHECK(reader.find_batch_by_checksum(checksum)->state == winnow::store::BatchState::failed);
  CHECK(reader.count_by_status().total() == 0);
  const auto heartbeat = read_json(db + ".serve.json");
  REQUIRE(heartbeat);
  CHECK((*heartbeat)["state"] == "stopped");
  CHECK((*heartbeat)["manifests"]["interrupted"] == 1);

  // The next start redoes it first, and a graceful stop is no interruption
  // that counts towards quarantine.
  REQUIRE(run_cli(dir.path(), {"serve", "--db", db, "--inbox", inbox.string(), "--no-http",
                               "--poll-ms", "100", "--once", "--max-interruptions", "1"}) == 0);
  CHECK(fs::exists(inbox / "processed" / "m.jsonl"));
  const auto batch = reader.find_batch_by_checksum(checksum);
  CHECK(batch->state == winnow::store::BatchState::done);
  CHECK(batch->attempts == 2);
  CHECK(reader.count_by_status().total() == 10000);
}

TEST_CASE("malformed manifests: bad files go to failed/ with a reason, bad lines are rejected",
          "[daemon]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("text.db");
  REQUIRE(run_cli(dir.path(), {"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"}) ==
          0);
  drop(inbox, "good.jsonl",
       "{\"key\":\"g1\",\"text\":\"the first good record\",\"label\":\"a\"}\n"
       "{\"key\":\"g2\",\"text\":\"a second, different record\",\"label\":\"b\"}\n");
  REQUIRE(run_cli(dir.path(),
                  {"serve", "--db", db, "--inbox", inbox.string(), "--no-http", "--once"}) == 0);
  winnow::store::MetadataStore store(db);
  REQUIRE(store.count_by_status()[winnow::store::SampleStatus::accepted] == 2);

  std::string garbage("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16);
  drop(inbox, "garbage.jsonl", garbage);
  std::string huge = "{\"key\":\"h\",\"text\":\"" + std::string(17u << 20, 'x') + "\"}\n";
  drop(inbox, "mixed.jsonl",
       "{\"key\":\"m1\",\"text\":\"fine record number one\"}\n"
       "{not json\n"
       "{\"text\":\"no key\"}\n"
       "{\"key\":\"m2\"}\n"
       "{\"key\":\"m3\",\"pixels\":[1,2,300]}\n"
       "{\"key\":\"m4\",\"text\":\"t\",\"embedding\":[1e999]}\n"
       "{\"key\":\"m5\",\"path\":\"/nonexistent/file.png\"}\n"
       "{\"key\":\"g1\",\"text\":\"a key already in the dataset\"}\n" +
           huge + "{\"key\":\"m6\",\"text\":\"six: quite unlike the others\"}\n");
  Winnow daemon(dir.path(), {"serve", "--db", db, "--inbox", inbox.string(), "--no-http", "--once"},
                "serve");
  REQUIRE(daemon.wait() == 0);
  const json summary = json::parse(daemon.out());
  CHECK(summary["manifests"]["failed"] == 1);
  CHECK(summary["manifests"]["ingested"] == 1);

  CHECK(fs::exists(inbox / "failed" / "garbage.jsonl"));
  std::ifstream reason(inbox / "failed" / "garbage.jsonl.reason.txt");
  std::string why((std::istreambuf_iterator<char>(reason)), std::istreambuf_iterator<char>());
  CHECK_THAT(why, Catch::Contains("garbage.jsonl"));
  CHECK(fs::exists(inbox / "processed" / "mixed.jsonl"));

  const winnow::store::StatusCounts counts = store.count_by_status();
  CHECK(counts[winnow::store::SampleStatus::accepted] == 4);  // g1, g2, m1, m6
  CHECK(counts[winnow::store::SampleStatus::rejected] == 8);  // every bad line, with a reason
  std::vector<std::int64_t> rejected;
  store.for_each_sample([&](const winnow::store::SampleRecord& s) { rejected.push_back(s.id); },
                        winnow::store::SampleStatus::rejected);
  for (std::int64_t id : rejected) {
    const auto events = store.events_of(id);
    REQUIRE_FALSE(events.empty());
    CHECK_FALSE(events.front().reason.empty());
  }
  CHECK(store.find_by_external_key("g1")->status == winnow::store::SampleStatus::accepted);
}

TEST_CASE("the status endpoint listens on loopback and serves JSON and Prometheus metrics",
          "[daemon]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("text.db");
  REQUIRE(run_cli(dir.path(), {"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"}) ==
          0);
  Winnow daemon(
      dir.path(),
      {"serve", "--db", db, "--inbox", inbox.string(), "--http-port", "0", "--poll-ms", "100"},
      "serve");
  drop(inbox, "m.jsonl",
       "{\"key\":\"k1\",\"text\":\"some text to keep\"}\n"
       "{\"key\":\"k2\",\"text\":\"some text to keep\"}\n");
  std::optional<json> heartbeat;
  REQUIRE(wait_until([&] {
    heartbeat = read_json(db + ".serve.json");
    return heartbeat && heartbeat->contains("http") && (*heartbeat)["manifests"]["ingested"] == 1;
  }));
  CHECK((*heartbeat)["http"]["host"] == "127.0.0.1");
  const int port = (*heartbeat)["http"]["port"];

  httplib::Client client("127.0.0.1", port);
  auto status = client.Get("/status");
  REQUIRE(status);
  CHECK(status->status == 200);
  const json st = json::parse(status->body);
  CHECK(st["dataset"]["total"] == 2);
  CHECK(st["dataset"]["duplicate_exact"] == 1);
  CHECK(st["state"] == "idle");

  auto metrics = client.Get("/metrics");
  REQUIRE(metrics);
  CHECK(metrics->status == 200);
  CHECK_THAT(metrics->body, Catch::Contains("# TYPE winnow_samples gauge"));
  CHECK_THAT(metrics->body, Catch::Contains("winnow_samples{status=\"accepted\"} 1\n"));
  CHECK_THAT(metrics->body, Catch::Contains("winnow_manifests_total{outcome=\"ingested\"} 1\n"));
  CHECK(client.Get("/nothing-here")->status == 404);

  daemon.signal(SIGTERM);
  CHECK(daemon.wait() == 0);
}

TEST_CASE("serve on a dataset made without --embedder takes the first manifest's embedder",
          "[daemon][embedder_choice]") {
  winnow::test::TempDir dir;
  const fs::path inbox = dir.path() / "inbox";
  fs::create_directories(inbox);
  const std::string db = dir.file("data.db");
  REQUIRE(run_cli(dir.path(), {"init", "--db", db}) == 0);
  // Text first: the daemon opened the dataset with the pixel default, and
  // reopens it with the text embedder before reading the manifest.
  drop(inbox, "text.jsonl",
       "{\"key\": \"a\", \"text\": \"the first paragraph of a manual page\"}\n"
       "{\"key\": \"b\", \"text\": \"a second paragraph, about something else\"}\n");
  Winnow daemon(
      dir.path(),
      {"serve", "--db", db, "--inbox", inbox.string(), "--no-http", "--poll-ms", "100", "--once"},
      "serve");
  REQUIRE(daemon.wait() == 0);
  winnow::store::MetadataStore store(db);
  CHECK(store.count_by_status()[winnow::store::SampleStatus::accepted] == 2);
  const auto config = winnow::curation::CurationConfig::from_json(
      *store.get_meta(winnow::curation::CurationConfig::kMetaKey));
  CHECK(config.embedder == "hashed-ngrams(n=3,dim=256)");
  CHECK(config.embedder_auto);
}
