#include "winnow/curation/core/manifest_record.h"

namespace winnow::curation {

const char* to_string(ContentKind kind) {
  switch (kind) {
    case ContentKind::path:
      return "path";
    case ContentKind::text:
      return "text";
    case ContentKind::pixels:
      return "pixels";
    case ContentKind::none:
      return "none";
  }
  return "unknown";
}

}  // namespace winnow::curation
