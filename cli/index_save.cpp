#include <exception>
#include <iostream>

#include "command.h"
#include "winnow/curation/ingest/ingest_pipeline.h"

namespace winnow::cli {

void save_index_at_end(curation::ingest::IngestPipeline& pipeline) {
  try {
    pipeline.save_index_if_behind();
  } catch (const std::exception& e) {
    std::cerr << "warning: the batches are committed, but the index file was not saved (the next "
                 "open catches up from the store): "
              << e.what() << std::endl;
  }
}

}  // namespace winnow::cli
