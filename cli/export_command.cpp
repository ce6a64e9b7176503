// winnow export --db D [--status S] [--format jsonl|csv] [--details]: every sample
// with its status and the reason for it (and the decision's details), and the
// image-quality scores and issues of the samples whose file was an image.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/core/printable_text.h"
#include "cli_json.h"
#include "command.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/error.h"
#include "winnow/store/image_quality_table.h"

namespace winnow::cli {

namespace {

// A plain decimal number ("-1", "+2.5", "1e-3"): a spreadsheet reads it as a
// number, never as a formula, so it is kept as is.
bool is_plain_number(const std::string& s) {
  std::size_t i = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
  const auto digits = [&] {
    const std::size_t from = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - from;
  };
  std::size_t n = digits();
  if (i < s.size() && s[i] == '.') {
    ++i;
    n += digits();
  }
  if (n == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

// One CSV cell of user-supplied text (key, label, source). Control
// characters, bidirectional overrides and zero-width characters are written
// escaped (visible_text), a leading tab or CR among them. A cell starting
// with = + - @ would run as a formula when the file is opened in a
// spreadsheet (CSV injection, OWASP), so it gets a leading ' unless it is a
// plain number; then RFC 4180 quoting.
std::string csv_field(const std::string& s) {
  std::string cell = curation::visible_text(s);  // a tab or CR is \x09 or \x0d now
  if (!cell.empty() && std::string_view("=+-@").find(cell[0]) != std::string_view::npos &&
      !is_plain_number(cell)) {
    cell.insert(0, 1, '\'');
  }
  if (cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

// The image-quality columns of the CSV, after the others.
std::string image_quality_csv_header() {
  std::string header = ",image_width,image_height,image_issues";
  for (store::ImageIssue issue : store::kAllImageIssues) {
    header += fmt::format(",{}_score", to_string(issue));
  }
  return header;
}

// The issues' names, joined by `separator`.
std::string issue_names(const store::ImageQualityRecord& q, const char* separator) {
  std::string names;
  for (store::ImageIssue issue : store::kAllImageIssues) {
    if (!q.has(issue)) continue;
    if (!names.empty()) names += separator;
    names += to_string(issue);
  }
  return names;
}

std::string image_quality_csv(const std::optional<store::ImageQualityRecord>& q) {
  if (!q) return std::string(3 + store::kImageIssueCount, ',');
  std::string cells = fmt::format(",{},{},{}", q->width, q->height, issue_names(*q, ";"));
  for (store::ImageIssue issue : store::kAllImageIssues) {
    const std::optional<double> score = q->score(issue);
    cells += score ? fmt::format(",{}", *score) : std::string(",");
  }
  return cells;
}

// {"width", "height", "issues": [names], "scores": {name: score or null}}, or null.
nlohmann::json image_quality_json(const std::optional<store::ImageQualityRecord>& q) {
  using nlohmann::json;
  if (!q) return nullptr;
  json issues = json::array();
  json scores = json::object();
  for (store::ImageIssue issue : store::kAllImageIssues) {
    if (q->has(issue)) issues.push_back(to_string(issue));
    const std::optional<double> score = q->score(issue);
    scores[to_string(issue)] = score ? json(*score) : json(nullptr);
  }
  return {{"width", q->width}, {"height", q->height}, {"issues", issues}, {"scores", scores}};
}

// A person's verdict on the sample (winnow review), or null.
nlohmann::json review_json(const store::ReviewRecord* r, const curation::LabelNames& names) {
  if (r == nullptr) return nullptr;
  return {{"verdict", std::string(to_string(r->verdict))},
          {"label", r->label ? nlohmann::json(names.name_of(*r->label)) : nlohmann::json(nullptr)},
          {"reviewer", r->reviewer},
          {"note", r->note},
          {"at", r->created_at}};
}

}  // namespace

Command add_export_command(CLI::App& parent) {
  struct Options {
    std::string db, only, format = "jsonl";
    bool details = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand("export", "print every sample (or one status) as JSONL or CSV");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--status", o->only,
                  "accepted|duplicate_exact|duplicate_near|label_issue|rejected");
  cmd->add_option("--format", o->format, "jsonl or csv")->capture_default_str();
  cmd->add_flag("--details", o->details,
                "also the decision's details (thresholds, similarities, neighbour counts) as "
                "a JSON object (in CSV: its JSON text)");
  cmd->footer("Example: winnow export --db data.db --status rejected --format csv");
  return {
      cmd, [o] {
        std::optional<store::SampleStatus> filter;
        if (!o->only.empty()) filter = store::parse_sample_status(o->only);
        WINNOW_THROW_IF_NOT(o->format == "jsonl" || o->format == "csv",
                            "--format '{}' is not jsonl or csv", o->format);
        curation::Dataset dataset(o->db, curation::OpenMode::read_only);
        const bool csv = o->format == "csv";
        if (csv) {
          std::cout << "id,key,content_hash,label,source,status,duplicate_of,duplicate_of_key,"
                       "label_quality,gain,batch_id,created_at,reason,review,reviewer"
                    << (o->details ? ",details" : "") << image_quality_csv_header() << "\n";
        }
        auto opt = [](const auto& v) { return v ? fmt::format("{}", *v) : std::string(); };
        using nlohmann::json;
        // Looked up per sample while the samples' query is open: the same snapshot.
        store::ImageQualityTable image_quality(dataset.store().database());
        std::map<std::int64_t, store::ReviewRecord> reviews;  // a person's verdicts: few
        for (store::ReviewRecord& r : dataset.store().reviews()) reviews[r.sample_id] = r;
        const auto key_of =
            [&](const std::optional<std::int64_t>& id) -> std::optional<std::string> {
          if (!id) return std::nullopt;
          const std::optional<store::SampleRecord> original = dataset.store().find_sample(*id);
          return original ? std::optional(original->external_key) : std::nullopt;
        };
        dataset.store().for_each_sample_with_decision(
            [&](const store::SampleRecord& s, const store::MetadataStore::DecisionText& d) {
              const std::optional<store::ImageQualityRecord> quality = image_quality.find(s.id);
              const std::string label = s.label ? dataset.label_names().name_of(*s.label) : "";
              const std::optional<std::string> original_key = key_of(s.duplicate_of);
              const auto review = reviews.find(s.id);
              const store::ReviewRecord* reviewed =
                  review != reviews.end() ? &review->second : nullptr;
              if (csv) {
                std::cout << s.id << ',' << csv_field(s.external_key) << ',' << s.content_hash
                          << ',' << csv_field(label) << ',' << csv_field(s.source) << ','
                          << to_string(s.status) << ',' << opt(s.duplicate_of) << ','
                          << csv_field(original_key.value_or("")) << ',' << opt(s.label_quality)
                          << ',' << opt(s.gain) << ',' << opt(s.batch_id) << ',' << s.created_at
                          << ',' << csv_field(d.reason) << ','
                          << (reviewed ? to_string(reviewed->verdict) : "") << ','
                          << csv_field(reviewed ? reviewed->reviewer : "");
                if (o->details) std::cout << ',' << csv_field(d.details_json);
                std::cout << image_quality_csv(quality) << '\n';
                return;
              }
              json j = {{"id", s.id},
                        {"key", s.external_key},
                        {"content_hash", s.content_hash},
                        {"label", s.label ? json(label) : json(nullptr)},
                        {"source", s.source},
                        {"status", std::string(to_string(s.status))},
                        {"duplicate_of", s.duplicate_of ? json(*s.duplicate_of) : json(nullptr)},
                        {"duplicate_of_key", original_key ? json(*original_key) : json(nullptr)},
                        {"label_quality", s.label_quality ? json(*s.label_quality) : json(nullptr)},
                        {"gain", s.gain ? json(*s.gain) : json(nullptr)},
                        {"batch_id", s.batch_id ? json(*s.batch_id) : json(nullptr)},
                        {"created_at", s.created_at},
                        {"reason", d.reason},
                        {"image_quality", image_quality_json(quality)},
                        {"review", review_json(reviewed, dataset.label_names())}};
              if (o->details) {
                j["details"] = d.details_json.empty() ? json(nullptr)
                                                      : json::parse(d.details_json, nullptr, false);
              }
              std::cout << json_text(j) << '\n';
            },
            filter);
        return 0;
      }};
}

}  // namespace winnow::cli
