#include "winnow/curation/daemon/maintenance_daemon.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <exception>
#include <fstream>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/core/status_counts_json.h"
#include "winnow/clock.h"
#include "winnow/error.h"
#include "winnow/store/sample_status.h"
#include "winnow/curation/dataset/embedder_choice.h"

namespace winnow::curation::daemon {

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

json default_description(Dataset& dataset) {
  return counts_json(dataset.store().count_by_status());
}

bool is_transient(const std::exception& e) {
  const auto* error = dynamic_cast<const Error*>(&e);
  return error != nullptr && (error->kind() == ErrorKind::busy || error->kind() == ErrorKind::io);
}

}  // namespace

MaintenanceDaemon::MaintenanceDaemon(MaintenanceDaemonOptions options, DaemonStatus& status,
                                     Describe describe)
    : options_(std::move(options)),
      status_(status),
      describe_(describe ? std::move(describe) : Describe(default_description)),
      lock_(options_.db),
      inbox_(options_.inbox) {
  open_dataset();
  WINNOW_THROW_IF_NOT(options_.poll.count() > 0, "poll interval must be positive, got {} ms",
                      options_.poll.count());
  WINNOW_THROW_IF_NOT(options_.max_interruptions >= 1, "max interruptions must be >= 1, got {}",
                      options_.max_interruptions);
  if (options_.heartbeat_file.empty()) options_.heartbeat_file = options_.db + ".serve.json";
  if (options_.content_roots.empty()) options_.content_roots.push_back(options_.inbox);
  json roots = json::array();
  for (const fs::path& root : options_.content_roots) {
    WINNOW_THROW_IF_NOT(fs::is_directory(root), "content root '{}' is not a folder", root.string());
    roots.push_back(printable_text(fs::absolute(root).string()));
  }
  status_.set_extra("inbox", printable_text(fs::absolute(options_.inbox).string()));
  status_.set_extra("db", printable_text(options_.db));
  status_.set_extra("content_roots", roots);
  publish_dataset();
}

MaintenanceDaemon::~MaintenanceDaemon() = default;

// The batches save the index file only now and then (IndexSnapshots::by_cost);
// the rest is saved when the inbox is idle or the daemon stops, so that a
// restart opens it without catching up. A failed save is a warning in the
// status (the index is a cache of the store). It is not tried again while
// the inbox stays idle (each try writes the whole file), only after the
// next manifest or when the daemon stops.
void MaintenanceDaemon::save_index_when_behind() {
  try {
    dataset_->save_index_if_behind();
    if (index_save_failed_) status_.set_extra("index_save_error", nullptr);
    index_save_failed_ = false;
  } catch (const std::exception& e) {
    status_.set_extra("index_save_error", printable_text(e.what()));
    index_save_failed_ = true;
  }
  idle_save_due_ = false;
}

void MaintenanceDaemon::publish_dataset() {
  status_.set_dataset(describe_(*dataset_));
}

void MaintenanceDaemon::open_dataset() {
  ingester_.reset();
  dataset_.reset();
  dataset_ = std::make_unique<Dataset>(options_.db);
  dataset_->set_threads(options_.threads);
  ingester_ = std::make_unique<ingest::Ingester>(*dataset_);
}

// A dataset whose embedder winnow chooses, and which holds no embedding yet,
// takes the default for the manifest's content (embedder_choice.h) before
// the manifest is read with it.
void MaintenanceDaemon::choose_embedder_for(const fs::path& manifest) {
  if (!dataset_->config().embedder_auto) return;
  const std::optional<BatchContent> content = manifest_content(manifest.string(), false);
  if (!content || !choose_embedder(options_.db, *content)) return;
  open_dataset();
  publish_dataset();
}

void MaintenanceDaemon::write_heartbeat() noexcept {
  // Runs on the heartbeat thread too: nothing here may end the process.
  try {
    // Temp file + rename: a reader never sees half a heartbeat.
    const fs::path tmp = options_.heartbeat_file.string() + ".tmp";
    {
      std::ofstream out(tmp, std::ios::trunc);
      out << status_.snapshot().dump(2, ' ', false, json::error_handler_t::replace) << "\n";
      if (!out.good()) return;  // a full disk must not stop the ingest loop
    }
    std::error_code ec;
    fs::rename(tmp, options_.heartbeat_file, ec);
  } catch (const std::exception&) {
    // The next beat tries again.
  }
}

std::string MaintenanceDaemon::quarantine_reason(const std::string& checksum,
                                                 const std::string& name) {
  const std::optional<store::BatchRecord> batch =
      dataset_->store().find_batch_by_checksum(checksum);
  // Only a batch still `running` was cut off by the process dying; a stop
  // request or a handled error marks it failed first.
  if (!batch || batch->state != store::BatchState::running) return "";
  const std::int64_t times = dataset_->store().record_batch_interrupted(
      batch->id, fmt::format("the daemon ended while ingesting '{}'", name));
  if (times < options_.max_interruptions) return "";
  return fmt::format(
      "quarantined: the daemon ended while ingesting this manifest {} times (limit {}); it may "
      "crash or exhaust the daemon. Fix or split it, then drop it again",
      times, options_.max_interruptions);
}

