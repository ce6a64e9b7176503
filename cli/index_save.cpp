#include <exception>
#include <iostream>

#include "command.h"
#include "winnow/curation/dataset/dataset.h"

namespace winnow::cli {

void save_index_at_end(curation::Dataset& dataset) {
  try {
    dataset.save_index_if_behind();
  } catch (const std::exception& e) {
    std::cerr << "warning: the batches are committed, but the index file was not saved (the next "
                 "open catches up from the store): "
              << e.what() << std::endl;
  }
}

}  // namespace winnow::cli
