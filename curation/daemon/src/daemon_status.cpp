#include "winnow/curation/daemon/daemon_status.h"

#include <unistd.h>

#include <ctime>
#include <utility>

#include <fmt/format.h>

namespace winnow::curation::daemon {

using nlohmann::json;

double unix_seconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

std::string iso8601_utc(std::chrono::system_clock::time_point t) {
  const std::time_t s = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&s, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

DaemonStatus::DaemonStatus() : started_(std::chrono::system_clock::now()) {
  state_ = {{"pid", static_cast<std::int64_t>(::getpid())},
            {"state", "starting"},
            {"current_file", nullptr},
            {"started_at", iso8601_utc(started_)},
            {"started_at_unix", unix_seconds(started_)},
            {"manifests",
             {{"ingested", 0}, {"skipped", 0}, {"failed", 0}, {"retried", 0}, {"interrupted", 0}}},
            {"samples_ingested", 0},
            {"last", nullptr},
            {"dataset", nullptr}};
}

void DaemonStatus::set_state(const std::string& state, const std::string& current_file) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_["state"] = state;
  state_["current_file"] = current_file.empty() ? json(nullptr) : json(current_file);
}

void DaemonStatus::record_outcome(const std::string& outcome, const std::string& file,
                                  std::int64_t samples, double seconds, const std::string& error,
                                  const json& summary) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_["manifests"][outcome] = state_["manifests"][outcome].get<std::int64_t>() + 1;
  state_["samples_ingested"] = state_["samples_ingested"].get<std::int64_t>() + samples;
  json last = {{"file", file},
               {"outcome", outcome},
               {"samples", samples},
               {"seconds", seconds},
               {"finished_at", iso8601_utc(std::chrono::system_clock::now())}};
  if (!error.empty()) last["error"] = error;
  for (const auto& [key, value] : summary.items()) last[key] = value;
  state_["last"] = std::move(last);
}

void DaemonStatus::set_dataset(json dataset) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_["dataset"] = std::move(dataset);
}

void DaemonStatus::set_extra(const std::string& key, json value) {
  std::lock_guard<std::mutex> lock(mutex_);
  state_[key] = std::move(value);
}

json DaemonStatus::snapshot() const {
  const auto now = std::chrono::system_clock::now();
  std::lock_guard<std::mutex> lock(mutex_);
  json j = state_;
  j["heartbeat_at"] = iso8601_utc(now);
  j["heartbeat_at_unix"] = unix_seconds(now);
  j["uptime_seconds"] = std::chrono::duration<double>(now - started_).count();
  return j;
}

}  // namespace winnow::curation::daemon
