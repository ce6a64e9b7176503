// The review gallery (`winnow gallery`): one self-contained HTML page of the
// flagged samples as pictures or text (duplicate groups, label issues,
// image-quality strips), with filters and verdict buttons whose download
// `winnow review` imports (docs/gallery.md). Built from a Dataset opened to
// read; the page needs no network and no server.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "winnow/curation/dataset/dataset.h"

namespace winnow::curation::gallery {

struct GalleryOptions {
  // At most this many entries per section (groups, label issues, samples of
  // one image issue), worst first; the page says how many it leaves out.
  std::size_t max_per_section = 200;
  std::size_t thumbnail_side = 112;  // px, the longer side
  int jpeg_quality = 75;
  std::size_t neighbours = 5;             // shown beside each label issue
  std::size_t outlier_candidates = 2000;  // of highest gain, measured for the outlier section
  std::size_t outliers = 50;              // shown
};

// One sample as the page shows it.
struct GalleryItem {
  std::int64_t id = 0;
  std::string key;
  std::string label;  // "" when unlabelled
  std::string source;
  std::string status;
  std::int64_t batch = 0;
  std::string reason;
  std::optional<std::int64_t> width, height;  // of the image file
  std::string review;                         // a person's verdict already recorded, "" when none
  // The picture as a data: URI (JPEG), or the text excerpt, or why neither
  // can be shown (the file has moved, the content was not stored).
  std::string thumbnail;
  std::string text;
  std::string missing;
};

struct DuplicateCopy {
  GalleryItem item;
  bool exact = false;
  double similarity = 1.0;
  bool label_conflict = false;
  // Text pairs: the copy's words and the original's, marked where they differ.
  std::string copy_marked_html, original_marked_html;
};

struct DuplicateGroup {
  GalleryItem original;
  std::vector<DuplicateCopy> copies;
  bool label_conflict = false;  // some copy carries another label
};

struct LabelIssueEntry {
  GalleryItem item;
  std::string suggested;             // the label the neighbours suggest, "" when none
  std::optional<double> confidence;  // the share of the vote for it
  std::optional<double> quality;     // the label quality
  std::vector<GalleryItem> neighbours;
};

struct QualityEntry {
  GalleryItem item;
  double score = 0.0;
};

struct QualityStrip {
  std::string issue;
  std::size_t total = 0;
  std::vector<QualityEntry> worst;  // lowest score first
};

// A sample far from every other: its nearest judged sample's similarity.
struct OutlierEntry {
  GalleryItem item;
  double nearest_similarity = 0.0;
  std::string nearest_key;
};

struct Gallery {
  std::string database;
  std::vector<DuplicateGroup> groups;
  std::size_t groups_total = 0;
  std::size_t copies_total = 0;
  std::vector<LabelIssueEntry> label_issues;
  std::size_t label_issues_total = 0;
  std::vector<QualityStrip> strips;
  // The judged samples least similar to their nearest other one, lowest
  // first; looked for among the outlier_candidates of highest information
  // gain (isolation at ingest), then measured against today's index.
  std::vector<OutlierEntry> outliers;
  std::size_t outlier_candidates = 0;
  std::vector<std::string> labels;  // every label name, for the relabel choice
  std::size_t thumbnails = 0;       // pictures embedded
  std::size_t missing = 0;          // items shown without one
};

// Reads what the page shows from `dataset`. Pictures come from each image
// file (where the sample's ingest recorded it) through winnow's own decoder
// and resizer, else from the working image the store keeps; exact copies show
// their original's.
Gallery build_gallery(Dataset& dataset, const GalleryOptions& options = {});

// The page: HTML with its CSS, script and pictures inline. Every string from
// the data is escaped.
std::string render_gallery_html(const Gallery& gallery);

}  // namespace winnow::curation::gallery
