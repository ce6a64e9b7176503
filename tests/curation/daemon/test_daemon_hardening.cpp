// The real `winnow serve` / `winnow` processes against a hostile inbox and an
// unlucky operator: special files, links, non-UTF-8 names, manifests written
// in place, a database locked by another writer, a second daemon, an index
// file that cannot be saved, a daemon killed again and again mid-batch.
// One test case per row of the hardening issue (docs/security.md).
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "support/temp_dir.h"
#include "winnow/curation/dedup/content_hash.h"
#include "winnow/store/database.h"
#include "winnow/store/metadata_store.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using winnow::test::CliProcess;
using winnow::test::poll_until;
using winnow::test::slurp;

// A text dataset (cheap to embed) with an inbox, and the CLI to drive it.
struct Dataset {
  winnow::test::TempDir dir;
  fs::path inbox = dir.path() / "inbox";
  std::string db = dir.file("text.db");

  Dataset() {
    fs::create_directories(inbox);
    REQUIRE(run({"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"}) == 0);
  }
  // Runs the CLI to its end; the exit code (a hang fails the test).
  int run(std::vector<std::string> args, double seconds = 120.0) {
    CliProcess p(dir.path(), std::move(args), "cli");
    const auto rc = p.wait(seconds);
    INFO(p.err());
    REQUIRE(rc.has_value());
    return *rc;
  }
  std::vector<std::string> serve_once(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args = {"serve",     "--db",      db,   "--inbox", inbox.string(),
                                     "--no-http", "--poll-ms", "50", "--once"};
    args.insert(args.end(), extra.begin(), extra.end());
    return args;
  }
  // Writes a manifest by the inbox protocol (hidden name, then rename).
  void drop(const std::string& name, const std::string& content) const {
    const fs::path tmp = inbox / ("." + name + ".tmp");
    std::ofstream(tmp, std::ios::binary) << content;
    fs::rename(tmp, inbox / name);
  }
  json status() {
    CliProcess p(dir.path(), {"status", "--db", db, "--json"}, "status");
    const auto rc = p.wait();
    INFO(p.err());
    REQUIRE(rc == 0);
    return json::parse(p.out());
  }
  json heartbeat() const { return json::parse(slurp(db + ".serve.json")); }
  // The daemon, started and past its first heartbeat, until the test stops it.
  std::unique_ptr<CliProcess> serve(const std::string& poll_ms, const std::string& tag = "serve") {
    auto daemon = std::make_unique<CliProcess>(
        dir.path(),
        std::vector<std::string>{"serve", "--db", db, "--inbox", inbox.string(), "--no-http",
                                 "--poll-ms", poll_ms},
        tag);
    REQUIRE(poll_until([&] { return fs::exists(db + ".serve.json"); }));
    return daemon;
  }
};

std::string text_line(const std::string& key, const std::string& text) {
  return json{{"key", key}, {"text", text}}.dump() + "\n";
}

std::string path_line(const std::string& key, const std::string& path) {
  return json{{"key", key}, {"path", path}}.dump() + "\n";
}

// Rejection reasons by the key the record gave (from the store's events).
std::map<std::string, std::string> rejections(Dataset& d) {
  winnow::store::MetadataStore store(d.db);
  std::map<std::int64_t, std::string> key_of;
  store.for_each_sample([&](const winnow::store::SampleRecord& s) {
    key_of[s.id] = s.external_key.substr(0, s.external_key.find("#rejected"));
  });
  std::map<std::string, std::string> reasons;
  store.for_each_sample_event(
      [&](const winnow::store::EventRecord& e) { reasons[key_of.at(*e.sample_id)] = e.reason; },
      winnow::store::SampleStatus::rejected);
  return reasons;
}

}  // namespace

