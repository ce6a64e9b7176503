// Inbox: the folder protocol on its own (claims, moves, names never reused).
#include <catch2/catch.hpp>

#include <fstream>

#include "support/temp_dir.h"
#include "winnow/curation/daemon/inbox.h"
#include "winnow/error.h"

namespace fs = std::filesystem;
using winnow::curation::daemon::Inbox;

namespace {

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

}  // namespace

TEST_CASE("an inbox lists only finished manifests and moves them exactly once", "[inbox]") {
  winnow::test::TempDir dir;
  Inbox inbox(dir.path() / "inbox");
  write(inbox.folder() / "a.jsonl", "{}\n");
  write(inbox.folder() / ".b.jsonl", "{}\n");        // hidden: being written
  write(inbox.folder() / "c.jsonl.part", "{}\n");    // not a manifest name
  fs::create_directory(inbox.folder() / "d.jsonl");  // a folder
  auto waiting = inbox.waiting();
  REQUIRE(waiting.size() == 1);
  CHECK(waiting[0].filename() == "a.jsonl");

  auto claimed = inbox.claim(waiting[0]);
  REQUIRE(claimed);
  CHECK(claimed->parent_path() == inbox.processing_dir());
  CHECK_FALSE(inbox.claim(waiting[0]));  // already taken
  CHECK(inbox.waiting().empty());
  CHECK(inbox.interrupted().size() == 1);

  const fs::path done = inbox.mark_processed(*claimed);
  CHECK(fs::exists(done));
  CHECK(inbox.interrupted().empty());

  // The same name again: the first processed file is kept, the second numbered.
  write(inbox.folder() / "a.jsonl", "{\"x\":1}\n");
  const fs::path second = inbox.mark_processed(*inbox.claim(inbox.folder() / "a.jsonl"));
  CHECK(second.filename() == "a.1.jsonl");
  CHECK(fs::exists(done));
}

TEST_CASE("a failed manifest keeps its reason beside it", "[inbox]") {
  winnow::test::TempDir dir;
  Inbox inbox(dir.path() / "inbox");
  write(inbox.folder() / "bad.jsonl", "x");
  const fs::path failed = inbox.mark_failed(*inbox.claim(inbox.folder() / "bad.jsonl"), "why");
  CHECK(failed.parent_path() == inbox.failed_dir());
  std::ifstream reason(failed.string() + ".reason.txt");
  std::string line;
  std::getline(reason, line);
  CHECK(line == "why");
}

TEST_CASE("an inbox path that is a file is refused by name", "[inbox]") {
  winnow::test::TempDir dir;
  write(dir.path() / "file", "x");
  CHECK_THROWS_WITH(Inbox(dir.path() / "file"), Catch::Contains("file"));
}
