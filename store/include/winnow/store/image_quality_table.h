// ImageQualityTable: the image-quality scores and issues of every sample
// whose file was a decoded image (table image_quality, schema migration 3),
// written by ingest in the same transaction as the sample's decision, read by
// export, status and the quality report. The scores' meaning and the
// thresholds that turn them into issues belong to curation (docs/images.md,
// "Image-quality issues"); the store keeps one score and one 0/1 flag per
// issue.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "winnow/store/sample_status.h"

namespace winnow::store {

class Database;

enum class ImageIssue : std::size_t {
  blurry,
  dark,
  bright,
  low_information,
  grayscale,
  odd_aspect_ratio,
  odd_size,
};
inline constexpr std::size_t kImageIssueCount = 7;
inline constexpr std::array<ImageIssue, kImageIssueCount> kAllImageIssues = {
    ImageIssue::blurry,          ImageIssue::dark,      ImageIssue::bright,
    ImageIssue::low_information, ImageIssue::grayscale, ImageIssue::odd_aspect_ratio,
    ImageIssue::odd_size};

// "blurry", "dark", "bright", "low_information", "grayscale",
// "odd_aspect_ratio", "odd_size" (also the table's column names).
const char* to_string(ImageIssue issue);

// One sample's row.
struct ImageQualityRecord {
  std::int64_t sample_id = 0;
  std::int64_t width = 0;  // of the file, from its header
  std::int64_t height = 0;
  // By ImageIssue; unset when the issue was not judged (odd size and
  // grayscale before the dataset had enough images to compare with).
  std::array<std::optional<double>, kImageIssueCount> scores{};
  std::array<bool, kImageIssueCount> issues{};

  std::optional<double> score(ImageIssue issue) const {
    return scores[static_cast<std::size_t>(issue)];
  }
  bool has(ImageIssue issue) const { return issues[static_cast<std::size_t>(issue)]; }
  bool any_issue() const;
};

// How many images have a row, and how many of them have each issue.
struct ImageIssueCounts {
  std::int64_t images = 0;
  std::int64_t with_issue = 0;  // any issue
  std::array<std::int64_t, kImageIssueCount> issues{};
};

class ImageQualityTable {
 public:
  explicit ImageQualityTable(Database& db) : db_(db) {}

  // Adds the row of a recorded sample. Throws (naming the sample) for a
  // non-positive size or a score that is not finite; through Database::fail
  // when the row cannot be written.
  void put(const ImageQualityRecord& record);
  std::optional<ImageQualityRecord> find(std::int64_t sample_id);
  ImageIssueCounts count();
  // Every row in sample-id order with its sample's status, source ("" when
  // unknown) and label, from one query; `visit` must not write to the store.
  struct Row {
    ImageQualityRecord record;
    SampleStatus status = SampleStatus::accepted;
    std::string source;
    std::optional<std::int64_t> label;
  };
  void for_each(const std::function<void(const Row&)>& visit);

  // What the dataset-relative issues compare with: how many images have each
  // area (width x height), smallest first ...
  std::vector<std::pair<std::int64_t, std::int64_t>> count_by_area();
  // ... and how many have a grayscale score of at least `colour_from`.
  std::int64_t count_colour(double colour_from);

 private:
  Database& db_;
};

}  // namespace winnow::store
