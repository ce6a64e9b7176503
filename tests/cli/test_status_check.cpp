// `winnow status --check` runs SQLite's quick_check: a database whose index
// pages were damaged (as random byte flips do) still answers a plain `status`
// with exit 0, but --check names the damage and exits 6 (corrupt).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using winnow::test::run_cli;

namespace {

// The root page of the samples' key index, by asking sqlite3 (Debian's CLI).
long key_index_root(const winnow::curation::test::ScratchDir& dir, const std::string& db) {
  const std::string out = dir.file("root.txt");
  const std::string command = "sqlite3 " + db +
                              " \"SELECT rootpage FROM sqlite_schema WHERE name = "
                              "'sqlite_autoindex_samples_1'\" > " +
                              out;
  REQUIRE(std::system(command.c_str()) == 0);
  return std::stol(winnow::test::slurp(out));
}

}  // namespace

TEST_CASE("status --check finds a damaged index page that plain status does not", "[cli][status]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 300 " + winnow::test::kFashionTestIdx,
                  out) == 0);
  REQUIRE(run_cli("status --check --json --db " + db, out) == 0);
  CHECK(nlohmann::json::parse(winnow::test::slurp(out))["check"]["quick_check"] == "ok");

  // The second half of the key index's root page (4 KiB pages), overwritten.
  const long root = key_index_root(dir, db);
  {
    std::fstream f(db, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((root - 1) * 4096 + 2048);
    const std::string pattern(2048, '\x55');
    f.write(pattern.data(), static_cast<std::streamsize>(pattern.size()));
    REQUIRE(f.good());
  }
  CHECK(run_cli("status --json --db " + db, out) == 0);  // the damage is not on its path
  CHECK(run_cli("status --check --json --db " + db, out) == 6);
  const nlohmann::json j = nlohmann::json::parse(winnow::test::slurp(out));
  REQUIRE(j["check"]["quick_check"].is_array());
  CHECK_THAT(j["check"]["quick_check"][0].get<std::string>(),
             Catch::Contains("page " + std::to_string(root)));
  CHECK(run_cli("status --check --db " + db, out) == 6);
  CHECK_THAT(winnow::test::slurp(out), Catch::Contains("found by SQLite's quick_check"));
}
