// Saving and restoring a DynamicPruner, kept apart from the algorithm.
//
// The file holds everything a resumed run needs to make exactly the plans an
// uninterrupted one makes: options, policy spec, scores, policy state, the
// current plan and position, statistics. Layout: magic "WNPR", a format
// version, the payload, then an XXH64 checksum of all that precedes it. The
// reader verifies the checksum before it trusts any field and checks every
// length against the bytes left before allocating, so a truncated, edited or
// corrupted file throws winnow::Error of kind corrupt (naming the source)
// rather than being half-read or asking for memory it does not hold. A state
// is a whole stream: read_pruner reads to its end. Files are written to a
// temporary name, fsynced, renamed and the folder fsynced; any failure throws
// kind io naming the path and leaves the old file in place.
// Format version 2 adds world_size and rank after batch_size, version 3 a byte
// of option flags (allow_negative_losses) after rank; version 1 files are
// still read, as world_size 1, rank 0.
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
