// LabelJudgementLog: which ranges of samples are due for re-judging as the
// dataset grows (their doubtful samples, or all of them), how re-judged
// ranges merge, and its meta text refused when it is not what the pipeline
// wrote.
#include <catch2/catch.hpp>

#include "winnow/curation/review/label_judgement_log.h"
#include "winnow/error.h"

using Catch::Matchers::Contains;
using winnow::curation::review::DueRange;
using winnow::curation::review::DueTier;
using winnow::curation::review::JudgedRange;
using winnow::curation::review::LabelJudgementLog;

namespace {

// "first:d", "first:u" or "first:a": the doubtful, unsure or all samples of
// the range starting at `first` are due.
std::vector<std::string> due_text(const std::vector<DueRange>& due) {
  std::vector<std::string> out;
  for (const DueRange& d : due) {
    const char* tier = d.tier == DueTier::doubtful ? ":d" : d.tier == DueTier::unsure ? ":u" : ":a";
    out.push_back(std::to_string(d.range.first_id) + tier);
  }
  return out;
}

}  // namespace

TEST_CASE("doubtful samples are due after a quarter growth step, unsure after three, all after six",
          "[labels][log]") {
  LabelJudgementLog log;
  log.add(1, 100, 0);  // judged against nothing: all of it as soon as due
  log.add(101, 200, 1000);
  log.add(201, 300, 2000);
  const std::int64_t whole_below = 300;
  // 1,600 voters, growth 0.5: doubtful due below 1,446 (1600 / 1.5^0.25); unsure below 474
  // (1600 / 3.375); all below 140 (1600 / 11.39) and below whole_below.
  CHECK(due_text(log.due(1600, 0.5, whole_below)) == std::vector<std::string>{"1:a", "101:d"});
  CHECK(log.due(0, 0.5, whole_below).empty());  // nothing is due in an empty dataset

  log.rejudged(1600, 0.5, whole_below);
  REQUIRE(log.ranges().size() == 3);
  CHECK(log.ranges()[0].voters == 1600);
  CHECK(log.ranges()[0].unsure_voters == 1600);
  CHECK(log.ranges()[0].all_voters == 1600);
  CHECK(log.ranges()[1].voters == 1600);
  CHECK(log.ranges()[1].unsure_voters == 1000);  // only its doubtful samples were judged
  CHECK(log.ranges()[1].all_voters == 1000);
  CHECK(log.due(1600, 0.5, whole_below).empty());
  // Growth to 3,376: range 2's doubtful due again, and its unsure (1000 * 3.375).
  CHECK(due_text(log.due(3376, 0.5, whole_below)) ==
        std::vector<std::string>{"1:d", "101:u", "201:d"});
  log.rejudged(3376, 0.5, whole_below);
  CHECK(log.ranges()[1].unsure_voters == 3376);
  CHECK(log.ranges()[1].all_voters == 1000);
  // Range 2's confident samples wait for 1000 * 1.5^6 = 11,390.6.
  CHECK(due_text(log.due(11390, 0.5, whole_below)) ==
        std::vector<std::string>{"1:u", "101:d", "201:u"});
  CHECK(due_text(log.due(11392, 0.5, whole_below)) ==
        std::vector<std::string>{"1:u", "101:a", "201:u"});
}

TEST_CASE("a tier comes due on its own count, however recently the doubtful were judged",
          "[labels][log]") {
  LabelJudgementLog log;
  log.add(1, 10, 1000);
  log.rejudged(1600, 0.5, 300);  // doubtful at 1,600
  log.rejudged(2500, 0.5, 300);  // doubtful at 2,500
  log.rejudged(3100, 0.5, 300);  // doubtful at 3,100
  REQUIRE(log.ranges()[0].voters == 3100);
  // Unsure due past 3,375 although the doubtful were judged 1.09 times ago.
  CHECK(log.due(3375, 0.5, 300).empty());
  CHECK(due_text(log.due(3376, 0.5, 300)) == std::vector<std::string>{"1:u"});
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
  CHECK(log.ranges()[0].unsure_voters == 1000);
  CHECK(log.ranges()[0].all_voters == 1000);
  CHECK(log.ranges()[0].last_id == 100);
}

TEST_CASE("the log round-trips through its meta text and refuses another", "[labels][log]") {
  LabelJudgementLog log;
  log.add(5, 9, 3);
  log.add(12, 40, 700);
  log.rejudged(1100, 0.5, 300);  // the first all, the second's doubtful
  const LabelJudgementLog back = LabelJudgementLog::from_json(log.to_json());
  REQUIRE(back.ranges().size() == 2);
  CHECK(back.ranges()[1].first_id == 12);
  CHECK(back.ranges()[1].voters == 1100);
  CHECK(back.ranges()[1].unsure_voters == 700);
  CHECK(back.ranges()[1].all_voters == 700);
  // Written before the unsure tier: four numbers, unsure_voters = all_voters.
  const LabelJudgementLog old = LabelJudgementLog::from_json("[[1,5,900,400]]");
  CHECK(old.ranges()[0].voters == 900);
  CHECK(old.ranges()[0].unsure_voters == 400);
  CHECK(old.ranges()[0].all_voters == 400);

  CHECK_THROWS_WITH(LabelJudgementLog::from_json("{"),
                    Contains("curation.label_judgements") && Contains("not a JSON array"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,2,3]]"), Contains("[first_id, last_id"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[3,2,1,1]]"), Contains("bad range"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,1,1],[5,9,1,1]]"),
                    Contains("does not follow"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,-1,-1]]"), Contains("0 <= all_voters"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,4,7]]"), Contains("<= voters"));
  CHECK_THROWS_WITH(LabelJudgementLog::from_json("[[1,5,9,3,4]]"),
                    Contains("all_voters <= unsure_voters"));
}
