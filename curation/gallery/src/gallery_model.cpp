// build_gallery: what the page shows, read from the store and the index.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "thumbnail.h"
#include "winnow/curation/core/base64.h"
#include "winnow/curation/gallery/gallery.h"
#include "winnow/error.h"
#include "winnow/store/image_quality_table.h"
#include "winnow/store/vector_table.h"
#include "word_diff.h"

namespace winnow::curation::gallery {

namespace {

using nlohmann::json;

json parse_details(const std::string& text) {
  if (text.empty()) return json::object();
  json j = json::parse(text, nullptr, false);
  return j.is_object() ? j : json::object();
}

// A number at `path` in `j` (e.g. {"near_duplicate", "best_similarity"}).
std::optional<double> number_at(const json& j, std::initializer_list<const char*> path) {
  const json* at = &j;
  for (const char* key : path) {
    if (!at->is_object() || !at->contains(key)) return std::nullopt;
    at = &(*at)[key];
  }
  return at->is_number() ? std::optional(at->get<double>()) : std::nullopt;
}

std::string text_at(const json& j, const char* outer, const char* key) {
  if (!j.contains(outer) || !j[outer].is_object()) return {};
  const json& o = j[outer];
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : std::string();
}

// Reads the samples' pictures and texts once each.
class ItemReader {
 public:
  ItemReader(Dataset& dataset, const GalleryOptions& options, Gallery& gallery)
      : dataset_(dataset),
        store_(dataset.store()),
        vectors_(store_.database()),
        quality_(store_.database()),
        gallery_(gallery) {
    spec_.side = options.thumbnail_side;
    spec_.quality = options.jpeg_quality;
    spec_.max_pixels = dataset.config().max_image_pixels;
    for (const store::ReviewRecord& r : store_.reviews()) {
      reviews_[r.sample_id] =
          std::string(to_string(r.verdict)) + (r.reviewer.empty() ? "" : " by " + r.reviewer);
    }
  }

  GalleryItem item(const store::SampleRecord& s, const std::string& reason) {
    GalleryItem item;
    item.id = s.id;
    item.key = s.external_key;
    item.label = s.label ? dataset_.label_names().name_of(*s.label) : "";
    item.source = s.source;
    item.status = std::string(to_string(s.status));
    item.batch = s.batch_id.value_or(0);
    item.reason = reason;
    if (auto r = reviews_.find(s.id); r != reviews_.end()) item.review = r->second;
    if (const auto q = quality_.find(s.id)) {
      item.width = q->width;
      item.height = q->height;
    }
    // An exact copy shows its original's content.
    const std::int64_t content_id =
        s.status == store::SampleStatus::duplicate_exact && s.duplicate_of ? *s.duplicate_of : s.id;
    fill_content(item, content_id);
    if (item.thumbnail.empty() && item.text.empty()) ++gallery_.missing;
    if (!item.thumbnail.empty()) ++gallery_.thumbnails;
    return item;
  }

  GalleryItem item(std::int64_t id) {
    const std::optional<store::SampleRecord> s = store_.find_sample(id);
    WINNOW_THROW_IF_NOT(s, "{}: no sample with id {}", dataset_.path(), id);
    return item(*s, "");
  }

  const json& ingest_details(std::int64_t id) {
    auto [at, fresh] = details_.try_emplace(id);
    if (fresh) {
      for (const store::EventRecord& e : store_.events_of(id)) {
        if (e.kind == store::kEventIngest) {
          at->second = parse_details(e.details_json);
          break;
        }
      }
    }
    return at->second;
  }

  std::optional<store::StoredContent> stored(std::int64_t id) { return vectors_.content_of(id); }

