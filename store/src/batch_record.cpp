#include "winnow/store/batch_record.h"

#include "winnow/error.h"

namespace winnow::store {

std::string_view to_string(BatchState state) {
  switch (state) {
    case BatchState::pending:
      return "pending";
    case BatchState::running:
      return "running";
    case BatchState::done:
      return "done";
    case BatchState::failed:
      return "failed";
  }
  WINNOW_THROW("unknown BatchState value {}", static_cast<int>(state));
}

BatchState parse_batch_state(std::string_view name) {
  for (BatchState state :
       {BatchState::pending, BatchState::running, BatchState::done, BatchState::failed}) {
    if (to_string(state) == name) {
      return state;
    }
  }
  WINNOW_THROW("unknown batch state '{}' (expected pending, running, done or failed)", name);
}

}  // namespace winnow::store
