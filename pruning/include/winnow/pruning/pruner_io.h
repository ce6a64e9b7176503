// Saving and restoring a DynamicPruner, kept apart from the algorithm: a
// resumed run makes exactly the plans an uninterrupted one makes. Files are
// checksummed (XXH64) and verified before any field is trusted: a damaged file
// throws winnow::Error of kind corrupt; a failed save throws kind io and leaves
// the old file in place (temporary file, fsync, rename).
// Details: docs/pruning.md#save-and-restore
#pragma once

#include <iosfwd>
#include <string>

#include "winnow/pruning/dynamic_pruner.h"

namespace winnow {

void write_pruner(const DynamicPruner& pruner, std::ostream& out);
// `source` names the stream in error messages.
DynamicPruner read_pruner(std::istream& in, const std::string& source = "stream");

void save_pruner(const DynamicPruner& pruner, const std::string& path);
DynamicPruner load_pruner(const std::string& path);

// XXH64 of a plan's ids, weight codes and palette (the same helper as the
// file checksum): equal on all ranks that serve the same plan.
std::uint64_t plan_hash(const EpochPlan& plan);

}  // namespace winnow