TEST_CASE("row 1: FIFOs, devices and huge files named by records are rejected without blocking",
          "[daemon][hardening]") {
  Dataset d;
  const fs::path content = d.inbox / "content";
  fs::create_directories(content);
  REQUIRE(::mkfifo((content / "fifo").c_str(), 0644) == 0);
  std::ofstream(content / "big.bin", std::ios::binary) << std::string(4096, 'x');
  std::ofstream(content / "small.bin", std::ios::binary) << "small";
  d.drop("m.jsonl", path_line("fifo", (content / "fifo").string()) +
                        path_line("zero", "/dev/zero") +
                        path_line("big", (content / "big.bin").string()) +
                        path_line("small", (content / "small.bin").string()) +
                        text_line("t", "an ordinary text record"));
  // Old code blocked on the FIFO (or hashed /dev/zero) forever.
  REQUIRE(d.run(d.serve_once({"--max-content-bytes", "1000", "--content-root", content.string(),
                              "--content-root", "/dev"}),
                60.0) == 0);
  CHECK(fs::exists(d.inbox / "processed" / "m.jsonl"));
  const auto reasons = rejections(d);
  REQUIRE(reasons.size() == 4);
  CHECK_THAT(reasons.at("fifo"), Catch::Contains("content root"));
  CHECK_THAT(reasons.at("zero"), Catch::Contains("content root"));
  CHECK_THAT(reasons.at("big"), Catch::Contains("at most 1000 bytes"));
  // small.bin was read and hashed; a text embedder cannot embed a file.
  CHECK_THAT(reasons.at("small"), Catch::Contains("cannot embed"));
  CHECK(d.status()["accepted"] == 1);
}

TEST_CASE("row 1: a manifest the daemon dies on again and again is quarantined",
          "[daemon][hardening]") {
  Dataset d;
  std::string manifest;
  for (int i = 0; i < 40000; ++i) {
    manifest += text_line("k" + std::to_string(i), "record number " + std::to_string(i * 7919));
  }
  d.drop("poison.jsonl", manifest);
  const std::string checksum =
      winnow::curation::dedup::file_content_hash((d.inbox / "poison.jsonl").string());
  winnow::store::MetadataStore reader(d.db);
  for (int kill = 0; kill < 2; ++kill) {
    CliProcess daemon(d.dir.path(),
                      {"serve", "--db", d.db, "--inbox", d.inbox.string(), "--no-http", "--poll-ms",
                       "50", "--max-interruptions", "2"},
                      "serve");
    REQUIRE(poll_until([&] {
      const auto batch = reader.find_batch_by_checksum(checksum);
      return batch && batch->state == winnow::store::BatchState::running &&
             batch->attempts == kill + 1;
    }));
    daemon.signal(SIGKILL);
    REQUIRE(daemon.wait() == 128 + SIGKILL);
  }
  // Killed twice while ingesting it: the third start quarantines it.
  REQUIRE(d.run(d.serve_once({"--max-interruptions", "2"})) == 0);
  REQUIRE(fs::exists(d.inbox / "failed" / "poison.jsonl"));
  CHECK_THAT(slurp(d.inbox / "failed" / "poison.jsonl.reason.txt"),
             Catch::Contains("quarantined") && Catch::Contains("2 times"));
  CHECK(fs::is_empty(d.inbox / "processing"));
  CHECK(reader.count_by_status().total() == 0);
}

TEST_CASE("the heartbeat's last entry says what a batch brought and why records were rejected",
          "[daemon]") {
  Dataset d;
  d.drop("mixed.jsonl", text_line("a", "first record") + R"({"text":"no key here"})" + "\n" +
                            R"({"text":"nor here"})" + "\n");
  REQUIRE(d.run(d.serve_once()) == 0);
  const json last = d.heartbeat()["last"];
  CHECK(last["outcome"] == "ingested");
  CHECK(last["counts"]["accepted"] == 1);
  CHECK(last["counts"]["rejected"] == 2);
  REQUIRE(last["rejections"].size() == 1);
  CHECK(last["rejections"][0]["count"] == 2);
  CHECK(last["rejections"][0]["example_line"] == 2);
  CHECK_THAT(last["rejections"][0]["reason"].get<std::string>(), Catch::Contains("'key'"));
}

