// MaintenanceDaemon: the loop behind `winnow serve`. It watches an Inbox and
// ingests every manifest that appears there exactly once, as one batch of the
// dataset's IngestPipeline, then moves it to processed/ (or failed/, with the
// reason). A heartbeat thread rewrites a small JSON status file (atomically)
// every interval, also while a long batch is running.
//
// Exactly once, also across SIGKILL: the batch's samples, its counts and its
// "done" state commit in one SQLite transaction, keyed by the manifest's
// checksum. A daemon killed before that commit leaves the manifest in
// processing/ and the batch "running": on restart the manifest is claimed
// again and the batch redone from scratch. Killed after the commit but before
// the move, the batch is "done" and the manifest is only moved. The index file
// is a cache the pipeline rebuilds from the store when it is stale.
//
// Stopping: request_stop() (async-signal-safe: it only sets an atomic flag)
// lets the current batch finish, then run() returns.
#pragma once

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "winnow/curation/daemon_status.h"
#include "winnow/curation/inbox.h"
#include "winnow/curation/ingest_pipeline.h"

namespace winnow::curation {

struct MaintenanceDaemonOptions {
  std::string db;                          // an initialised dataset (winnow init)
  std::filesystem::path inbox;             // watched folder
  std::filesystem::path heartbeat_file;    // empty: <db>.serve.json
  std::chrono::milliseconds poll{500};     // inbox scan and heartbeat interval
  bool once = false;  // handle what is waiting (and interrupted), then return
};

class MaintenanceDaemon {
 public:
  // How the dataset is described in the status (after each batch, on the
  // loop's thread); by default the counts per status.
  using Describe = std::function<nlohmann::json(IngestPipeline&)>;

  // Opens the dataset (rebuilding its index if needed) and the inbox; throws
  // winnow::Error when either cannot be used.
  MaintenanceDaemon(MaintenanceDaemonOptions options, DaemonStatus& status,
                    Describe describe = nullptr);
  ~MaintenanceDaemon();

  // Runs until request_stop() (or, with `once`, until the inbox is empty).
  // Returns the number of manifests handled.
  std::size_t run();

  void request_stop() { stop_.store(true); }

  const std::filesystem::path& heartbeat_file() const { return options_.heartbeat_file; }

 private:
  // Ingests one claimed manifest and moves it on; never throws for a bad
  // manifest (it goes to failed/).
  void handle(const std::filesystem::path& claimed);
  void publish_dataset();
  void write_heartbeat();

  MaintenanceDaemonOptions options_;
  DaemonStatus& status_;
  Describe describe_;
  Inbox inbox_;
  IngestPipeline pipeline_;
  std::atomic<bool> stop_{false};
};

}  // namespace winnow::curation
