// DaemonStatus: what the maintenance daemon is doing, shared between the
// ingest loop (which writes it) and the threads that report it (heartbeat
// file, HTTP endpoint), behind one mutex. Readers get a copy as JSON and never
// touch the store, which belongs to the ingest loop's thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include <nlohmann/json.hpp>

namespace winnow::curation::daemon {

class DaemonStatus {
 public:
  DaemonStatus();

  // The loop's state: "starting", "idle", "processing", "stopping" or "stopped".
  void set_state(const std::string& state, const std::string& current_file = "");
  // A manifest was handled: outcome "ingested", "skipped" (already ingested)
  // or "failed"; samples = records it brought in; seconds = time taken;
  // `summary` (an object: counts, rejections) is merged into the "last" entry.
  void record_outcome(const std::string& outcome, const std::string& file, std::int64_t samples,
                      double seconds, const std::string& error = "",
                      const nlohmann::json& summary = nlohmann::json::object());
  // The dataset as of the last committed batch (winnow status --json's form).
  void set_dataset(nlohmann::json dataset);
  // Extra fields shown as they are (e.g. the HTTP address).
  void set_extra(const std::string& key, nlohmann::json value);

  // {pid, state, current_file, started_at, heartbeat_at, uptime_seconds,
  //  manifests: {ingested, skipped, failed}, samples_ingested, last: {...},
  //  dataset: {...}, ...extra}
  nlohmann::json snapshot() const;

 private:
  mutable std::mutex mutex_;
  std::chrono::system_clock::time_point started_;
  nlohmann::json state_;
};

// Seconds since the Unix epoch of `t`, and its ISO-8601 UTC form.
double unix_seconds(std::chrono::system_clock::time_point t);
std::string iso8601_utc(std::chrono::system_clock::time_point t);

}  // namespace winnow::curation::daemon