TEST_CASE("row 2: non-UTF-8 manifest names are stored and printed, by serve and ingest",
          "[daemon][hardening]") {
  Dataset d;
  const std::string bad_name = "bad-\xff\xfe-name.jsonl";
  d.drop(bad_name, text_line("a", "first record"));
  REQUIRE(d.run(d.serve_once()) == 0);
  CHECK(fs::exists(d.inbox / "processed" / bad_name));
  const json heartbeat = d.heartbeat();  // valid JSON
  CHECK(heartbeat["manifests"]["ingested"] == 1);
  CHECK_THAT(heartbeat["last"]["file"].get<std::string>(), Catch::Contains("\\xff\\xfe"));

  const fs::path other = d.dir.path() / "other-\xc3-name.jsonl";
  std::ofstream(other) << text_line("b", "second record");
  REQUIRE(d.run({"ingest", "--db", d.db, other.string()}) == 0);
  const json status = d.status();  // crashed for good before
  CHECK(status["accepted"] == 2);
  CHECK_THAT(status["last_batch"]["file"].get<std::string>(), Catch::Contains("\\xc3"));
  // And the daemon still starts on that database.
  REQUIRE(d.run(d.serve_once()) == 0);
}

TEST_CASE("row 3: a link planted at a reason file's name is never written through",
          "[daemon][hardening]") {
  Dataset d;
  const fs::path victim = d.dir.path() / "victim.txt";
  std::ofstream(victim) << "precious";
  fs::create_directories(d.inbox / "failed");
  fs::create_symlink(victim, d.inbox / "failed" / "bad.jsonl.reason.txt");
  d.drop("bad.jsonl", std::string("\0\0binary", 8));
  REQUIRE(d.run(d.serve_once()) == 0);
  CHECK(slurp(victim) == "precious");
  CHECK(fs::is_symlink(d.inbox / "failed" / "bad.jsonl.reason.txt"));
  // The manifest took the next free name, with its own reason file.
  CHECK(fs::exists(d.inbox / "failed" / "bad.1.jsonl"));
  CHECK_THAT(slurp(d.inbox / "failed" / "bad.1.jsonl.reason.txt"), Catch::Contains("NUL byte"));
}

TEST_CASE("row 4: inbox links are refused and paths outside the roots reveal nothing",
          "[daemon][hardening]") {
  Dataset d;
  const fs::path elsewhere = d.dir.path() / "elsewhere.jsonl";
  std::ofstream(elsewhere) << text_line("secret", "a manifest outside the inbox");
  fs::create_symlink(elsewhere, d.inbox / "link.jsonl");
  const fs::path secret = d.dir.path() / "secret.txt";
  std::ofstream(secret) << "root:x:0:0";
  d.drop("paths.jsonl", path_line("exists", secret.string()) +
                            path_line("missing", (d.dir.path() / "no-such-file").string()) +
                            path_line("dotdot", "../../secret.txt") +
                            path_line("shadow", "/etc/shadow"));
  REQUIRE(d.run(d.serve_once()) == 0);
  CHECK(fs::is_symlink(d.inbox / "failed" / "link.jsonl"));
  CHECK_THAT(slurp(d.inbox / "failed" / "link.jsonl.reason.txt"), Catch::Contains("symbolic link"));
  const auto reasons = rejections(d);
  REQUIRE(reasons.size() == 4);
  // The same words whether the file exists or not, and no excerpt of it.
  auto without_path = [](std::string reason, const std::string& path) {
    return reason.replace(reason.find(path), path.size(), "P");
  };
  CHECK(without_path(reasons.at("exists"), secret.string()) ==
        without_path(reasons.at("missing"), (d.dir.path() / "no-such-file").string()));
  for (const auto& [key, reason] : reasons) {
    CHECK_THAT(reason, !Catch::Contains("root:x") && Catch::Contains("content root"));
  }
  CHECK(d.status()["total"] == 4);  // nothing from elsewhere.jsonl
}

