// Every command's standard output is checked: onto a device that refuses the
// write (/dev/full answers ENOSPC, as a full disk does), status, export and
// report exit 5 with a message instead of 0 with a truncated file.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "daemon/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

namespace {

const std::string kFashionMnist = "/usr/share/datasets/fashion-mnist/";

// Runs `winnow ARGS > OUT 2> ERR`; returns the exit code.
int run_cli(const std::string& args, const std::string& out, const std::string& err) {
  const std::string command =
      "timeout 120 " + std::string(WINNOW_CLI_PATH) + " " + args + " > " + out + " 2> " + err;
  INFO(command);
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("a command whose output cannot be written exits 5 and says so", "[cli][output]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string err = dir.file("err.txt");
  REQUIRE(run_cli("init --db " + db, "/dev/null", err) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 300 " + kFashionMnist +
                      "t10k-images-idx3-ubyte.gz " + kFashionMnist + "t10k-labels-idx1-ubyte.gz",
                  "/dev/null", err) == 0);

  for (const std::string args : {"export --db " + db, "export --format csv --db " + db,
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
