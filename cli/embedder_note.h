// The embedder winnow chooses for a dataset made without --embedder, as the
// commands that ingest ask for it before their first batch, and the note
// they print when it chose one.
#pragma once

#include <string>

#include "winnow/curation/dataset/embedder_choice.h"

namespace winnow::cli {

// Before a batch of `content` into `db`: lets winnow choose the dataset's
// embedder (curation::choose_embedder) and says which it chose on stderr
// when that is a terminal and not `quiet` (`status` shows it always).
void choose_embedder_for(const std::string& db, const curation::BatchContent& content, bool quiet);

}  // namespace winnow::cli
