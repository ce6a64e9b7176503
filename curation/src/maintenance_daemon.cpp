#include "winnow/curation/maintenance_daemon.h"

#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::curation {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// Sleeps `total`, in short steps, returning early once `flag` is set.
void sleep_unless(const std::atomic<bool>& flag, std::chrono::milliseconds total) {
  const auto until = std::chrono::steady_clock::now() + total;
  while (!flag.load() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

json default_description(IngestPipeline& pipeline) {
  json j = json::object();
  const StatusCounts counts = pipeline.store().count_by_status();
  for (SampleStatus s : kAllSampleStatuses) j[std::string(to_string(s))] = counts[s];
  j["total"] = counts.total();
  return j;
}

}  // namespace

MaintenanceDaemon::MaintenanceDaemon(MaintenanceDaemonOptions options, DaemonStatus& status,
                                     Describe describe)
    : options_(std::move(options)),
      status_(status),
      describe_(describe ? std::move(describe) : Describe(default_description)),
      inbox_(options_.inbox),
      pipeline_(options_.db) {
  WINNOW_THROW_IF_NOT(options_.poll.count() > 0, "poll interval must be positive, got {} ms",
                      options_.poll.count());
  if (options_.heartbeat_file.empty()) options_.heartbeat_file = options_.db + ".serve.json";
  status_.set_extra("inbox", fs::absolute(options_.inbox).string());
  status_.set_extra("db", options_.db);
  publish_dataset();
}

MaintenanceDaemon::~MaintenanceDaemon() = default;

void MaintenanceDaemon::publish_dataset() { status_.set_dataset(describe_(pipeline_)); }

void MaintenanceDaemon::write_heartbeat() {
  // Temp file + rename: a reader never sees half a heartbeat.
  const fs::path tmp = options_.heartbeat_file.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << status_.snapshot().dump(2) << "\n";
    if (!out.good()) return;  // a full disk must not stop the ingest loop
  }
  std::error_code ec;
  fs::rename(tmp, options_.heartbeat_file, ec);
}


void MaintenanceDaemon::handle(const fs::path& claimed) {
  const std::string name = claimed.filename().string();
  status_.set_state("processing", name);
  write_heartbeat();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    const std::string checksum = file_checksum(claimed.string());
    BatchReport report =
        pipeline_.ingest_batch(name, checksum, read_manifest(claimed.string()));
    inbox_.mark_processed(claimed);
    status_.record_outcome(report.skipped ? "skipped" : "ingested", name,
                           report.skipped ? 0 : report.counts.total(), seconds_since(t0));
  } catch (const std::exception& e) {
    // A manifest that cannot be read, or a batch the store refused: keep the
    // file with its reason; nothing of the batch was committed.
    try {
      inbox_.mark_failed(claimed, e.what());
    } catch (const std::exception& move_error) {
      status_.record_outcome("failed", name, 0, seconds_since(t0),
                             fmt::format("{} (and it could not be moved to failed/: {})",
                                         e.what(), move_error.what()));
      throw;  // the inbox itself is broken: stop rather than loop on it
    }
    status_.record_outcome("failed", name, 0, seconds_since(t0), e.what());
  }
  publish_dataset();
  status_.set_state("idle");
}

std::size_t MaintenanceDaemon::run() {
  std::atomic<bool> done{false};
  std::thread heartbeat([&] {
    while (!done.load()) {
      write_heartbeat();
      sleep_unless(done, options_.poll);
    }
  });
  std::size_t handled = 0;
  std::exception_ptr failure;
  try {
    // A manifest left in processing/ by a killed daemon comes first.
    for (const fs::path& claimed : inbox_.interrupted()) {
      if (stop_.load()) break;
      handle(claimed);
      ++handled;
    }
    status_.set_state("idle");
    while (!stop_.load()) {
      bool any = false;
      for (const fs::path& waiting : inbox_.waiting()) {
        if (stop_.load()) break;
        if (auto claimed = inbox_.claim(waiting)) {
          handle(*claimed);
          ++handled;
          any = true;
        }
      }
      if (options_.once && !any) break;
      if (!any) sleep_unless(stop_, options_.poll);
    }
    status_.set_state("stopping");
  } catch (...) {
    failure = std::current_exception();
  }
  // Stopped or failed, the last heartbeat says so.
  done.store(true);
  heartbeat.join();
  status_.set_state("stopped");
  write_heartbeat();
  if (failure) std::rethrow_exception(failure);
  return handled;
}

}  // namespace winnow::curation
