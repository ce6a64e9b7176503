#include "winnow/curation/ingest/label_judgement_log.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "winnow/error.h"

namespace winnow::curation::ingest {

namespace {

// What is due in `r` at voters_now, if anything.
std::optional<DueRange> due_in(const JudgedRange& r, std::int64_t voters_now, double growth,
                               std::int64_t whole_below) {
  const auto now = static_cast<double>(voters_now);
  if (static_cast<double>(r.voters) * (1.0 + growth) >= now) return std::nullopt;
  const double confident_growth = std::pow(1.0 + growth, LabelJudgementLog::kConfidentGrowthSteps);
  const bool whole =
      r.all_voters < whole_below || static_cast<double>(r.all_voters) * confident_growth < now;
  return DueRange{r, whole};
}

bool close(std::int64_t a, std::int64_t b, double factor) {
  return static_cast<double>(std::max(a, b)) <= static_cast<double>(std::min(a, b)) * factor;
}

}  // namespace

LabelJudgementLog LabelJudgementLog::from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_array(), "meta {}: not a JSON array: '{}'", kMetaKey,
                      text.substr(0, 80));
  LabelJudgementLog log;
  for (const nlohmann::json& r : j) {
    WINNOW_THROW_IF_NOT(
        r.is_array() && r.size() == 4 &&
            std::all_of(r.begin(), r.end(),
                        [](const nlohmann::json& v) { return v.is_number_integer(); }),
        "meta {}: entry {} is not [first_id, last_id, voters, all_voters]", kMetaKey, r.dump());
    const auto voters = r[2].get<std::int64_t>(), all_voters = r[3].get<std::int64_t>();
    WINNOW_THROW_IF_NOT(all_voters >= 0 && all_voters <= voters,
                        "meta {}: entry {} has all_voters outside [0, voters]", kMetaKey, r.dump());
    log.add(r[0].get<std::int64_t>(), r[1].get<std::int64_t>(), voters);
    log.ranges_.back().all_voters = all_voters;
  }
  return log;
}

std::string LabelJudgementLog::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const JudgedRange& r : ranges_) j.push_back({r.first_id, r.last_id, r.voters, r.all_voters});
  return j.dump();
}

void LabelJudgementLog::add(std::int64_t first_id, std::int64_t last_id, std::int64_t voters) {
  WINNOW_THROW_IF_NOT(first_id >= 0 && first_id <= last_id && voters >= 0,
                      "label judgement log: bad range [{}, {}] judged against {} voters", first_id,
                      last_id, voters);
  WINNOW_THROW_IF_NOT(ranges_.empty() || first_id > ranges_.back().last_id,
                      "label judgement log: range [{}, {}] does not follow [{}, {}]", first_id,
                      last_id, ranges_.back().first_id, ranges_.back().last_id);
  ranges_.push_back({first_id, last_id, voters, voters});
}

std::vector<DueRange> LabelJudgementLog::due(std::int64_t voters_now, double growth,
                                             std::int64_t whole_below) const {
  std::vector<DueRange> out;
  for (const JudgedRange& r : ranges_) {
    if (std::optional<DueRange> d = due_in(r, voters_now, growth, whole_below)) out.push_back(*d);
  }
  return out;
}

void LabelJudgementLog::rejudged(std::int64_t voters_now, double growth, std::int64_t whole_below) {
  for (JudgedRange& r : ranges_) {
    const std::optional<DueRange> d = due_in(r, voters_now, growth, whole_below);
    if (!d) continue;
    r.voters = voters_now;
    if (d->whole) r.all_voters = voters_now;
  }
  const double factor = 1.0 + growth / 8.0;
  std::vector<JudgedRange> merged;
  for (const JudgedRange& r : ranges_) {
    if (!merged.empty()) {
      JudgedRange& last = merged.back();
      if (close(last.voters, r.voters, factor) && close(last.all_voters, r.all_voters, factor)) {
        last.last_id = r.last_id;
        last.voters = std::min(last.voters, r.voters);
        last.all_voters = std::min(last.all_voters, r.all_voters);
        continue;
      }
    }
    merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

}  // namespace winnow::curation::ingest
