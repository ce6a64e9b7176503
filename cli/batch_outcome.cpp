#include "batch_outcome.h"

#include <iostream>

#include "winnow/curation/core/printable_text.h"

namespace winnow::cli {

namespace {

// The label check's line when it spared records of this batch, or earlier
// samples judged again after it, that its vote would have flagged.
void say_label_check(const curation::ingest::BatchReport& r) {
  if (r.skipped || r.label_check.is_null()) return;
  const std::int64_t arrived = r.label_check.value("would_have_flagged", std::int64_t{0});
  const auto rejudged = static_cast<std::int64_t>(r.labels_rejudged.abstained);
  if (arrived + rejudged == 0) return;
  std::cerr << curation::visible_text(r.name) << ": "
            << curation::visible_text(r.label_check["line"].get<std::string>())
            << " (its vote would have flagged " << arrived << " of this batch's records and "
            << rejudged << " samples judged again after it)\n";
}

}  // namespace

int say_batch_outcome(const curation::ingest::BatchReport& r, const std::string& embedder) {
  say_label_check(r);
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
                << ", for one kind of content; this content needs another: while no sample "
                   "holds an embedding, `winnow init --db DB --embedder "
                   "'hashed-ngrams(n=3,dim=256)'` (for text; images: leave --embedder out) and "
                   "this command again with --redo; otherwise a new database\n";
    }
  }
  return rejected == total ? 1 : 0;
}

}  // namespace winnow::cli
