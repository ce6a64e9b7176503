// IDX image sets (MNIST, Fashion-MNIST) as manifest records.
//
// The files themselves are read by winnow::dataset (winnow/dataset/idx_reader.h:
// gzipped or plain, every header and size checked).
#pragma once

#include <string>
#include <vector>

#include "winnow/curation/core/manifest_record.h"
#include "winnow/dataset/idx_reader.h"

namespace winnow::curation::readers {

// Records for an IDX image set and its labels (labels_path may be empty):
// key "<key_prefix>-NNNNNN" (6 digits, zero-based index), pixels with
// width/height, label as its decimal string, source = `source` (default: the
// images file name), content hash of the pixels. Throws winnow::Error when
// the files disagree on the count.
std::vector<ManifestRecord> import_idx(const std::string& images_path,
                                       const std::string& labels_path,
                                       const std::string& key_prefix,
                                       const std::string& source = {});

}  // namespace winnow::curation::readers