void MaintenanceDaemon::fail(const fs::path& claimed, const std::string& name,
                             const std::string& reason, double seconds) {
  try {
    inbox_.mark_failed(claimed, reason);
  } catch (const std::exception& move_error) {
    status_.record_outcome(
        "failed", name, 0, seconds,
        fmt::format("{} (and it could not be moved to failed/: {})", reason, move_error.what()));
    throw;  // the inbox itself is broken: stop rather than loop on it
  }
  status_.record_outcome("failed", name, 0, seconds, reason);
}

void MaintenanceDaemon::retry_later(const fs::path& claimed, const std::string& name,
                                    const std::string& reason, double seconds) {
  const fs::path back = inbox_.put_back(claimed);
  Retry retry = retries_[claimed.filename()];
  retries_.erase(claimed.filename());
  const std::chrono::milliseconds delay = std::min<std::chrono::milliseconds>(
      options_.retry_max, options_.retry_first * (std::int64_t{1} << std::min(retry.count, 20)));
  retry.count += 1;
  retry.not_before = std::chrono::steady_clock::now() + delay;
  retries_[back.filename()] = retry;
  status_.record_outcome(
      "retried", name, 0, seconds,
      fmt::format("{} (try {} in {} ms)", reason, retry.count + 1, delay.count()));
}

bool MaintenanceDaemon::waiting_for_retry(const fs::path& manifest) const {
  const auto found = retries_.find(manifest.filename());
  return found != retries_.end() && std::chrono::steady_clock::now() < found->second.not_before;
}

void MaintenanceDaemon::handle(const fs::path& claimed, bool interrupted) {
  // File names are bytes: stored and shown as valid UTF-8 (\xNN escapes).
  const std::string name = printable_text(claimed.filename().string());
  status_.set_state("processing", name);
  write_heartbeat();
  const auto t0 = std::chrono::steady_clock::now();
  try {
    choose_embedder_for(claimed);
    readers::ManifestReaderOptions reading;
    // A `path` record's file may be a link whose whole resolution stays
    // beneath a content root; the manifest itself is never read through one.
    reading.content = {options_.max_content_bytes, options_.content_roots, true};
    reading.image = dataset_->image_reading();
    readers::ManifestReader reader(claimed.string(), reading);  // refuses links and special files
    const std::string checksum = readers::file_checksum(claimed.string());
    if (interrupted) {
      if (const std::string reason = quarantine_reason(checksum, name); !reason.empty()) {
        fail(claimed, name, reason, seconds_since(t0));
        return;
      }
    }
    const ingest::BatchReport report = ingester_->ingest_batch(name, checksum, reader, &stop_);
    idle_save_due_ = true;
    inbox_.mark_processed(claimed);
    retries_.erase(claimed.filename());
    // The "last" entry says what the batch brought and why records were refused.
    nlohmann::json summary = {{"counts", counts_json(report.counts)}};
    ingest::put_rejections(summary, report.rejections,
                           report.counts[store::SampleStatus::rejected]);
    status_.record_outcome(report.skipped ? "skipped" : "ingested", name,
                           report.skipped ? 0 : report.counts.total(), seconds_since(t0),
                           report.index_save_error.empty()
                               ? ""
                               : "warning: committed, but the index file was not saved (the "
                                 "next start catches up from the store): " +
                                     report.index_save_error,
                           summary);
  } catch (const ingest::BatchInterrupted& e) {
    // Rolled back; the manifest stays in processing/ and is redone first.
    status_.record_outcome("interrupted", name, 0, seconds_since(t0), e.what());
    return;
  } catch (const std::exception& e) {
    if (is_transient(e)) {
      retry_later(claimed, name, e.what(), seconds_since(t0));
    } else {
      // A manifest that cannot be read, or a batch the store refused:
      // keep the file with its reason; nothing of the batch was committed.
      fail(claimed, name, e.what(), seconds_since(t0));
    }
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
      handle(claimed, true);
      ++handled;
    }
    status_.set_state("idle");
    while (!stop_.load()) {
      bool any = false;
      std::vector<fs::path> settled;
      try {
        settled = inbox_.settled(options_.poll);
        status_.set_extra("inbox_error", nullptr);
      } catch (const Error& e) {
        // A passing failure to list the inbox (too many open files while
        // clients hold the status port, an I/O error): said in the
        // heartbeat and tried again after a poll interval, never an exit.
        if (e.kind() != ErrorKind::io && e.kind() != ErrorKind::busy) throw;
        status_.set_extra("inbox_error", e.what());
        sleep_unless(stop_, options_.poll);
        continue;
      }
      for (const fs::path& waiting : settled) {
        if (stop_.load()) break;
        if (waiting_for_retry(waiting)) continue;
        if (auto claimed = inbox_.claim(waiting)) {
          handle(*claimed, false);
          ++handled;
          any = true;
        }
      }
      // With --once, stop when nothing is left (manifests still settling or
      // waiting for a retry are waited for).
      if (options_.once && !any && inbox_.waiting().empty()) break;
      // Half an interval: a manifest is taken at most 1.5 intervals after it settles.
      if (!any) {
        if (idle_save_due_) save_index_when_behind();  // idle: a save delays no batch
        sleep_unless(stop_, std::max<std::chrono::milliseconds>(options_.poll / 2,
                                                                std::chrono::milliseconds(10)));
      }
    }
    status_.set_state("stopping");
    save_index_when_behind();
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

}  // namespace winnow::curation::daemon
