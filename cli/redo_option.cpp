#include "command.h"

#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/ingest/ingester.h"

namespace winnow::cli {

void add_redo_option(CLI::App& command, bool& redo) {
  command.add_flag("--redo", redo,
                   "ingest again what is already done, as a new batch (after `winnow init` fixed "
                   "the config that refused its records; docs/cli.md)");
}

std::string batch_checksum(curation::Dataset& dataset, const std::string& checksum, bool redo) {
  return redo ? curation::ingest::redo_checksum(dataset.store(), checksum) : checksum;
}

}  // namespace winnow::cli
