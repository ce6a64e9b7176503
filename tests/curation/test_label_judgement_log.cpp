// LabelJudgementLog: which ranges of samples are due for re-judging as the
// dataset grows, how re-judged ranges merge, and its meta text refused when
// it is not what the pipeline wrote.
#include <catch2/catch.hpp>

#include "winnow/curation/ingest/label_judgement_log.h"
#include "winnow/error.h"

using Catch::Matchers::Contains;
using winnow::curation::ingest::JudgedRange;
using winnow::curation::ingest::LabelJudgementLog;

namespace {

std::vector<std::int64_t> firsts(const std::vector<JudgedRange>& ranges) {
  std::vector<std::int64_t> out;
  for (const JudgedRange& r : ranges) out.push_back(r.first_id);
  return out;
}

}  // namespace

TEST_CASE("ranges judged against fewer than voters / (1 + growth) are stale", "[labels][log]") {
  LabelJudgementLog log;
  log.add(1, 100, 0);
  log.add(101, 200, 100);
  log.add(201, 300, 200);
  // 300 voters, growth 0.5: stale below 200.
  CHECK(firsts(log.stale(300, 0.5)) == std::vector<std::int64_t>{1, 101});
  // growth 1: stale below 150.
  CHECK(firsts(log.stale(300, 1.0)) == std::vector<std::int64_t>{1, 101});
  CHECK(firsts(log.stale(199, 1.0)) == std::vector<std::int64_t>{1});
  CHECK(log.stale(0, 0.5).empty());  // nothing is stale in an empty dataset

  log.rejudged(300, 0.5);
  // The two re-judged ranges now say 300 and merged; 200 is not within 1/16 of it.
  REQUIRE(log.ranges().size() == 2);
  CHECK(log.ranges()[0].first_id == 1);
  CHECK(log.ranges()[0].last_id == 200);
  CHECK(log.ranges()[0].voters == 300);
  CHECK(log.ranges()[1].voters == 200);
  CHECK(log.stale(300, 0.5).empty());
  CHECK(firsts(log.stale(301, 0.5)) == std::vector<std::int64_t>{201});
}

TEST_CASE("close neighbours merge under the smaller count, so none is re-judged late",
          "[labels][log]") {
  LabelJudgementLog log;
  for (std::int64_t chunk = 0; chunk < 10; ++chunk) {
    log.add(chunk * 10 + 1, chunk * 10 + 10, 1000 + chunk);  // within 1% of each other
  }
  log.rejudged(1000, 0.5);  // nothing stale; the ten merge
  REQUIRE(log.ranges().size() == 1);
  CHECK(log.ranges()[0].voters == 1000);
  CHECK(log.ranges()[0].last_id == 100);
}

TEST_CASE("the log round-trips through its meta text and refuses another", "[labels][log]") {
  LabelJudgementLog log;
  log.add(5, 9, 3);
  log.add(12, 40, 7);
  const LabelJudgementLog back = LabelJudgementLog::from_json(log.to_json());
  REQUIRE(back.ranges().size() == 2);
  CHECK(back.ranges()[1].first_id == 12);
  CHECK(back.ranges()[1].voters == 7);

  CHECK_THROWS_WITH(LabelJudgementLog::from_json("{"),
                    Contains("curation.label_judgements") && Contains("not a JSON array"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,2]]"), Contains("[first_id, last_id"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[3,2,1]]"), Contains("bad range"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,1],[5,9,1]]"), Contains("does not follow"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,-1]]"), Contains("bad range"));
}
