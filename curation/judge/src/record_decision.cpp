#include "winnow/curation/judge/record_decision.h"

#include "winnow/curation/core/base64.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/judge/information_gain.h"

#include "winnow/curation/judge/label_verdict.h"

namespace winnow::curation::judge {

namespace {

using nlohmann::json;

// The text of a flat JSON object, written field by field. A decision's
// details are built once per sample; an nlohmann::json tree (a std::map per
// object, then dump) was a visible share of an ingest. Numbers are written as the
// shortest text that reads back the same value, like nlohmann's dump.
class JsonObjectText {
 public:
  JsonObjectText& number(std::string_view key, double value) {
    open(key);
    if (std::isfinite(value)) {
      fmt::format_to(std::back_inserter(text_), "{}", value);
    } else {
      text_ += "null";  // as nlohmann writes NaN and infinities
    }
    return *this;
  }
  JsonObjectText& integer(std::string_view key, std::int64_t value) {
    open(key);
    fmt::format_to(std::back_inserter(text_), "{}", value);
    return *this;
  }
  JsonObjectText& boolean(std::string_view key, bool value) {
    open(key);
    text_ += value ? "true" : "false";
    return *this;
  }
  JsonObjectText& string(std::string_view key, const std::string& value) {
    open(key);
    text_ += json(value).dump();  // escaped
    return *this;
  }
  JsonObjectText& object(std::string_view key, const JsonObjectText& value) {
    open(key);
    text_ += value.str();
    return *this;
  }
  std::string str() const { return text_.empty() ? "{}" : text_ + "}"; }

 private:
  // Keys are fixed identifiers here: no escaping needed.
  void open(std::string_view key) {
    text_ += text_.empty() ? "{\"" : ",\"";
    text_ += key;
    text_ += "\":";
  }
  std::string text_;
};

store::Decision rejected(const Candidate& candidate, const std::string& reason) {
  json details = {{"line", candidate.line}, {"key", candidate.key}};
  if (!candidate.file.empty()) details["file"] = candidate.file;
  return {store::SampleStatus::rejected, std::nullopt, reason, details.dump()};
}

// The first kTextExcerptBytes of `text`, cut before a UTF-8 character that
// would not fit whole.
std::string text_excerpt(std::string_view text) {
  if (text.size() <= kTextExcerptBytes) return std::string(text);
  std::size_t end = kTextExcerptBytes;
  while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) --end;
  return std::string(text.substr(0, end));
}

JsonObjectText near_duplicate_details(const dedup::NearDuplicateMatch& m,
                                      const DecisionRules& rules) {
  JsonObjectText near;
  near.number("threshold", m.threshold)
      .number("min_candidate_similarity", m.min_candidate_similarity)
      .number("candidate_margin", rules.candidate_margin)
      .integer("candidates", m.candidates)
      .integer("candidates_checked", m.candidates_checked)
      .integer("candidates_ruled_out", m.candidates_ruled_out)
      .number("best_similarity", m.similarity)
      .number("best_candidate_similarity", m.candidate_similarity);
  if (m.found) near.integer("duplicate_of", m.id);
  return near;
}

// An original's key after its id in a reason: ` ("a/cat.png")`, escaped as
// JSON text; nothing when unknown.
std::string key_note(const std::string& key) {
  return key.empty() ? std::string() : " (" + json(key).dump() + ")";
}

// The reason's and details' note of a copy whose label differs from its
// original's.
std::string conflict_note(const std::string& label, const std::string& original_label) {
  return fmt::format("; a label conflict: labelled {}, its original {}", json(label).dump(),
                     json(original_label).dump());
}

JsonObjectText conflict_details(const std::string& label, const std::string& original_label) {
  JsonObjectText conflict;
  conflict.string("label", label).string("original_label", original_label);
  return conflict;
}

}  // namespace

bool label_conflict(const std::optional<std::string>& label,
                    const std::optional<std::string>& original_label) {
  return label && original_label && *label != *original_label;
}

bool abstained(const Neighbourhood& n, const DecisionRules& rules) {
  return n.label_quality && !n.label_judged &&
         knn_flags_label(*n.label_quality, n.label_support, rules.min_label_neighbours,
                         rules.label_k);
}

namespace {

JsonObjectText label_quality_details(const Neighbourhood& n, const DecisionRules& rules) {
  const labels::LabelQualityResult& q = *n.label_quality;
  JsonObjectText quality;
  quality.number("quality", q.quality)
      .integer("neighbours", static_cast<std::int64_t>(q.neighbours))
      .integer("k", q.k)
      .number("flag_below", q.flag_below)
      .integer("min_neighbours", rules.min_label_neighbours);
  if (q.suggested_label) {
    quality.string("suggested_label", n.suggested_label)
        .number("suggested_share", q.suggested_share);
  }
  quality.integer("label_support", n.label_support)
      .number("class_lift", n.label_lift)
      .number("min_lift", rules.label_min_lift);
  if (abstained(n, rules)) quality.boolean("abstained", true);
  return quality;
}

bool is_label_issue(const Neighbourhood& n, const DecisionRules& rules) {
  return n.label_judged && knn_flags_label(*n.label_quality, n.label_support,
                                           rules.min_label_neighbours, rules.label_k);
}

}  // namespace

