// `winnow init` on a database that holds samples: a different config is
// refused naming only the fields that differ, not two whole configs.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "daemon/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

namespace {

const std::string kFashionMnist = "/usr/share/datasets/fashion-mnist/";

int run_cli(const std::string& args, const std::string& out) {
  const std::string command =
      "timeout 120 " + std::string(WINNOW_CLI_PATH) + " " + args + " > " + out + " 2>&1";
  INFO(command);
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  return WEXITSTATUS(status);
}

}  // namespace

TEST_CASE("init on a dataset with samples names the config fields that differ", "[cli][init]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 50 " + kFashionMnist +
                      "t10k-images-idx3-ubyte.gz " + kFashionMnist + "t10k-labels-idx1-ubyte.gz",
                  out) == 0);
  CHECK(run_cli("init --db " + db, out) == 0);  // the same config: nothing to say
  REQUIRE(run_cli("init --db " + db + " --candidates 5", out) == 1);
  const std::string said = winnow::test::slurp(out);
  CHECK_THAT(said, Catch::Contains("candidates: 10 here, 5 asked") &&
                       Catch::Contains("use a new database") &&
                       !Catch::Contains("label_k"));  // only what differs
}
