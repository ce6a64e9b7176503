#include "winnow/store/image_quality_table.h"

#include <algorithm>
#include <cmath>

#include "winnow/error.h"
#include "winnow/store/database.h"
#include "winnow/store/statement.h"

namespace winnow::store {

namespace {

// The columns read_record() reads, in its order: the sample, its size, the
// seven scores, the seven flags (ImageIssue order).
#define WINNOW_IMAGE_QUALITY_COLUMNS                                                         \
  "q.sample_id, q.width, q.height, q.blurry_score, q.dark_score, q.bright_score,"            \
  " q.low_information_score, q.grayscale_score, q.odd_aspect_ratio_score, q.odd_size_score," \
  " q.blurry, q.dark, q.bright, q.low_information, q.grayscale, q.odd_aspect_ratio, q.odd_size"
constexpr int kFirstScore = 3;
constexpr int kFirstFlag = kFirstScore + static_cast<int>(kImageIssueCount);
constexpr int kStatusColumn = kFirstFlag + static_cast<int>(kImageIssueCount);  // kEachRow's

constexpr const char* kInsert =
    "INSERT INTO image_quality (sample_id, width, height, blurry_score, dark_score,"
    " bright_score, low_information_score, grayscale_score, odd_aspect_ratio_score,"
    " odd_size_score, blurry, dark, bright, low_information, grayscale, odd_aspect_ratio,"
    " odd_size) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16,"
    " ?17)";
constexpr const char* kFind =
    "SELECT " WINNOW_IMAGE_QUALITY_COLUMNS " FROM image_quality q WHERE q.sample_id = ?1";
constexpr const char* kEachRow =
    "SELECT " WINNOW_IMAGE_QUALITY_COLUMNS
    ", s.status, c.name, s.label FROM image_quality q JOIN samples s ON s.id = q.sample_id"
    " LEFT JOIN contributors c ON c.id = s.source_id ORDER BY q.sample_id";
constexpr const char* kCount =
    "SELECT count(*), coalesce(sum(blurry OR dark OR bright OR low_information OR grayscale OR"
    " odd_aspect_ratio OR odd_size), 0), coalesce(sum(blurry), 0), coalesce(sum(dark), 0),"
    " coalesce(sum(bright), 0), coalesce(sum(low_information), 0), coalesce(sum(grayscale), 0),"
    " coalesce(sum(odd_aspect_ratio), 0), coalesce(sum(odd_size), 0) FROM image_quality";
#undef WINNOW_IMAGE_QUALITY_COLUMNS

ImageQualityRecord read_record(const Statement& row) {
  ImageQualityRecord r;
  r.sample_id = row.column_int64(0);
  r.width = row.column_int64(1);
  r.height = row.column_int64(2);
  for (std::size_t i = 0; i < kImageIssueCount; ++i) {
    r.scores[i] = row.column_optional_double(kFirstScore + static_cast<int>(i));
    r.issues[i] = row.column_int64(kFirstFlag + static_cast<int>(i)) != 0;
  }
  return r;
}

}  // namespace

const char* to_string(ImageIssue issue) {
  switch (issue) {
    case ImageIssue::blurry:
      return "blurry";
    case ImageIssue::dark:
      return "dark";
    case ImageIssue::bright:
      return "bright";
    case ImageIssue::low_information:
      return "low_information";
    case ImageIssue::grayscale:
      return "grayscale";
    case ImageIssue::odd_aspect_ratio:
      return "odd_aspect_ratio";
    case ImageIssue::odd_size:
      return "odd_size";
  }
  return "unknown";
}

bool ImageQualityRecord::any_issue() const {
  return std::any_of(issues.begin(), issues.end(), [](bool issue) { return issue; });
}

void ImageQualityTable::put(const ImageQualityRecord& r) {
  WINNOW_THROW_IF_NOT(r.width > 0 && r.height > 0,
                      "{}: image quality of sample {}: size {} x {} is not positive", db_.path(),
                      r.sample_id, r.width, r.height);
  for (ImageIssue issue : kAllImageIssues) {
    const std::optional<double> score = r.score(issue);
    WINNOW_THROW_IF_NOT(!score || std::isfinite(*score),
                        "{}: image quality of sample {}: {} score {} is not finite", db_.path(),
                        r.sample_id, to_string(issue), score.value_or(0.0));
  }
  const auto& s = r.scores;
  const auto flag = [&](ImageIssue issue) { return r.has(issue) ? 1 : 0; };
  Statement& insert = db_.cached(kInsert);
  insert
      .bind_all(r.sample_id, r.width, r.height, s[0], s[1], s[2], s[3], s[4], s[5], s[6],
                flag(ImageIssue::blurry), flag(ImageIssue::dark), flag(ImageIssue::bright),
                flag(ImageIssue::low_information), flag(ImageIssue::grayscale),
                flag(ImageIssue::odd_aspect_ratio), flag(ImageIssue::odd_size))
      .run();
}

std::optional<ImageQualityRecord> ImageQualityTable::find(std::int64_t sample_id) {
  StatementScope query(db_.cached(kFind));
  query->bind_all(sample_id);
  if (!query->step()) return std::nullopt;
  return read_record(*query);
}

ImageIssueCounts ImageQualityTable::count() {
  StatementScope query(db_.cached(kCount));
  query->bind_all();
  WINNOW_THROW_IF_NOT(query->step(), "{}: counting image issues returned no row", db_.path());
  ImageIssueCounts counts;
  counts.images = query->column_int64(0);
  counts.with_issue = query->column_int64(1);
  for (std::size_t i = 0; i < kImageIssueCount; ++i) {
    counts.issues[i] = query->column_int64(2 + static_cast<int>(i));
  }
  return counts;
}

void ImageQualityTable::for_each(const std::function<void(const Row&)>& visit) {
  // Not a cached statement: `visit` may run other queries.
  Statement query(db_, kEachRow);
  Row row;
  while (query.step()) {
    row.record = read_record(query);
    row.status = parse_sample_status(query.column_text(kStatusColumn));
    row.source = query.column_text(kStatusColumn + 1);
    row.label = query.column_optional_int64(kStatusColumn + 2);
    visit(row);
  }
}

std::vector<std::pair<std::int64_t, std::int64_t>> ImageQualityTable::count_by_area() {
  StatementScope query(db_.cached(
      "SELECT width * height AS area, count(*) FROM image_quality GROUP BY area ORDER BY area"));
  query->bind_all();
  std::vector<std::pair<std::int64_t, std::int64_t>> counts;
  while (query->step()) counts.emplace_back(query->column_int64(0), query->column_int64(1));
  return counts;
}

std::int64_t ImageQualityTable::count_colour(double colour_from) {
  StatementScope query(
      db_.cached("SELECT count(*) FROM image_quality WHERE grayscale_score >= ?1"));
  query->bind_all(colour_from);
  WINNOW_THROW_IF_NOT(query->step(), "{}: counting colour images returned no row", db_.path());
  return query->column_int64(0);
}

}  // namespace winnow::store
