#include "winnow/store/sample_status.h"

#include "winnow/error.h"

namespace winnow::store {

std::string_view to_string(SampleStatus status) {
  switch (status) {
    case SampleStatus::accepted:
      return "accepted";
    case SampleStatus::duplicate_exact:
      return "duplicate_exact";
    case SampleStatus::duplicate_near:
      return "duplicate_near";
    case SampleStatus::label_issue:
      return "label_issue";
    case SampleStatus::rejected:
      return "rejected";
  }
  WINNOW_THROW("unknown SampleStatus value {}", static_cast<int>(status));
}

SampleStatus parse_sample_status(std::string_view name) {
  for (SampleStatus status : kAllSampleStatuses) {
    if (to_string(status) == name) {
      return status;
    }
  }
  WINNOW_THROW(
      "unknown sample status '{}' (expected accepted, duplicate_exact, duplicate_near, "
      "label_issue or rejected)",
      name);
}

bool is_duplicate(SampleStatus status) {
  return status == SampleStatus::duplicate_exact || status == SampleStatus::duplicate_near;
}

std::int64_t StatusCounts::total() const {
  std::int64_t sum = 0;
  for (std::int64_t count : by_status) {
    sum += count;
  }
  return sum;
}

}  // namespace winnow::store
