// The commands that only read (status, export, report) read a database the
// user may not write: another user's file, mode 644, in a folder of theirs.
// Run as root, the test reads as `nobody` (setpriv); as another user it
// cannot change users and says so.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

namespace fs = std::filesystem;
using winnow::test::run_cli;

TEST_CASE("status, export and report read a database the user may not write", "[cli][read_only]") {
  if (::geteuid() != 0) {
    WARN("not root: cannot read as another user; skipped");
    return;
  }
  winnow::curation::test::ScratchDir dir;
  const std::string out = dir.file("out.txt"), err = dir.file("err.txt");
  const fs::path folder = fs::path(dir.file("theirs"));
  fs::create_directories(folder);
  const std::string db = (folder / "data.db").string();
  REQUIRE(run_cli("init --db " + db, out, err) == 0);
  REQUIRE(run_cli("import-idx -q --limit 200 --db " + db + " " + winnow::test::kFashionTestIdx, out,
                  err) == 0);
  // The owner's files as they are after a clean end: the WAL checkpointed away.
  fs::remove(db + "-wal");
  fs::remove(db + "-shm");
  fs::permissions(dir.file(""), fs::perms::owner_all | fs::perms::group_read |
                                    fs::perms::group_exec | fs::perms::others_read |
                                    fs::perms::others_exec);
  fs::permissions(folder, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                              fs::perms::others_read | fs::perms::others_exec);
  fs::permissions(db, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read |
                          fs::perms::others_read);
  const std::string nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
  // run_cli puts the program first: the line is built here, under setpriv.
  const auto read_as_nobody = [&](const std::string& args) {
    const std::string command = nobody + WINNOW_CLI_PATH + " " + args + " > " + out + " 2> " + err;
    const int status = std::system(command.c_str());
    REQUIRE(WIFEXITED(status));
    return WEXITSTATUS(status);
  };
  CHECK(read_as_nobody("status --db " + db) == 0);
  CHECK_THAT(winnow::test::slurp(out), Catch::Contains("200 samples"));
  CHECK(read_as_nobody("status --check --json --db " + db) == 0);
  CHECK_THAT(winnow::test::slurp(out), Catch::Contains("\"quick_check\": \"ok\""));
  CHECK(read_as_nobody("export --db " + db + " --format csv") == 0);
  CHECK_THAT(winnow::test::slurp(out), Catch::Contains("id,key,content_hash"));
  CHECK(read_as_nobody("report --db " + db + " --format md") == 0);
  CHECK_THAT(winnow::test::slurp(out), Catch::Contains("# Annotation quality report"));
  // Nothing was written beside it, and a writing command is refused with
  // SQLite's reason.
  CHECK_FALSE(fs::exists(db + "-shm"));
  CHECK(read_as_nobody("import-idx -q --limit 5 --prefix x --db " + db + " " +
                       winnow::test::kFashionTestIdx) != 0);
  CHECK_THAT(winnow::test::slurp(err), Catch::Contains("readonly"));
}
