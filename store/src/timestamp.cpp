#include "timestamp.h"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "winnow/error.h"

namespace winnow::store {

std::string utc_timestamp_now() {
  using namespace std::chrono;
  const auto now = system_clock::now();
  const auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  const std::time_t seconds = system_clock::to_time_t(now);
  std::tm utc{};
  WINNOW_THROW_IF_NOT(gmtime_r(&seconds, &utc) != nullptr, "cannot convert time {} to UTC",
                      static_cast<long long>(seconds));
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, ms);
}

}  // namespace winnow::store
