#include "winnow/curation/judge/near_duplicate_check.h"

namespace winnow::curation::judge {

NearDuplicateCheck near_duplicate_check(const ManifestRecord& record) {
  if (!record.colour.empty()) return NearDuplicateCheck::image_file;
  if (record.has_image()) return NearDuplicateCheck::image;
  if (record.kind == ContentKind::text) return NearDuplicateCheck::text;
  return NearDuplicateCheck::none;
}

double candidate_gate(const CurationConfig& config, NearDuplicateCheck check) {
  switch (check) {
    case NearDuplicateCheck::image_file:
      return config.image_file_min_candidate_similarity;
    case NearDuplicateCheck::text:
      return config.text_min_candidate_similarity;
    case NearDuplicateCheck::image:
    case NearDuplicateCheck::none:
      break;
  }
  return config.min_candidate_similarity;
}

}  // namespace winnow::curation::judge
