// Every command's standard output is checked: onto a device that refuses the
// write (/dev/full answers ENOSPC, as a full disk does), status, export and
// report exit 5 with a message instead of 0 with a truncated file.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using winnow::test::run_cli;

TEST_CASE("a command whose output cannot be written exits 5 and says so", "[cli][output]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string err = dir.file("err.txt");
  REQUIRE(run_cli("init --db " + db, "/dev/null", err) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 300 " + winnow::test::kFashionTestIdx,
                  "/dev/null", err) == 0);

  for (const std::string& args : {"export --db " + db, "export --format csv --db " + db,
                                  "status --json --db " + db, "report --format json --db " + db}) {
    INFO(args);
    CHECK(run_cli(args, dir.file("whole.txt"), err) == 0);  // the same command, written fully
    CHECK(winnow::test::slurp(dir.file("whole.txt")).size() > 0);
    CHECK(run_cli(args, "/dev/full", err) == 5);
    CHECK_THAT(winnow::test::slurp(err),
               Catch::Contains("cannot write the output to standard output") &&
                   Catch::Contains("No space left on device"));
  }
}
