// `winnow import-folder` as a user runs it: the real CLI on a folder tree with
// a FIFO and a symbolic link (followed) in it, its JSON summary against `winnow ingest`'s,
// a second run on the grown folder, and a text dataset refused.
#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/cli_process.h"
#include "folder_tree.h"
#include "support/temp_dir.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using winnow::image::test::write_picture;
using winnow::test::CliProcess;

std::set<std::string> field_names(const json& j) {
  std::set<std::string> names;
  for (const auto& item : j.items()) names.insert(item.key());
  return names;
}

// Runs the CLI to its end (at most 60 s: a walk that blocked would fail
// here); its stdout. REQUIREs `expected_exit`.
std::string run_cli(const fs::path& dir, const std::vector<std::string>& args,
                    const std::string& tag, int expected_exit = 0) {
  CliProcess cli(dir, args, tag);
  const std::optional<int> exit_code = cli.wait(60);
  INFO(tag << " stderr: " << cli.err());
  REQUIRE(exit_code.has_value());
  REQUIRE(*exit_code == expected_exit);
  if (expected_exit == 0) CHECK(cli.err().empty());  // no terminal: no progress line
  return expected_exit == 0 ? cli.out() : cli.err();
}

}  // namespace

TEST_CASE("import-folder CLI: summary as ingest's, special files refused, re-run adds new files",
          "[image][folder][cli]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "photos";
  for (unsigned i = 0; i < 4; ++i) write_picture(root, "cats/" + std::to_string(i) + ".jpg", i);
  for (unsigned i = 0; i < 3; ++i)
    write_picture(root, "dogs/x/" + std::to_string(i) + ".jpg", 9 + i);
  REQUIRE(::mkfifo((root / "dogs" / "fifo.jpg").c_str(), 0644) == 0);
  fs::create_symlink(root / "cats" / "0.jpg", root / "cats" / "link.jpg");
  std::ofstream(root / ".DS_Store") << "hidden";
  const std::string db = dir.file("data.db");
  run_cli(dir.path(), {"init", "--db", db}, "init");

  const json first = json::parse(run_cli(
      dir.path(), {"import-folder", "--db", db, "--source", "vendor", root.string()}, "import1"));
  CHECK(first["counts"]["total"] == 9);
  CHECK(first["counts"]["accepted"] == 7);
  CHECK(first["counts"]["rejected"] == 1);         // the FIFO
  CHECK(first["counts"]["duplicate_exact"] == 1);  // the link, read: cats/0.jpg's bytes
  CHECK(first["already_imported"] == 0);
  CHECK(first["hidden_skipped"] == 1);
  CHECK(first["skipped"] == false);
  CHECK(first["file"] == root.string());

  // The same shape as `winnow ingest`'s summary (one rejected record there too).
  {
    std::ofstream manifest(dir.file("m.jsonl"));
    manifest << json{{"key", "t1"}, {"path", (root / "cats" / "1.jpg").string()}}.dump() << "\n"
             << "not json\n";
  }
  const json ingest =
      json::parse(run_cli(dir.path(), {"ingest", "--db", db, dir.file("m.jsonl")}, "ingest"));
  std::set<std::string> expected = field_names(ingest);
  expected.insert({"already_imported", "hidden_skipped"});
  CHECK(field_names(first) == expected);
  CHECK(field_names(first["counts"]) == field_names(ingest["counts"]));
  CHECK(field_names(first["rejections"][0]) == field_names(ingest["rejections"][0]));

  // Grown by two files: only they are ingested.
  write_picture(root, "cats/new.jpg", 20);
  write_picture(root, "birds/new.jpg", 21);
  const json second = json::parse(run_cli(
      dir.path(), {"import-folder", "--db", db, "--source", "vendor", root.string()}, "import2"));
  CHECK(second["counts"]["total"] == 2);
  CHECK(second["counts"]["accepted"] == 2);
  CHECK(second["already_imported"] == 9);
  CHECK(second["batch"] != first["batch"]);

  // Every sample from the folder has the source and its class folder's label.
  std::size_t from_folder = 0;
  std::istringstream exported(run_cli(dir.path(), {"export", "--db", db}, "export"));
  for (std::string line; std::getline(exported, line);) {
    const json s = json::parse(line);
    if (s["key"] == "t1" || s["key"].get<std::string>().find("#rejected") != std::string::npos)
      continue;
    ++from_folder;
    CHECK(s["source"] == "vendor");
    const std::string key = s["key"];
    if (s["status"] != "rejected") CHECK(s["label"] == key.substr(0, key.find('/')));
  }
  CHECK(from_folder == 11);
}

TEST_CASE("import-folder CLI: a text dataset is refused", "[image][folder][cli]") {
  winnow::test::TempDir dir;
  write_picture(dir.path() / "photos", "cats/0.jpg", 0);
  const std::string db = dir.file("text.db");
  run_cli(dir.path(), {"init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"}, "init");
  const std::string err = run_cli(
      dir.path(), {"import-folder", "--db", db, (dir.path() / "photos").string()}, "import", 1);
  CHECK_THAT(err, Catch::Contains("needs an image embedder"));
  CHECK_THAT(err, Catch::Contains("hashed-ngrams"));
  const json status = json::parse(run_cli(dir.path(), {"status", "--db", db, "--json"}, "status"));
  CHECK(status["total"] == 0);
}
