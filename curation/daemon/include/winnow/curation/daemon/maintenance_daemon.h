// MaintenanceDaemon: the loop behind `winnow serve`. It ingests every manifest
// that appears in an Inbox exactly once, as one batch of the dataset's
// Ingester, then moves it to processed/ or failed/; busy or io errors are
// retried after a back-off. A heartbeat thread rewrites a JSON status file.
// request_stop() is async-signal-safe (it only sets an atomic flag); the batch
// it interrupts is rolled back and redone first at the next start.
// Details: docs/daemon.md#exactly-once-also-after-sigkill, docs/security.md
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "winnow/curation/daemon/daemon_status.h"
#include "winnow/curation/daemon/database_lock.h"
#include "winnow/curation/daemon/inbox.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"

namespace winnow::curation::daemon {

struct MaintenanceDaemonOptions {
  std::string db;                        // an initialised dataset (winnow init)
  std::filesystem::path inbox;           // watched folder
  std::filesystem::path heartbeat_file;  // empty: <db>.serve.json
  std::chrono::milliseconds poll{500};   // inbox scan and heartbeat interval
  bool once = false;                     // handle what is waiting (and interrupted), then return
  // Folders that `path` records may name files beneath; empty: the inbox.
  std::vector<std::filesystem::path> content_roots;
  std::uint64_t max_content_bytes = readers::ManifestReaderOptions::kDefaultMaxContentBytes;
  int threads = 0;            // of the ingest (Dataset::set_threads): 0 = every core
  int max_interruptions = 5;  // then the manifest is quarantined in failed/
  std::chrono::milliseconds retry_first{1000};  // back-off after a busy/io error,
  std::chrono::milliseconds retry_max{60000};   // doubled per retry up to this
};

class MaintenanceDaemon {
 public:
  // How the dataset is described in the status (after each batch, on the
  // loop's thread); by default the counts per status.
  using Describe = std::function<nlohmann::json(Dataset&)>;

  // Takes the database's daemon lock, opens the dataset (rebuilding its index
  // if needed) and the inbox; throws winnow::Error when any cannot be used
  // (kind busy when another daemon serves the database).
  MaintenanceDaemon(MaintenanceDaemonOptions options, DaemonStatus& status,
                    Describe describe = nullptr);
  ~MaintenanceDaemon();

  // Runs until request_stop() (or, with `once`, until the inbox is empty).
  // Returns the number of manifests handled.
  std::size_t run();

  void request_stop() { stop_.store(true); }

  const std::filesystem::path& heartbeat_file() const { return options_.heartbeat_file; }

 private:
  struct Retry {
    int count = 0;
    std::chrono::steady_clock::time_point not_before;
  };

  // Ingests one claimed manifest and moves it on; never throws for a bad
  // manifest. `interrupted`: found in processing/ at start.
  void handle(const std::filesystem::path& claimed, bool interrupted);
  // Why an interrupted manifest is quarantined, or "" to redo it.
  std::string quarantine_reason(const std::string& checksum, const std::string& name);
  void fail(const std::filesystem::path& claimed, const std::string& name,
            const std::string& reason, double seconds);
  void retry_later(const std::filesystem::path& claimed, const std::string& name,
                   const std::string& reason, double seconds);
  bool waiting_for_retry(const std::filesystem::path& manifest) const;
  void publish_dataset();
  void open_dataset();
  void choose_embedder_for(const std::filesystem::path& manifest);
  void save_index_when_behind();
  void write_heartbeat() noexcept;

  MaintenanceDaemonOptions options_;
  DaemonStatus& status_;
  Describe describe_;
  DatabaseLock lock_;  // before the dataset: a second daemon stops here
  Inbox inbox_;
  // Reopened when winnow chooses the embedder by a manifest's content
  // (embedder_choice.h).
  std::unique_ptr<Dataset> dataset_;
  std::unique_ptr<ingest::Ingester> ingester_;
  std::map<std::filesystem::path, Retry> retries_;  // by path in the inbox
  bool index_save_failed_ = false;                  // the status shows index_save_error
  bool idle_save_due_ = true;                       // a batch since the last idle save
  std::atomic<bool> stop_{false};
};

}  // namespace winnow::curation::daemon
