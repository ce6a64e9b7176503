// read_annotator_pool: POOL.csv (annotation_tasks.h).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <set>

#include "winnow/curation/annotate/annotation_tasks.h"
#include "winnow/curation/core/regular_file.h"
#include "winnow/curation/readers/annotations/csv_reader.h"
#include "winnow/error.h"

namespace winnow::curation::annotate {

std::vector<PoolAnnotator> read_annotator_pool(const std::string& path) {
  FileLimits limits;
  limits.max_bytes = std::uint64_t{16} << 20;
  limits.follow_links = true;
  const std::vector<unsigned char> bytes = read_regular_file(path, limits, "annotator pool");
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  readers::CsvReader csv(text, path);
  std::vector<std::string> fields;
  WINNOW_THROW_IF_NOT_KIND(csv.next(fields), invalid_input,
                           "{}: empty; the header is annotator,cost[,capacity]", path);
  const int name = readers::header_column(fields, "annotator");
  const int cost = readers::header_column(fields, "cost");
  const int capacity = readers::header_column(fields, "capacity");
  WINNOW_THROW_IF_NOT_KIND(name >= 0, invalid_input,
                           "{}: line {}: the header must name the column annotator (and may name "
                           "cost and capacity)",
                           path, csv.line());
  std::vector<PoolAnnotator> pool;
  std::set<std::string> seen;
  while (csv.next(fields)) {
    const auto cell = [&](int c) { return readers::cell_at(fields, c); };
    PoolAnnotator a;
    a.name = cell(name);
    WINNOW_THROW_IF_NOT_KIND(!a.name.empty(), invalid_input, "{}: line {}: no annotator name", path,
                             csv.line());
    WINNOW_THROW_IF_NOT_KIND(seen.insert(a.name).second, invalid_input,
                             "{}: line {}: annotator '{}' is named twice", path, csv.line(),
                             a.name);
    if (const std::string c = cell(cost); !c.empty()) {
      char* end = nullptr;
      errno = 0;
      a.cost = std::strtod(c.c_str(), &end);
      WINNOW_THROW_IF_NOT_KIND(
          end != c.c_str() && *end == '\0' && errno == 0 && std::isfinite(a.cost) && a.cost > 0,
          invalid_input, "{}: line {}: cost '{}' is not a positive number", path, csv.line(), c);
    }
    if (const std::string c = cell(capacity); !c.empty()) {
      char* end = nullptr;
      errno = 0;
      const unsigned long long n = std::strtoull(c.c_str(), &end, 10);
      WINNOW_THROW_IF_NOT_KIND(end != c.c_str() && *end == '\0' && errno == 0 && c[0] != '-',
                               invalid_input, "{}: line {}: capacity '{}' is not a whole number",
                               path, csv.line(), c);
      a.capacity = static_cast<std::size_t>(n);
    }
    pool.push_back(std::move(a));
  }
  WINNOW_THROW_IF_NOT_KIND(!pool.empty(), invalid_input, "{}: names no annotator", path);
  return pool;
}

}  // namespace winnow::curation::annotate