 private:
  void fill_content(GalleryItem& item, std::int64_t id) {
    const json& details = ingest_details(id);
    std::string why_not;
    if (details.contains("file") && details["file"].is_string()) {
      const std::string file = details["file"].get<std::string>();
      try {
        item.thumbnail = file_thumbnail(file, spec_);
        return;
      } catch (const Error& e) {
        why_not = e.what();
      }
    }
    if (const std::optional<store::StoredContent> c = stored(id)) {
      if (c->kind == "text") {
        item.text = c->bytes;
        return;
      }
      item.thumbnail = stored_thumbnail(*c, spec_);
      if (!item.thumbnail.empty()) {
        if (!why_not.empty()) item.missing = why_not + " (the stored working image is shown)";
        return;
      }
    }
    if (const std::optional<store::StoredContent> copy = copy_pixels(details)) {
      item.thumbnail = stored_thumbnail(*copy, spec_);
      if (!item.thumbnail.empty()) return;
    }
    if (details.contains("text") && details["text"].is_string()) {
      item.text = details["text"].get<std::string>();
      return;
    }
    item.missing = !why_not.empty() ? why_not : "the content of this sample is not stored";
  }

  // A near copy of a pixels record keeps its grey levels in its details.
  static std::optional<store::StoredContent> copy_pixels(const json& details) {
    const auto p = details.find("pixels");
    if (p == details.end() || !p->is_object()) return std::nullopt;
    const std::optional<double> width = number_at(*p, {"width"}),
                                height = number_at(*p, {"height"});
    const auto grey = p->find("grey");
    if (!width || !height || grey == p->end() || !grey->is_string()) return std::nullopt;
    const auto bytes = base64_decode(grey->get<std::string>());
    if (!bytes) return std::nullopt;
    store::StoredContent c;
    c.kind = "pixels";
    c.width = static_cast<std::int64_t>(*width);
    c.height = static_cast<std::int64_t>(*height);
    c.bytes.assign(bytes->begin(), bytes->end());
    return c;
  }

