#include "winnow/curation/ingest/label_judgement_log.h"

#include <algorithm>
#include <cmath>

#include <nlohmann/json.hpp>

#include "winnow/error.h"

namespace winnow::curation::ingest {

namespace {

bool is_stale(const JudgedRange& r, std::int64_t voters_now, double growth) {
  return static_cast<double>(r.voters) * (1.0 + growth) < static_cast<double>(voters_now);
}

}  // namespace

LabelJudgementLog LabelJudgementLog::from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  WINNOW_THROW_IF_NOT(j.is_array(), "meta {}: not a JSON array: '{}'", kMetaKey,
                      text.substr(0, 80));
  LabelJudgementLog log;
  for (const nlohmann::json& r : j) {
    WINNOW_THROW_IF_NOT(r.is_array() && r.size() == 3 && r[0].is_number_integer() &&
                            r[1].is_number_integer() && r[2].is_number_integer(),
                        "meta {}: entry {} is not [first_id, last_id, voters]", kMetaKey, r.dump());
    log.add(r[0].get<std::int64_t>(), r[1].get<std::int64_t>(), r[2].get<std::int64_t>());
  }
  return log;
}

std::string LabelJudgementLog::to_json() const {
  nlohmann::json j = nlohmann::json::array();
  for (const JudgedRange& r : ranges_) j.push_back({r.first_id, r.last_id, r.voters});
  return j.dump();
}

void LabelJudgementLog::add(std::int64_t first_id, std::int64_t last_id, std::int64_t voters) {
  WINNOW_THROW_IF_NOT(first_id >= 0 && first_id <= last_id && voters >= 0,
                      "label judgement log: bad range [{}, {}] judged against {} voters", first_id,
                      last_id, voters);
  WINNOW_THROW_IF_NOT(ranges_.empty() || first_id > ranges_.back().last_id,
                      "label judgement log: range [{}, {}] does not follow [{}, {}]", first_id,
                      last_id, ranges_.back().first_id, ranges_.back().last_id);
  ranges_.push_back({first_id, last_id, voters});
}

std::vector<JudgedRange> LabelJudgementLog::stale(std::int64_t voters_now, double growth) const {
  std::vector<JudgedRange> out;
  std::copy_if(ranges_.begin(), ranges_.end(), std::back_inserter(out),
               [&](const JudgedRange& r) { return is_stale(r, voters_now, growth); });
  return out;
}

void LabelJudgementLog::rejudged(std::int64_t voters_now, double growth) {
  for (JudgedRange& r : ranges_) {
    if (is_stale(r, voters_now, growth)) r.voters = voters_now;
  }
  const double close = 1.0 + growth / 8.0;
  std::vector<JudgedRange> merged;
  for (const JudgedRange& r : ranges_) {
    if (!merged.empty()) {
      JudgedRange& last = merged.back();
      const auto low = static_cast<double>(std::min(last.voters, r.voters));
      const auto high = static_cast<double>(std::max(last.voters, r.voters));
      if (high <= low * close) {
        last.last_id = r.last_id;
        last.voters = std::min(last.voters, r.voters);
        continue;
      }
    }
    merged.push_back(r);
  }
  ranges_ = std::move(merged);
}

}  // namespace winnow::curation::ingest
