// LabelJudgementLog: which ranges of samples are due for re-judging as the
// dataset grows (their doubtful samples, or all of them), how re-judged
// ranges merge, and its meta text refused when it is not what the pipeline
// wrote.
#include <catch2/catch.hpp>

#include "winnow/curation/ingest/label_judgement_log.h"
#include "winnow/error.h"

using Catch::Matchers::Contains;
using winnow::curation::ingest::DueRange;
using winnow::curation::ingest::JudgedRange;
using winnow::curation::ingest::LabelJudgementLog;

namespace {

// "first:w" for a whole range due, "first:d" for its doubtful samples.
std::vector<std::string> due_text(const std::vector<DueRange>& due) {
  std::vector<std::string> out;
  for (const DueRange& d : due) {
    out.push_back(std::to_string(d.range.first_id) + (d.whole ? ":w" : ":d"));
  }
  return out;
}

}  // namespace

TEST_CASE("doubtful samples are due after one growth step, all after three", "[labels][log]") {
  LabelJudgementLog log;
  log.add(1, 100, 0);  // judged against nothing: whole as soon as due
  log.add(101, 200, 1000);
  log.add(201, 300, 2000);
  const std::int64_t whole_below = 300;
  // 1,600 voters, growth 0.5: due below 1,066; whole below 474 (1600 / 3.375).
  CHECK(due_text(log.due(1600, 0.5, whole_below)) == std::vector<std::string>{"1:w", "101:d"});
  CHECK(log.due(0, 0.5, whole_below).empty());  // nothing is due in an empty dataset

  log.rejudged(1600, 0.5, whole_below);
  REQUIRE(log.ranges().size() == 3);
  CHECK(log.ranges()[0].voters == 1600);
  CHECK(log.ranges()[0].all_voters == 1600);
  CHECK(log.ranges()[1].voters == 1600);
  CHECK(log.ranges()[1].all_voters == 1000);  // only its doubtful samples were judged
  CHECK(log.due(1600, 0.5, whole_below).empty());
  // Growth to 3,375: range 2's doubtful due again, and now all of it (1000 * 3.375).
  CHECK(due_text(log.due(3376, 0.5, whole_below)) ==
        std::vector<std::string>{"1:d", "101:w", "201:d"});
}

TEST_CASE("close neighbours merge under the smaller counts, so none is re-judged late",
          "[labels][log]") {
  LabelJudgementLog log;
  for (std::int64_t chunk = 0; chunk < 10; ++chunk) {
    log.add(chunk * 10 + 1, chunk * 10 + 10, 1000 + chunk);  // within 1% of each other
  }
  log.rejudged(1000, 0.5, 300);  // nothing due; the ten merge
  REQUIRE(log.ranges().size() == 1);
  CHECK(log.ranges()[0].voters == 1000);
  CHECK(log.ranges()[0].all_voters == 1000);
  CHECK(log.ranges()[0].last_id == 100);
}

TEST_CASE("the log round-trips through its meta text and refuses another", "[labels][log]") {
  LabelJudgementLog log;
  log.add(5, 9, 3);
  log.add(12, 40, 700);
  log.rejudged(1100, 0.5, 300);  // the first whole, the second's doubtful
  const LabelJudgementLog back = LabelJudgementLog::from_json(log.to_json());
  REQUIRE(back.ranges().size() == 2);
  CHECK(back.ranges()[1].first_id == 12);
  CHECK(back.ranges()[1].voters == 1100);
  CHECK(back.ranges()[1].all_voters == 700);

  CHECK_THROWS_WITH(LabelJudgementLog::from_json("{"),
                    Contains("curation.label_judgements") && Contains("not a JSON array"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,2,3]]"), Contains("[first_id, last_id"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[3,2,1,1]]"), Contains("bad range"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,1,1],[5,9,1,1]]"),
                    Contains("does not follow"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,-1,-1]]"), Contains("outside"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,4,7]]"), Contains("outside"));
}
