// A batch mostly refused says so on stderr with its most common reason and
// what would help; a batch whose every record was rejected exits 1.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <string>

#include "cli_run.h"
#include "support/cli_process.h"  // winnow::test::slurp
#include "support/curation_test_helpers.h"

using winnow::test::run_cli;

TEST_CASE("text into a pixels dataset: refused with the reason and the fix, exit 1",
          "[cli][outcome]") {
  winnow::curation::test::ScratchDir dir;
  const std::string out = dir.file("out.txt"), err = dir.file("err.txt");
  {
    std::ofstream(dir.file("text.jsonl"))
        << R"({"key": "a", "text": "one paragraph of a man page"})"
        << "\n"
        << R"({"key": "b", "text": "and another, quite different"})"
        << "\n"
        << R"({"key": "c", "text": "a third one to make it three"})"
        << "\n";
  }
  const std::string pixels = dir.file("pixels.db");
  REQUIRE(run_cli("init --db " + pixels + " --embedder 'pixels(width=28,height=28,fourier=6)'", out,
                  err) == 0);
  CHECK(run_cli("ingest -q --db " + pixels + " " + dir.file("text.jsonl"), out, err) == 1);
  const std::string said = winnow::test::slurp(err);
  CHECK_THAT(said, Catch::Contains("3 of 3 records were rejected") &&
                       Catch::Contains("the pixels embedder needs an image") &&
                       Catch::Contains("--embedder 'hashed-ngrams(n=3,dim=256)'"));
  CHECK(winnow::test::slurp(out).find("\"rejected\":3") != std::string::npos);  // JSON as before

  // The same file into a text dataset: accepted, nothing said, exit 0.
  const std::string text = dir.file("text.db");
  REQUIRE(run_cli("init --db " + text + " --embedder 'hashed-ngrams(n=3,dim=256)'", out, err) == 0);
  CHECK(run_cli("ingest -q --db " + text + " " + dir.file("text.jsonl"), out, err) == 0);
  CHECK(winnow::test::slurp(err).empty());
}

TEST_CASE("a dataset made without --embedder takes the first content's embedder",
          "[cli][outcome]") {
  winnow::curation::test::ScratchDir dir;
  const std::string out = dir.file("out.txt"), err = dir.file("err.txt");
  std::ofstream(dir.file("text.jsonl")) << R"({"key": "a", "text": "one paragraph of a man page"})"
                                        << "\n"
                                        << R"({"key": "b", "text": "and another, quite different"})"
                                        << "\n";
  const std::string db = dir.file("auto.db");
  REQUIRE(run_cli("init --db " + db, out, err) == 0);
  CHECK(winnow::test::slurp(out).find("\"embedder_auto\":true") != std::string::npos);
  CHECK(run_cli("ingest -q --db " + db + " " + dir.file("text.jsonl"), out, err) == 0);
  CHECK(winnow::test::slurp(out).find("\"accepted\":2") != std::string::npos);
  // Said on a terminal only (this stderr is a file); status shows it.
  CHECK(winnow::test::slurp(err).empty());
  REQUIRE(run_cli("status --json --db " + db, out, err) == 0);
  CHECK(winnow::test::slurp(out).find("\"embedder\": \"hashed-ngrams(n=3,dim=256") !=
        std::string::npos);
  // init again without --embedder keeps the choice.
  CHECK(run_cli("init --db " + db, out, err) == 0);

  // Once a sample holds an embedding, the choice stays: images are refused.
  CHECK(run_cli("import-idx -q --limit 5 --db " + db + " " + winnow::test::kFashionTestIdx, out,
                err) == 1);
  CHECK_THAT(winnow::test::slurp(err), !Catch::Contains("chose the embedder"));

  // Pixel arrays first: the pixels default.
  const std::string images = dir.file("images.db");
  REQUIRE(run_cli("init --db " + images, out, err) == 0);
  CHECK(run_cli("import-idx -q --limit 50 --db " + images + " " + winnow::test::kFashionTestIdx,
                out, err) == 0);
  REQUIRE(run_cli("status --json --db " + images, out, err) == 0);
  CHECK(winnow::test::slurp(out).find("\"embedder\": \"pixels(width=28,height=28,") !=
        std::string::npos);
}

TEST_CASE("a batch refused for the dataset's embedder is taken with --redo once init fixed it",
          "[cli][outcome][redo]") {
  winnow::curation::test::ScratchDir dir;
  const std::string out = dir.file("out.txt"), err = dir.file("err.txt");
  const std::string text = dir.file("text.jsonl");
  std::ofstream(text) << R"({"key": "a", "text": "one paragraph of a man page"})"
                      << "\n"
                      << R"({"key": "b", "text": "and another, quite different"})"
                      << "\n";
  const std::string db = dir.file("d.db");
  REQUIRE(run_cli("init --db " + db + " --embedder 'pixels(width=28,height=28,fourier=6)'", out,
                  err) == 0);
  CHECK(run_cli("ingest -q --db " + db + " " + text, out, err) == 1);  // all refused
  // No sample holds an embedding: init may change the config.
  REQUIRE(run_cli("init --db " + db + " --embedder 'hashed-ngrams(n=3,dim=256)'", out, err) == 0);
  CHECK(run_cli("ingest -q --db " + db + " " + text, out, err) == 0);
  CHECK(winnow::test::slurp(out).find("\"skipped\":true") != std::string::npos);
  CHECK(run_cli("ingest -q --redo --db " + db + " " + text, out, err) == 0);
  const std::string redone = winnow::test::slurp(out);
  CHECK(redone.find("\"accepted\":2") != std::string::npos);
  CHECK(redone.find("\"batch\":2") != std::string::npos);
  // The records came in under their own keys, the refused ones kept apart.
  REQUIRE(run_cli("export --db " + db + " --status accepted", out, err) == 0);
  const std::string accepted = winnow::test::slurp(out);
  CHECK(accepted.find("\"key\":\"a\"") != std::string::npos);
  CHECK(accepted.find("\"key\":\"b\"") != std::string::npos);
  // Now a sample holds an embedding: the config stays.
  CHECK(run_cli("init --db " + db + " --embedder 'pixels(width=28,height=28,fourier=6)'", out,
                err) == 1);
  CHECK_THAT(winnow::test::slurp(err), Catch::Contains("once a sample holds an embedding"));
  // --redo again: a third batch, whose records find their keys taken.
  CHECK(run_cli("ingest -q --redo --db " + db + " " + text, out, err) == 1);
  CHECK(winnow::test::slurp(out).find("\"batch\":3") != std::string::npos);
}
