// A user's own files behind symbolic links (git-annex and DVC caches,
// Debian's packages) are read by `winnow ingest` as every tool reads them: a
// manifest that is a link, and `path` records naming links, relative or not.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <vector>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using winnow::test::run_cli;

namespace fs = std::filesystem;

TEST_CASE("ingest follows a user's symbolic links: the manifest and its files", "[cli][links]") {
  winnow::curation::test::ScratchDir dir;
  const fs::path root = dir.file("annex");
  fs::create_directories(root / "objects");
  fs::create_directories(root / "data");
  // The files themselves live in objects/ (two of Debian's clip-art PNGs);
  // data/ holds links to them, one relative, one absolute.
  std::vector<fs::path> pngs;
  for (const auto& e : fs::recursive_directory_iterator("/usr/share/openclipart/png")) {
    if (e.is_regular_file() && e.path().extension() == ".png") pngs.push_back(e.path());
  }
  std::sort(pngs.begin(), pngs.end());
  REQUIRE(pngs.size() >= 2);
  fs::copy_file(pngs[0], root / "objects" / "one.png");
  fs::copy_file(pngs[1], root / "objects" / "two.png");
  fs::create_symlink("../objects/one.png", root / "data" / "one.png");
  fs::create_symlink(root / "objects" / "two.png", root / "data" / "two.png");
  // The manifest, behind a link too; its relative paths are read from where
  // the user named it (root/).
  std::ofstream(root / "objects" / "m.jsonl")
      << R"({"key": "one", "path": "data/one.png"})"
      << "\n"
      << R"({"key": "two", "path": ")" << (root / "data" / "two.png").string() << "\"}\n";
  fs::create_symlink(root / "objects" / "m.jsonl", root / "manifest.jsonl");

  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("ingest -q --db " + db + " " + (root / "manifest.jsonl").string(), out) == 0);
  const nlohmann::json summary = nlohmann::json::parse(winnow::test::slurp(out));
  CHECK(summary["counts"]["total"] == 2);
  CHECK(summary["counts"]["rejected"] == 0);
}
