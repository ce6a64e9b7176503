// Saving and restoring a DynamicPruner, kept apart from the algorithm.
//
// The file holds everything a resumed run needs to make exactly the plans an
// uninterrupted one makes: options, policy spec, scores, policy state, the
// current plan and position, statistics. Layout: magic "WNPR", a format
// version, the payload, then an XXH64 checksum of all that precedes it, so a
// truncated or corrupted file is rejected rather than half-read. Files are
// written to a temporary name and renamed, so a crash never leaves a torn one.
// Format version 2 adds world_size and rank after batch_size; version 1 files
// are still read, as world_size 1, rank 0.
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
