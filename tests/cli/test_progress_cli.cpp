// Progress lines of long commands: drawn on a terminal (`script` gives the CLI
// one), absent with --quiet and when stderr is not a terminal, so scripts see
// only the JSON summary.
#include <catch2/catch.hpp>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "support/curation_test_helpers.h"
#include "support/cli_process.h"  // winnow::test::slurp

namespace {

const std::string kFashionMnist = "/usr/share/datasets/fashion-mnist/";

// Runs `winnow ARGS` under `script`, which gives it a terminal; everything it
// printed (stdout and stderr share the terminal); REQUIREs the exit code.
std::string run_on_terminal(const winnow::curation::test::ScratchDir& dir, const std::string& args,
                            const std::string& tag, int expected_exit = 0) {
  const std::string out = dir.file(tag + ".txt");
  const std::string command = "timeout 120 script -qec '" + std::string(WINNOW_CLI_PATH) + " " +
                              args + "' /dev/null > " + out + " 2>&1";
  INFO(command);
  const int status = std::system(command.c_str());
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == expected_exit);
  return winnow::test::slurp(out);
}

}  // namespace

TEST_CASE(
    "ingest, import-idx and regain draw a progress line with a rate and an ETA on a terminal only",
    "[cli][progress]") {
  winnow::curation::test::ScratchDir dir;
  const std::string db = dir.file("data.db");
  REQUIRE(std::system(
              (std::string(WINNOW_CLI_PATH) + " init --db " + db + " > /dev/null").c_str()) == 0);
  const std::string idx =
      kFashionMnist + "t10k-images-idx3-ubyte.gz " + kFashionMnist + "t10k-labels-idx1-ubyte.gz";

  const std::string shown =
      run_on_terminal(dir, "import-idx --db " + db + " --limit 500 " + idx, "import-idx");
  // At a terminal the summary is for a person (the JSON with --json).
  CHECK_THAT(shown, Catch::Contains("500 / 500 images (100%)") && Catch::Contains("ETA") &&
                        Catch::Contains("batch 1, 500 records in") &&
                        Catch::Contains(" accepted, ") && !Catch::Contains("seconds by phase") &&
                        !Catch::Contains("\"batch\":1"));

  std::ofstream(dir.file("m.jsonl")) << "{\"key\": \"a\", \"text\": \"one\", \"label\": \"x\"}\n"
                                     << "{\"key\": \"b\", \"text\": \"two\", \"label\": \"y\"}\n";
  const std::string ingest =
      // Text into this pixels dataset: both rejected, so the command exits 1.
      run_on_terminal(dir, "ingest --db " + db + " " + dir.file("m.jsonl"), "ingest", 1);
  CHECK_THAT(ingest, Catch::Contains("100% of 0.0 MB") && Catch::Contains("2 records") &&
                         Catch::Contains("batch 2, 2 records in") &&
                         Catch::Contains("rejected because:"));

  const std::string regain = run_on_terminal(dir, "regain --labels --db " + db, "regain");
  CHECK_THAT(regain, Catch::Contains("label neighbours: ") && Catch::Contains("samples (100%)") &&
                         Catch::Contains("\"gains_updated\""));
  const std::string regain_quiet =
      run_on_terminal(dir, "regain --labels --quiet --db " + db, "regain-quiet");
  CHECK_THAT(regain_quiet, !Catch::Contains("ETA") && Catch::Contains("\"gains_updated\""));

  const std::string report =
      run_on_terminal(dir, "report --db " + db + " --out " + dir.file("report.json"), "report");
  CHECK_THAT(report, Catch::Contains("Dawid-Skene and agreement: 3 of 5 steps") &&
                         Catch::Contains("report built: 5 of 5 steps"));
  CHECK(run_on_terminal(dir, "report --quiet --db " + db + " --out " + dir.file("r2.json"),
                        "report-quiet")
            .find("steps") == std::string::npos);

  // --quiet on a terminal, and no terminal at all: the JSON summary alone.
  const std::string quiet = run_on_terminal(
      dir, "import-idx --db " + db + " --quiet --json --limit 600 --prefix q " + idx, "quiet");
  CHECK_THAT(quiet, !Catch::Contains("ETA") && Catch::Contains("\"batch\":3"));
  const std::string verbose = run_on_terminal(
      dir, "import-idx --db " + db + " --quiet --verbose --limit 650 --prefix v " + idx, "verbose");
  CHECK_THAT(verbose, Catch::Contains("seconds by phase: ") && Catch::Contains("batch 4,"));
  const std::string plain = dir.file("plain");
  REQUIRE(
      std::system((std::string(WINNOW_CLI_PATH) + " import-idx --db " + db +
                   " --limit 700 --prefix p " + idx + " > " + plain + ".out 2> " + plain + ".err")
                      .c_str()) == 0);
  // No progress line (the label check may say on stderr that it abstained).
  const std::string plain_err = winnow::test::slurp(plain + ".err");
  CHECK_THAT(plain_err, !Catch::Contains("ETA") && !Catch::Contains("\r"));
  CHECK_THAT(winnow::test::slurp(plain + ".out"), Catch::Contains("\"batch\":5"));
}
