// Inbox: the folder protocol of the dataset-maintenance daemon.
//
//   INBOX/NAME.jsonl             a manifest waiting (writers create it under a
//                                hidden or *.part name and rename it, so the
//                                daemon never sees half a file)
//   INBOX/processing/NAME.jsonl  claimed: being ingested (at most one)
//   INBOX/processed/NAME.jsonl   done (ingested, or already ingested before)
//   INBOX/failed/NAME.jsonl      could not be ingested, beside
//   INBOX/failed/NAME.jsonl.reason.txt  why
//
// Every move is a rename inside one file system, so a manifest is always in
// exactly one of these places, whenever the process dies. A manifest left in
// processing/ by a killed daemon is claimed again first on restart; the
// store's batch record (keyed by the manifest's checksum) then says whether
// its transaction committed (skip it) or not (redo it).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace winnow::curation {

class Inbox {
 public:
  // Creates the folder and its processing/, processed/ and failed/ folders
  // if needed; throws winnow::Error if it exists and is not a directory.
  explicit Inbox(std::filesystem::path folder);

  // Manifests waiting in the inbox: regular files named *.jsonl, not hidden,
  // oldest first (modification time, then name).
  std::vector<std::filesystem::path> waiting() const;

  // Manifests claimed by a daemon that did not finish them (oldest first).
  std::vector<std::filesystem::path> interrupted() const;

  // Moves a waiting manifest to processing/; returns its new path, or nothing
  // when another process took it first.
  std::optional<std::filesystem::path> claim(const std::filesystem::path& manifest);

  // Moves a claimed manifest to processed/ (a name already there gets a
  // numbered suffix: nothing is overwritten). Returns the new path.
  std::filesystem::path mark_processed(const std::filesystem::path& claimed);

  // Moves a claimed manifest to failed/ and writes the reason beside it.
  std::filesystem::path mark_failed(const std::filesystem::path& claimed,
                                    const std::string& reason);

  const std::filesystem::path& folder() const { return folder_; }
  std::filesystem::path processing_dir() const { return folder_ / "processing"; }
  std::filesystem::path processed_dir() const { return folder_ / "processed"; }
  std::filesystem::path failed_dir() const { return folder_ / "failed"; }

 private:
  std::filesystem::path folder_;
};

}  // namespace winnow::curation
