// Inbox: the folder protocol of the dataset-maintenance daemon: INBOX/NAME.jsonl
// waiting, processing/ (at most one), processed/, failed/ (+ .reason.txt).
// Writers create a manifest under a hidden or *.part name and rename it. Every
// move is a no-replace rename plus an fsync of both folders, so a manifest is
// always in exactly one place, whenever the process or machine dies.
// Details: docs/daemon.md#the-inbox-protocol
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace winnow::curation::daemon {

class Inbox {
 public:
  // Creates the folder and its processing/, processed/ and failed/ folders
  // if needed; throws winnow::Error if it exists and is not a directory.
  explicit Inbox(std::filesystem::path folder);

  // Manifests waiting in the inbox: visible entries named *.jsonl that are
  // not directories (symbolic links and special files included, unfollowed,
  // so that the daemon can refuse them), oldest first (modification time,
  // then name).
  std::vector<std::filesystem::path> waiting() const;

  // The waiting manifests whose size and modification time have not changed
  // since a call at least `hold` earlier: a manifest written in place rather
  // than renamed is taken only once it has held still.
  std::vector<std::filesystem::path> settled(std::chrono::milliseconds hold);

  // Manifests claimed by a daemon that did not finish them (oldest first).
  std::vector<std::filesystem::path> interrupted() const;

  // Moves a waiting manifest to processing/; returns its new path, or nothing
  // when another process took it first.
  std::optional<std::filesystem::path> claim(const std::filesystem::path& manifest);

  // Moves a claimed manifest back to the inbox, to be claimed again later
  // (after a passing failure). Returns the new path.
  std::filesystem::path put_back(const std::filesystem::path& claimed);

  // Moves a claimed manifest to processed/ (a name already there gets a
  // numbered suffix: nothing is overwritten). Returns the new path.
  std::filesystem::path mark_processed(const std::filesystem::path& claimed);

  // Moves a claimed manifest to failed/ and writes the reason beside it (a
  // new file, created exclusively: an existing file or link is never
  // written through).
  std::filesystem::path mark_failed(const std::filesystem::path& claimed,
                                    const std::string& reason);

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path processing_dir() const { return folder_ / "processing"; }
  std::filesystem::path processed_dir() const { return folder_ / "processed"; }
  std::filesystem::path failed_dir() const { return folder_ / "failed"; }

 private:
  struct Observation {
    std::uintmax_t size = 0;
    std::int64_t mtime_ns = 0;
    std::chrono::steady_clock::time_point since;
  };

  std::filesystem::path folder_;
  std::map<std::filesystem::path, Observation> observed_;  // for settled()
};

}  // namespace winnow::curation::daemon
