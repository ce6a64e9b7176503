// Uses the installed curation libraries: the concept folders' headers
// (dataset, labels, dedup), the store and the index through winnow::curation.
#include <cstdio>
#include <iostream>
#include <string>

#include "winnow/curation/dedup/content_hash.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/labels/label_text.h"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string db = argv[1];
  std::remove(db.c_str());
  winnow::curation::Dataset::init(db, {});
  winnow::curation::Dataset dataset(db);
  const std::string hash =
      winnow::curation::dedup::content_hash(winnow::curation::ContentKind::text, "abc", 3);
  const bool numeric = winnow::curation::labels::numeric_label("7").has_value();
  std::cout << "consume_curation: " << dataset.index_info().vectors << " vectors, hash "
            << hash.size() << " chars, numeric " << numeric << "\n";
  return hash.size() == 32 && numeric ? 0 : 1;
}