  Dataset& dataset_;
  store::MetadataStore& store_;
  store::VectorTable vectors_;
  store::ImageQualityTable quality_;
  Gallery& gallery_;
  ThumbnailSpec spec_;
  std::map<std::int64_t, std::string> reviews_;
  std::unordered_map<std::int64_t, json> details_;
};

struct CopyRow {
  store::SampleRecord sample;
  std::string reason;
  json details;
};

// Duplicate groups: each original with its copies; label conflicts first,
// then the groups with the least similar copy (the questionable calls).
void add_duplicate_groups(Dataset& dataset, ItemReader& reader, const GalleryOptions& options,
                          Gallery& gallery) {
  std::map<std::int64_t, std::vector<CopyRow>> by_original;
  for (store::SampleStatus status :
       {store::SampleStatus::duplicate_exact, store::SampleStatus::duplicate_near}) {
    dataset.store().for_each_sample_with_decision(
        [&](const store::SampleRecord& s, const store::MetadataStore::DecisionText& d) {
          if (s.duplicate_of)
            by_original[*s.duplicate_of].push_back({s, d.reason, parse_details(d.details_json)});
        },
        status);
  }
  struct Ranked {
    std::int64_t original;
    bool conflict;
    double lowest;
  };
  std::vector<Ranked> order;
  for (const auto& [original, copies] : by_original) {
    Ranked r{original, false, 1.0};
    for (const CopyRow& c : copies) {
      r.conflict = r.conflict || c.details.contains("label_conflict");
      r.lowest = std::min(
          r.lowest, number_at(c.details, {"near_duplicate", "best_similarity"}).value_or(1.0));
    }
    order.push_back(r);
    gallery.copies_total += copies.size();
  }
  std::sort(order.begin(), order.end(), [](const Ranked& a, const Ranked& b) {
    if (a.conflict != b.conflict) return a.conflict;
    if (a.lowest != b.lowest) return a.lowest < b.lowest;
    return a.original < b.original;
  });
  gallery.groups_total = order.size();
  if (order.size() > options.max_per_section) order.resize(options.max_per_section);
  for (const Ranked& r : order) {
    DuplicateGroup group;
    group.original = reader.item(r.original);
    group.label_conflict = r.conflict;
    for (const CopyRow& c : by_original[r.original]) {
      DuplicateCopy copy;
      copy.item = reader.item(c.sample, c.reason);
      copy.exact = c.sample.status == store::SampleStatus::duplicate_exact;
      copy.similarity =
          copy.exact ? 1.0
                     : number_at(c.details, {"near_duplicate", "best_similarity"}).value_or(1.0);
      copy.label_conflict = c.details.contains("label_conflict");
      if (!copy.exact && !copy.item.text.empty() && !group.original.text.empty()) {
        auto [left, right] = marked_word_diff(copy.item.text, group.original.text);
        copy.copy_marked_html = std::move(left);
        copy.original_marked_html = std::move(right);
      }
      group.copies.push_back(std::move(copy));
    }
    gallery.groups.push_back(std::move(group));
  }
}

// Label issues, lowest label quality first, each with its nearest labelled
// neighbours from the index.
void add_label_issues(Dataset& dataset, ItemReader& reader, const GalleryOptions& options,
                      Gallery& gallery) {
  std::vector<CopyRow> issues;
  dataset.store().for_each_sample_with_decision(
      [&](const store::SampleRecord& s, const store::MetadataStore::DecisionText& d) {
        issues.push_back({s, d.reason, parse_details(d.details_json)});
      },
      store::SampleStatus::label_issue);
  std::stable_sort(issues.begin(), issues.end(), [](const CopyRow& a, const CopyRow& b) {
    return a.sample.label_quality.value_or(1.0) < b.sample.label_quality.value_or(1.0);
  });
  gallery.label_issues_total = issues.size();
  if (issues.size() > options.max_per_section) issues.resize(options.max_per_section);
  store::VectorTable vectors(dataset.store().database());
  const std::size_t dim = dataset.embedder().dim();
  index::VectorIndex& index = dataset.index();
  for (const CopyRow& row : issues) {
    LabelIssueEntry entry;
    entry.item = reader.item(row.sample, row.reason);
    entry.quality = row.sample.label_quality;
    entry.suggested = text_at(row.details, "label_quality", "suggested_label");
    entry.confidence = number_at(row.details, {"label_quality", "suggested_share"});
    if (entry.suggested.empty()) {  // confident learning's details
      entry.suggested = text_at(row.details, "confident_learning", "suggested");
      entry.confidence = number_at(row.details, {"confident_learning", "p_suggested"});
    }
    std::vector<float> embedding;
    try {
      vectors.read_embeddings({row.sample.id}, dim, embedding);
    } catch (const Error&) {
      embedding.clear();  // stored before label issues kept their vectors: no neighbours
    }
    if (!embedding.empty() && index.size() > 1) {
      const auto k = static_cast<int>(std::min(options.neighbours + 1, index.size()));
      const index::SearchResults found = index.search(embedding, k);
      for (std::size_t r = 0; r < found.k && entry.neighbours.size() < options.neighbours; ++r) {
        const std::int64_t id = found.id(0, r);
        if (id < 0 || id == row.sample.id) continue;
        entry.neighbours.push_back(reader.item(id));
      }
    }
    gallery.label_issues.push_back(std::move(entry));
  }
}

// One strip per image issue: the flagged images, lowest score first.
void add_quality_strips(Dataset& dataset, ItemReader& reader, const GalleryOptions& options,
                        Gallery& gallery) {
  std::array<std::vector<std::pair<double, std::int64_t>>, store::kImageIssueCount> flagged;
  store::ImageQualityTable(dataset.store().database())
      .for_each([&](const store::ImageQualityTable::Row& row) {
        for (std::size_t i = 0; i < store::kImageIssueCount; ++i) {
          const store::ImageIssue issue = store::kAllImageIssues[i];
          if (row.record.has(issue))
            flagged[i].emplace_back(row.record.score(issue).value_or(0.0), row.record.sample_id);
        }
      });
  for (std::size_t i = 0; i < store::kImageIssueCount; ++i) {
    if (flagged[i].empty()) continue;
    std::sort(flagged[i].begin(), flagged[i].end());
    QualityStrip strip;
    strip.issue = to_string(store::kAllImageIssues[i]);
    strip.total = flagged[i].size();
    for (std::size_t n = 0; n < flagged[i].size() && n < options.max_per_section; ++n) {
      const std::optional<store::SampleRecord> s =
          dataset.store().find_sample(flagged[i][n].second);
      if (!s) continue;
      strip.worst.push_back({reader.item(*s, ""), flagged[i][n].first});
    }
    gallery.strips.push_back(std::move(strip));
  }
}

// Outliers: the candidates of highest gain measured against today's index
// (their nearest other judged sample), least similar first.
void add_outliers(Dataset& dataset, ItemReader& reader, const GalleryOptions& options,
                  Gallery& gallery) {
  index::VectorIndex& index = dataset.index();
  if (index.size() < 3 || options.outliers == 0) return;
  std::vector<std::pair<double, store::SampleRecord>> by_gain;
  dataset.store().for_each_sample(
      [&](const store::SampleRecord& s) {
        if (s.gain) by_gain.emplace_back(*s.gain, s);
      },
      store::SampleStatus::accepted);
  std::stable_sort(by_gain.begin(), by_gain.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  if (by_gain.size() > options.outlier_candidates) by_gain.resize(options.outlier_candidates);
  store::VectorTable vectors(dataset.store().database());
  const std::size_t dim = dataset.embedder().dim();
  struct Found {
    double similarity;
    std::size_t candidate;
    std::int64_t nearest;
  };
  std::vector<Found> found;
  for (std::size_t c = 0; c < by_gain.size(); ++c) {
    std::vector<float> embedding;
    try {
      vectors.read_embeddings({by_gain[c].second.id}, dim, embedding);
    } catch (const Error&) {
      continue;  // no stored vector
    }
    const index::SearchResults near = index.search(embedding, 2);
    for (std::size_t r = 0; r < near.k; ++r) {
      const std::int64_t id = near.id(0, r);
      if (id < 0 || id == by_gain[c].second.id) continue;
      found.push_back({near.similarity(0, r), c, id});
      break;
    }
  }
  gallery.outlier_candidates = by_gain.size();
  std::sort(found.begin(), found.end(), [](const Found& a, const Found& b) {
    return a.similarity != b.similarity ? a.similarity < b.similarity : a.candidate < b.candidate;
  });
  for (std::size_t n = 0; n < found.size() && n < options.outliers; ++n) {
    const std::optional<store::SampleRecord> nearest =
        dataset.store().find_sample(found[n].nearest);
    gallery.outliers.push_back({reader.item(by_gain[found[n].candidate].second, ""),
                                found[n].similarity, nearest ? nearest->external_key : ""});
  }
}

}  // namespace

Gallery build_gallery(Dataset& dataset, const GalleryOptions& options) {
  Gallery gallery;
  gallery.database = dataset.path();
  ItemReader reader(dataset, options, gallery);
  add_duplicate_groups(dataset, reader, options, gallery);
  add_label_issues(dataset, reader, options, gallery);
  add_quality_strips(dataset, reader, options, gallery);
  add_outliers(dataset, reader, options, gallery);
  std::set<std::string> labels;
  for (const auto& q : dataset.store().label_quality_by_label()) {
    labels.insert(dataset.label_names().name_of(q.label));
  }
  const auto add = [&](const GalleryItem& i) {
    if (!i.label.empty()) labels.insert(i.label);
  };
  for (const DuplicateGroup& g : gallery.groups) {
    add(g.original);
    for (const DuplicateCopy& c : g.copies) add(c.item);
  }
  for (const LabelIssueEntry& e : gallery.label_issues) {
    add(e.item);
    if (!e.suggested.empty()) labels.insert(e.suggested);
  }
  gallery.labels.assign(labels.begin(), labels.end());
  return gallery;
}

}  // namespace winnow::curation::gallery
