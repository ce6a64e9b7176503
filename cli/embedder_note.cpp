#include "embedder_note.h"

#include <unistd.h>

#include <iostream>

namespace winnow::cli {

void choose_embedder_for(const std::string& db, const curation::BatchContent& content, bool quiet) {
  const std::optional<std::string> chosen = curation::choose_embedder(db, content);
  if (chosen && !quiet && ::isatty(STDERR_FILENO) == 1) {
    std::cerr << "winnow chose the embedder " << *chosen << " for this dataset's "
              << (content.embedding_dim > 0                     ? "given embeddings"
                  : content.kind == curation::ContentKind::text ? "text"
                  : content.kind == curation::ContentKind::path ? "image files"
                                                                : "pixel arrays")
              << " (init without --embedder: docs/curation.md, \"Embedders\")\n";
  }
}

}  // namespace winnow::cli
