#include "batch_outcome.h"

#include <iostream>

#include "winnow/curation/core/printable_text.h"

namespace winnow::cli {

int say_batch_outcome(const curation::ingest::BatchReport& r, const std::string& embedder) {
  const std::int64_t total = r.counts.total();
  const std::int64_t rejected = r.counts[store::SampleStatus::rejected];
  if (r.skipped || total == 0 || r.rejections.empty()) return 0;
  const curation::ingest::RejectionGroup& top = r.rejections.front();
  if (2 * rejected > total) {
    std::cerr << curation::visible_text(r.name) << ": " << rejected << " of " << total
              << " records were rejected; the most common reason (" << top.count
              << "): " << curation::visible_text(top.reason) << "\n";
    if (top.reason.find(" embedder needs ") != std::string::npos) {
      std::cerr << "  the dataset's embedder is " << embedder
                << ", chosen by `winnow init` for one kind of content; this content needs "
                   "another dataset: `winnow init --db NEW.db --embedder "
                   "'hashed-ngrams(n=3,dim=256)'` for text, the default for images\n";
    }
  }
  return rejected == total ? 1 : 0;
}

}  // namespace winnow::cli