int neighbours_per_record(const CurationConfig& config) {
  return std::max({config.candidates, config.label_k, kGainNeighbours});
}

DecisionRules DecisionRules::of(const CurationConfig& config) {
  return {config.candidate_margin, config.min_label_neighbours, config.label_k,
          config.label_min_lift};
}

store::Decision decide(const Candidate& candidate, const Neighbourhood& n,
                       const DecisionRules& rules) {
  if (candidate.rejection) return rejected(candidate, *candidate.rejection);
  if (candidate.annotations_only) {
    return {store::SampleStatus::accepted, std::nullopt, std::string(kAnnotationsOnlyReason),
            json{{"annotations_only", true}, {"line", candidate.line}}.dump()};
  }
  if (candidate.exact_duplicate_of) {
    const std::int64_t original = *candidate.exact_duplicate_of;
    json details = {{"content_hash", candidate.content_hash}, {"line", candidate.line}};
    if (!candidate.file.empty()) details["file"] = candidate.file;
    std::string reason = fmt::format("same content hash as sample {}{}", original,
                                     key_note(candidate.exact_original_key));
    if (label_conflict(candidate.label, candidate.exact_original_label)) {
      details["label_conflict"] = {{"label", *candidate.label},
                                   {"original_label", *candidate.exact_original_label}};
      reason += conflict_note(*candidate.label, *candidate.exact_original_label);
    }
    return {store::SampleStatus::duplicate_exact, original, reason, details.dump()};
  }
  if (candidate.image_issues) return rejected(candidate, *candidate.image_issues);
  if (candidate.embed_error) return rejected(candidate, "cannot embed: " + *candidate.embed_error);

  JsonObjectText details;
  details.number("gain", n.gain)
      .integer("gain_k", kGainNeighbours)
      .integer("neighbours", static_cast<std::int64_t>(n.neighbours));
  if (!candidate.file.empty()) details.string("file", candidate.file);
  if (n.near_duplicate) {
    const dedup::NearDuplicateMatch& m = *n.near_duplicate;
    details.object("near_duplicate", near_duplicate_details(m, rules));
    if (m.found && n.better_copy) {
      const Neighbourhood::BetterCopy& b = *n.better_copy;
      JsonObjectText better;
      better.integer("original", b.original)
          .integer("width", b.width)
          .integer("height", b.height)
          .integer("original_width", b.original_width)
          .integer("original_height", b.original_height);
      details.object("better_copy", better);
    } else if (m.found) {
      std::string reason =
          fmt::format("similarity {:.4f} to sample {}{} >= threshold {}", m.similarity, m.id,
                      key_note(n.near_original_key), m.threshold);
      if (label_conflict(candidate.label, n.near_original_label)) {
        details.object("label_conflict",
                       conflict_details(*candidate.label, *n.near_original_label));
        reason += conflict_note(*candidate.label, *n.near_original_label);
      }
      if (!candidate.text.empty()) details.string("text", text_excerpt(candidate.text));
      if (candidate.pixels != nullptr && !candidate.pixels->empty() &&
          candidate.pixels->size() <= kCopyPixelsBytes &&
          candidate.pixels->size() == candidate.width * candidate.height) {
        JsonObjectText pixels;
        pixels.integer("width", static_cast<std::int64_t>(candidate.width))
            .integer("height", static_cast<std::int64_t>(candidate.height))
            .string("grey", base64_encode(candidate.pixels->data(), candidate.pixels->size()));
        details.object("pixels", pixels);
      }
      return {store::SampleStatus::duplicate_near, m.id, reason, details.str()};
    }
  }
  // The better copy of its near duplicate's original says so in its reason.
  const auto kept = [&n](store::Decision decision) {
    if (n.better_copy) {
      const Neighbourhood::BetterCopy& b = *n.better_copy;
      decision.reason += fmt::format(
          "; the better copy ({} x {}) of sample {} ({} x {}), which becomes its duplicate",
          b.width, b.height, b.original, b.original_width, b.original_height);
    }
    return decision;
  };
  if (n.label_quality) {
    details.object("label_quality", label_quality_details(n, rules));
    if (is_label_issue(n, rules)) {
      const labels::LabelQualityResult& q = *n.label_quality;
      return kept(
          {store::SampleStatus::label_issue, std::nullopt,
           fmt::format("label quality {:.3f} < {} over {} neighbours (suggested {})", q.quality,
                       q.flag_below, q.neighbours, q.suggested_label ? n.suggested_label : "-"),
           details.str()});
    }
  }
  if (abstained(n, rules)) {
    return kept({store::SampleStatus::accepted, std::nullopt,
                 fmt::format("accepted (gain {:.4f}); the label check abstains on this class "
                             "(lift {:.3f} < {}), where label quality {:.3f} < {} would have "
                             "flagged it",
                             n.gain, n.label_lift, rules.label_min_lift, n.label_quality->quality,
                             n.label_quality->flag_below),
                 details.str()});
  }
  return kept({store::SampleStatus::accepted, std::nullopt,
               fmt::format("accepted (gain {:.4f})", n.gain), details.str()});
}

}  // namespace winnow::curation::judge
