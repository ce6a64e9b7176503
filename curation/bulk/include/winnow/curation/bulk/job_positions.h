// JobPositions: the store ids a bulk job's records were given, by their place
// in the job's order (JobRecord::position). winnow.dask's workers
// list each record's nearest earlier records by job position
// (JobRecord::prior_neighbours); the ingest turns those positions into
// ids here and asks its index whether each id is judged (accepted or
// flagged) now, so a listed record counts as it does for a search.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "winnow/error.h"

namespace winnow::curation::bulk {

class JobPositions {
 public:
  // A job of `records` positions [0, records), begun when the dataset was at
  // `revision` and held no accepted or flagged sample.
  JobPositions(std::size_t records, std::int64_t revision)
      : ids_(records, -1), revision_(revision) {}

  std::size_t size() const { return ids_.size(); }
  bool holds(std::int64_t position) const {
    return position >= 0 && static_cast<std::size_t>(position) < ids_.size();
  }
  // The id the record at `position` was stored under once its chunk was
  // written; -1 before that, or when it kept no vector (rejected).
  std::int64_t id_at(std::int64_t position) const {
    return holds(position) ? ids_[static_cast<std::size_t>(position)] : -1;
  }
  void set(std::int64_t position, std::int64_t id) {
    WINNOW_THROW_IF_NOT(holds(position), "job position {} is outside the job's {} records",
                        position, ids_.size());
    ids_[static_cast<std::size_t>(position)] = id;
  }

  // The dataset revision the positions describe: a batch of another process
  // in between makes the lists incomplete (IngestPipeline drops the job).
  std::int64_t revision() const { return revision_; }
  void set_revision(std::int64_t revision) { revision_ = revision; }

 private:
  std::vector<std::int64_t> ids_;
  std::int64_t revision_;
};

}  // namespace winnow::curation::bulk