TEST_CASE("a path record's link is followed while it stays beneath the content root",
          "[daemon][hardening]") {
  Dataset d;
  const fs::path secret = d.dir.path() / "secret.txt";
  std::ofstream(secret) << "root:x:0:0";
  fs::create_directories(d.inbox / "files");
  std::ofstream(d.inbox / "files" / "notes.txt") << "a note kept beneath the root";
  fs::create_symlink("notes.txt", d.inbox / "files" / "inside.txt");     // stays beneath
  fs::create_symlink(secret, d.inbox / "files" / "outside.txt");         // leads out
  fs::create_symlink("../../secret.txt", d.inbox / "files" / "up.txt");  // leads out too
  d.drop("links.jsonl", path_line("inside", (d.inbox / "files" / "inside.txt").string()) +
                            path_line("outside", (d.inbox / "files" / "outside.txt").string()) +
                            path_line("up", (d.inbox / "files" / "up.txt").string()));
  REQUIRE(d.run(d.serve_once()) == 0);
  const auto reasons = rejections(d);
  // Read through the link: this text dataset then cannot embed a file, but
  // nothing says the file could not be reached.
  REQUIRE(reasons.count("inside") == 1);
  CHECK_THAT(reasons.at("inside"), Catch::Contains("cannot embed") &&
                                       !Catch::Contains("content root") &&
                                       !Catch::Contains("symbolic link"));
  REQUIRE(reasons.count("outside") == 1);
  REQUIRE(reasons.count("up") == 1);
  for (const std::string key : {"outside", "up"}) {
    CHECK_THAT(reasons.at(key), !Catch::Contains("root:x") && Catch::Contains("content root"));
  }
  CHECK(d.status()["total"] == 3);
}

