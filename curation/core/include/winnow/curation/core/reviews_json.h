// reviews_json: the JSON form of a store's reviews (a person's verdicts,
// `winnow review`) that `status` and the report share: how many samples a
// person decided, by verdict and by reviewer.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winnow/store/review_record.h"

namespace winnow::curation {

// {"samples": N, "by_verdict": {"keep": n, ...}, "by_reviewer": {"ann": n, ...}}
// ("" for a verdict without a reviewer's name).
inline nlohmann::json reviews_json(const std::vector<store::ReviewRecord>& reviews) {
  std::map<std::string, std::int64_t> by_verdict, by_reviewer;
  for (const store::ReviewRecord& r : reviews) {
    ++by_verdict[std::string(to_string(r.verdict))];
    ++by_reviewer[r.reviewer];
  }
  return {{"samples", reviews.size()}, {"by_verdict", by_verdict}, {"by_reviewer", by_reviewer}};
}

}  // namespace winnow::curation
