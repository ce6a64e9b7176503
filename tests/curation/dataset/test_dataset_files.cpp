// Where a Dataset keeps its index file: always beside the database and named
// after it (index_path_of). A path stored in the database never redirects the
// writes, a copied database gets an index of its own, and a FIFO planted at
// the index's path neither blocks a command nor is written through.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_pipeline.h"
#include "support/temp_dir.h"

namespace {

using nlohmann::json;
using winnow::curation::CurationConfig;
using winnow::curation::IndexSnapshots;
using winnow::curation::readers::file_checksum;
using winnow::curation::readers::read_manifest;
using winnow::store::SampleStatus;
namespace fs = std::filesystem;

// A manifest of `n` text records with 4-value embeddings, keys PREFIX-i.
std::string manifest(const winnow::test::TempDir& dir, const std::string& prefix, int n) {
  const std::string path = dir.file(prefix + ".jsonl");
  std::ofstream out(path);
  for (int i = 0; i < n; ++i) {
    std::vector<float> e = {1.0f, static_cast<float>(i), static_cast<float>(i * i % 7), 0.5f};
    out << json{{"key", prefix + "-" + std::to_string(i)},
                {"text", prefix + " number " + std::to_string(i)},
                {"embedding", e}}
               .dump()
        << "\n";
  }
  return path;
}

// The samples an index holds: the accepted and the label issues.
std::size_t judged(winnow::test::Pipeline& p) {
  const auto counts = p.store().count_by_status();
  return static_cast<std::size_t>(counts[SampleStatus::accepted] +
                                  counts[SampleStatus::label_issue]);
}

void ingest(const std::string& db, const std::string& m) {
  winnow::test::Pipeline p(db);
  p.set_index_snapshots(IndexSnapshots::every_batch);
  const auto r = p.ingest_batch(m, file_checksum(m), read_manifest(m));
  REQUIRE(r.counts.total() > 0);
}

std::string bytes_of(const std::string& path) {
  return winnow::test::slurp(path);
}

int run_cli(const std::string& args) {
  const std::string command =
      "timeout 60 " + std::string(WINNOW_CLI_PATH) + " " + args + " > /dev/null 2>&1";
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

struct TextDataset {
  winnow::test::TempDir dir;
  std::string db = dir.file("a.db");
  TextDataset() {
    CurationConfig config;
    config.embedder = "provided(dim=4)";
    winnow::test::Pipeline::init(db, config);
    ingest(db, manifest(dir, "first", 20));
    REQUIRE(fs::is_regular_file(db + ".index"));
  }
};

}  // namespace

TEST_CASE("the index file is the database's own, whatever the database says", "[dataset][files]") {
  TextDataset d;
  for (const std::string& stored :
       {d.dir.file("elsewhere.bin"), std::string("a.db"), std::string("../escape.index")}) {
    INFO(stored);
    {
      winnow::test::Pipeline p(d.db);
      p.store().set_meta("index.file", stored);
    }
    ingest(d.db, manifest(d.dir, "more" + std::to_string(stored.size()), 5));
    winnow::test::Pipeline p(d.db);
    CHECK(p.index_info().file == d.db + ".index");
    CHECK(p.store().count_by_status().total() > 20);  // the database is a database still
    CHECK_FALSE(fs::exists(d.dir.file("elsewhere.bin")));
    CHECK_FALSE(fs::exists(d.dir.file("../escape.index")));
  }
}

TEST_CASE("a copied database builds an index of its own and leaves the original's alone",
          "[dataset][files]") {
  TextDataset d;
  const std::string original = bytes_of(d.db + ".index");
  const std::string copy = d.dir.file("b.db");
  fs::copy_file(d.db, copy);
  {
    winnow::test::Pipeline first_open(copy);  // builds its own index from its own store
    CHECK(first_open.index_info().rebuilt);
    CHECK_THAT(first_open.index_info().rebuild_reason, Catch::Contains(copy + ".index"));
  }
  ingest(copy, manifest(d.dir, "copy", 10));
  CHECK(bytes_of(d.db + ".index") == original);
  REQUIRE(fs::is_regular_file(copy + ".index"));
  winnow::test::Pipeline b(copy);
  CHECK(b.index_info().file == copy + ".index");
  CHECK(b.index_info().vectors == judged(b));
  winnow::test::Pipeline a(d.db);
  CHECK(a.index_info().vectors == judged(a));
  CHECK(judged(b) > judged(a));
}

TEST_CASE("a FIFO at the index's path blocks no command and is replaced by a rebuilt index",
          "[dataset][files]") {
  TextDataset d;
  const std::string index = d.db + ".index";
  fs::remove(index);
  REQUIRE(::mkfifo(index.c_str(), 0644) == 0);
  // Read-only commands and a write, each bounded by `timeout`: none blocks.
  CHECK(run_cli("status --json --db " + d.db) == 0);
  CHECK(run_cli("export --db " + d.db) == 0);
  CHECK(run_cli("ingest --db " + d.db + " " + manifest(d.dir, "after", 5)) == 0);
  winnow::test::Pipeline p(d.db);
  CHECK(fs::is_regular_file(index));
  CHECK(p.index_info().vectors == judged(p));
  CHECK(p.store().count_by_status().total() == 25);
}
