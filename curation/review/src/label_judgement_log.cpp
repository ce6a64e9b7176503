#include "winnow/curation/review/label_judgement_log.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include <nlohmann/json.hpp>

#include "winnow/error.h"

namespace winnow::curation::review {

namespace {

// Whether a verdict against `then` voters is due after `steps` factors of 1 + growth.
bool grown(std::int64_t then, std::int64_t voters_now, double growth, double steps) {
  return static_cast<double>(then) * std::pow(1.0 + growth, steps) <
         static_cast<double>(voters_now);
}

// What is due in `r` at voters_now, if anything: the widest tier due. Each
// tier is checked on its own count, so that re-judging the doubtful samples
// recently never delays the others.
std::optional<DueRange> due_in(const JudgedRange& r, std::int64_t voters_now, double growth,
                               std::int64_t whole_below) {
  const bool doubtful_due =
      grown(r.voters, voters_now, growth, LabelJudgementLog::kDoubtfulGrowthSteps);
  if (grown(r.all_voters, voters_now, growth, LabelJudgementLog::kConfidentGrowthSteps) ||
      (doubtful_due && r.all_voters < whole_below)) {
    return DueRange{r, DueTier::all};
  }
  if (grown(r.unsure_voters, voters_now, growth, LabelJudgementLog::kUnsureGrowthSteps)) {
    return DueRange{r, DueTier::unsure};
  }
  if (doubtful_due) return DueRange{r, DueTier::doubtful};
  return std::nullopt;
}

bool close(std::int64_t a, std::int64_t b, double factor) {
  return static_cast<double>(std::max(a, b)) <= static_cast<double>(std::min(a, b)) * factor;
}

}  // namespace

std::int64_t DueRange::judged_against() const {
  switch (tier) {
    case DueTier::doubtful:
      return range.voters;
    case DueTier::unsure:
      return range.unsure_voters;
    case DueTier::all:
      break;
  }
  return range.all_voters;
}

LabelJudgementLog LabelJudgementLog::from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_array(), "meta {}: not a JSON array: '{}'", kMetaKey,
                      text.substr(0, 80));
  LabelJudgementLog log;
  for (const nlohmann::json& r : j) {
    WINNOW_THROW_IF_NOT(
        r.is_array() && (r.size() == 4 || r.size() == 5) &&
            std::all_of(r.begin(), r.end(),
                        [](const nlohmann::json& v) { return v.is_number_integer(); }),
        "meta {}: entry {} is not [first_id, last_id, voters, unsure_voters, all_voters]", kMetaKey,
        r.dump());
    const auto voters = r[2].get<std::int64_t>();
    const auto all_voters = r[r.size() - 1].get<std::int64_t>();
    const auto unsure_voters = r.size() == 5 ? r[3].get<std::int64_t>() : all_voters;
    WINNOW_THROW_IF_NOT(
        0 <= all_voters && all_voters <= unsure_voters && unsure_voters <= voters,
        "meta {}: entry {} does not have 0 <= all_voters <= unsure_voters <= voters", kMetaKey,
        r.dump());
    log.add(r[0].get<std::int64_t>(), r[1].get<std::int64_t>(), voters);
    log.ranges_.back().unsure_voters = unsure_voters;
    log.ranges_.back().all_voters = all_voters;
  }
  return log;
}

std::string LabelJudgementLog::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const JudgedRange& r : ranges_) {
    j.push_back({r.first_id, r.last_id, r.voters, r.unsure_voters, r.all_voters});
  }
  return j.dump();
}

void LabelJudgementLog::add(std::int64_t first_id, std::int64_t last_id, std::int64_t voters) {
  WINNOW_THROW_IF_NOT(first_id >= 0 && first_id <= last_id && voters >= 0,
                      "label judgement log: bad range [{}, {}] judged against {} voters", first_id,
                      last_id, voters);
  WINNOW_THROW_IF_NOT(ranges_.empty() || first_id > ranges_.back().last_id,
                      "label judgement log: range [{}, {}] does not follow [{}, {}]", first_id,
                      last_id, ranges_.back().first_id, ranges_.back().last_id);
  ranges_.push_back({first_id, last_id, voters, voters, voters});
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
    if (d->tier != DueTier::doubtful) r.unsure_voters = voters_now;
    if (d->tier == DueTier::all) r.all_voters = voters_now;
  }
  const double factor = 1.0 + growth / 8.0;
  std::vector<JudgedRange> merged;
  for (const JudgedRange& r : ranges_) {
    if (!merged.empty()) {
      JudgedRange& last = merged.back();
      if (close(last.voters, r.voters, factor) &&
          close(last.unsure_voters, r.unsure_voters, factor) &&
          close(last.all_voters, r.all_voters, factor)) {
        last.last_id = r.last_id;
        last.voters = std::min(last.voters, r.voters);
        last.unsure_voters = std::min(last.unsure_voters, r.unsure_voters);
        last.all_voters = std::min(last.all_voters, r.all_voters);
        continue;
      }
    }
    merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

}  // namespace winnow::curation::review
