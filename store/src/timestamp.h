// UTC wall-clock timestamps as stored in the database.
#pragma once

#include <string>

namespace winnow::store {

// "2024-05-01T12:34:56.789Z": ISO-8601, UTC, milliseconds; sorts as text.
std::string utc_timestamp_now();

}  // namespace winnow::store
