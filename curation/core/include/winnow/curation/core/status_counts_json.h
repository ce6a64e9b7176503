// counts_json: the JSON form of a StatusCounts that every output shares (the
// CLI, the daemon's heartbeat, the quality report): {"accepted": n, ...,
// "rejected": n, "total": n}.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "winnow/store/sample_record.h"
#include "winnow/store/sample_status.h"

namespace winnow::curation {

inline nlohmann::json counts_json(const store::StatusCounts& counts) {
  nlohmann::json j = nlohmann::json::object();
  for (store::SampleStatus status : store::kAllSampleStatuses) {
    j[std::string(store::to_string(status))] = counts[status];
  }
  j["total"] = counts.total();
  return j;
}

}  // namespace winnow::curation