TEST_CASE("row 5: a manifest written in place is taken only once it holds still",
          "[daemon][hardening]") {
  Dataset d;
  const auto daemon = d.serve("2000");
  {
    std::ofstream out(d.inbox / "inplace.jsonl");
    // Texts far apart: "text of line N" and "text of line M" are near duplicates.
    const char* const texts[] = {"alpha centauri", "binary search", "copper wire",  "dune sand",
                                 "echo chamber",   "fjord water",   "granite slab", "hollow log",
                                 "iris blossom",   "jasper stone"};
    for (int i = 0; i < 10; ++i) {  // a line every 100 ms, well inside one poll interval
      out << text_line("line" + std::to_string(i), texts[i]);
      out.flush();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }
  REQUIRE(poll_until([&] { return fs::exists(d.inbox / "processed" / "inplace.jsonl"); }));
  daemon->signal(SIGTERM);
  REQUIRE(daemon->wait() == 0);
  CHECK(d.status()["accepted"] == 10);
}

TEST_CASE("row 6: a database locked by another writer delays a manifest, never fails it",
          "[daemon][hardening]") {
  Dataset d;
  const auto daemon = d.serve("100");
  {
    winnow::store::Database holder(d.db);
    holder.exec("BEGIN IMMEDIATE");  // the write lock, as `winnow ingest` or `regain` hold it
    d.drop("m.jsonl", text_line("a", "held back"));
    // Past the daemon's first try (claimed within a second, busy after its 5 s
    // timeout), with room for a loaded machine.
    std::this_thread::sleep_for(std::chrono::seconds(9));
    holder.exec("COMMIT");
  }
  REQUIRE(poll_until([&] { return fs::exists(d.inbox / "processed" / "m.jsonl"); }, 120.0));
  CHECK(fs::is_empty(d.inbox / "failed"));
  CHECK(d.heartbeat()["manifests"]["retried"].get<int>() >= 1);
  daemon->signal(SIGTERM);
  REQUIRE(daemon->wait() == 0);
  CHECK(d.status()["accepted"] == 1);
}

TEST_CASE("row 7: a second daemon on the same database exits at once, naming the first",
          "[daemon][hardening]") {
  Dataset d;
  const auto first = d.serve("500", "first");
  const fs::path other_inbox = d.dir.path() / "other-inbox";
  CliProcess second(d.dir.path(),
                    {"serve", "--db", d.db, "--inbox", other_inbox.string(), "--no-http"},
                    "second");
  REQUIRE(second.wait(30) == 4);  // busy
  const json heartbeat = d.heartbeat();
  CHECK_THAT(second.err(), Catch::Contains("pid " + std::to_string(heartbeat["pid"].get<int>())));
  CHECK_FALSE(fs::exists(other_inbox));  // it touched nothing
  first->signal(SIGTERM);
  REQUIRE(first->wait() == 0);
}

TEST_CASE("row 8: an index file that cannot be saved is a warning, not a failed manifest",
          "[daemon][hardening]") {
  Dataset d;
  d.drop("m.jsonl", text_line("a", "alpha record") + text_line("b", "beta record"));
  const fs::path index_file = d.db + ".index";
  fs::remove(index_file);
  fs::create_directories(index_file / "in-the-way");  // the save's rename cannot replace it
  REQUIRE(d.run(d.serve_once()) == 0);
  CHECK(fs::exists(d.inbox / "processed" / "m.jsonl"));
  CHECK(fs::is_empty(d.inbox / "failed"));
  const json heartbeat = d.heartbeat();
  CHECK(heartbeat["manifests"]["ingested"] == 1);
  CHECK_THAT(heartbeat["last"]["error"].get<std::string>(), Catch::Contains("warning"));
  // The save tried again when the daemon stopped failed too: said in the heartbeat.
  REQUIRE(heartbeat.contains("index_save_error"));
  CHECK_THAT(heartbeat["index_save_error"].get<std::string>(), Catch::Contains(".index"));
  fs::remove_all(index_file);
  const json status = d.status();  // the index is rebuilt from the store
  CHECK(status["accepted"] == 2);
  CHECK(status["index"]["vectors"] == 2);
}

TEST_CASE("row 9: memory does not grow with the manifest (records are streamed)",
          "[daemon][hardening]") {
  Dataset d;
  // Copies of one 2 KB text: exact duplicates, so the store grows little and
  // what is measured is the manifest held in memory (or not).
  const std::string text(2000, 'w');
  auto manifest = [&](const std::string& name, int records) {
    const fs::path path = d.dir.path() / name;
    std::ofstream out(path);
    for (int i = 0; i < records; ++i) out << text_line(name + std::to_string(i), text);
    return path.string();
  };
  auto peak_kib = [&](const std::string& path) {
    CliProcess ingest(d.dir.path(), {"ingest", "--db", d.db, path}, "ingest");
    const auto rc = ingest.wait();
    INFO(ingest.err());
    REQUIRE(rc == 0);
    return ingest.max_rss_kib();
  };
  const long small = peak_kib(manifest("small", 500));    // 1 MB
  const long large = peak_kib(manifest("large", 25000));  // 50 MB
  INFO("peak RSS " << small << " KiB for 1 MB, " << large << " KiB for 50 MB");
#if defined(__SANITIZE_ADDRESS__)
  // ASan keeps freed memory in quarantine (256 MB), so RSS follows everything
  // ever allocated; the normal build checks the bound.
  WARN("AddressSanitizer build: peak RSS not compared");
#else
  CHECK(large - small < 25 * 1024);  // holding the manifest would add >= 50 MB
#endif
  CHECK(d.status()["duplicate_exact"] == 25499);
}
