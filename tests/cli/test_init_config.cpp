// `winnow init` on a database that holds samples: a different config is
// refused naming only the fields that differ, not two whole configs.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using winnow::test::run_cli;

TEST_CASE("init on a dataset with samples names the config fields that differ", "[cli][init]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  REQUIRE(run_cli("init --db " + db, out) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 50 " + winnow::test::kFashionTestIdx,
                  out) == 0);
  CHECK(run_cli("init --db " + db, out) == 0);  // the same config: nothing to say
  REQUIRE(run_cli("init --db " + db + " --candidates 5", out) == 1);
  const std::string said = winnow::test::slurp(out);
  CHECK_THAT(said, Catch::Contains("candidates: 10 here, 5 asked") &&
                       Catch::Contains("use a new database") &&
                       !Catch::Contains("label_k"));  // only what differs
}

TEST_CASE("init without options on a dataset with samples keeps its stored config", "[cli][init]") {
  // A dataset made with settings other than today's defaults (as one made by
  // an older winnow is): an init that asks for nothing new keeps them.
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  const std::string out = dir.file("out.txt");
  REQUIRE(run_cli("init --db " + db + " --label-k 30 --keep first", out) == 0);
  REQUIRE(run_cli("import-idx -q --db " + db + " --limit 50 " + winnow::test::kFashionTestIdx,
                  out) == 0);
  REQUIRE(run_cli("init --db " + db, out) == 0);
  CHECK_THAT(winnow::test::slurp(out),
             Catch::Contains("\"label_k\":30") && Catch::Contains("\"keep\":\"first\""));
  // What is asked on purpose still has to match.
  REQUIRE(run_cli("init --db " + db + " --label-k 40", out) == 1);
  CHECK_THAT(winnow::test::slurp(out),
             Catch::Contains("label_k: 30 here, 40 asked") && !Catch::Contains("keep"));
}
