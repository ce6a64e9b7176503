// A person's verdicts: the file read, then each row applied (verdicts.h).
#include "winnow/curation/review/verdicts.h"

#include <string_view>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "winnow/curation/core/regular_file.h"
#include "winnow/curation/readers/annotations/csv_reader.h"
#include "winnow/error.h"
#include "winnow/store/transaction.h"

namespace winnow::curation::review {

namespace {

constexpr std::uint64_t kMaxVerdictFileBytes = std::uint64_t{64} << 20;
constexpr const char* kVerdictNames = "keep, drop, relabel or not_duplicate";

std::vector<VerdictRow> read_csv(std::string_view text, const std::string& path) {
  readers::CsvReader csv(text, path);
  std::vector<std::string> fields;
  if (!csv.next(fields)) return {};
  const auto column = [&](std::string_view name) { return readers::header_column(fields, name); };
  const int item = column("item"), verdict = column("verdict"), label = column("label"),
            reviewer = column("reviewer"), note = column("note");
  if (item < 0 || verdict < 0) {
    WINNOW_THROW_KIND(invalid_input,
                      "{}: line {}: the header must name the columns item and verdict (and any "
                      "of label, reviewer, note)",
                      path, csv.line());
  }
  std::vector<VerdictRow> rows;
  const auto cell = [&](int c) { return readers::cell_at(fields, c); };
  while (csv.next(fields)) {
    rows.push_back(
        {csv.line(), cell(item), cell(verdict), cell(label), cell(reviewer), cell(note)});
  }
  return rows;
}

std::vector<VerdictRow> read_jsonl(std::string_view text, const std::string& path) {
  std::vector<VerdictRow> rows;
  std::size_t line = 0;
  for (std::size_t at = 0; at < text.size();) {
    std::size_t end = text.find('\n', at);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view row_text = text.substr(at, end - at);
    at = end + 1;
    ++line;
    if (row_text.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    const nlohmann::json row = nlohmann::json::parse(row_text, nullptr, false);
    if (!row.is_object()) {
      WINNOW_THROW_KIND(invalid_input, "{}: line {}: not a JSON object", path, line);
    }
    const auto text_of = [&](const char* name) {
      const auto field = row.find(name);
      if (field == row.end() || field->is_null()) return std::string();
      if (!field->is_string()) {
        WINNOW_THROW_KIND(invalid_input, "{}: line {}: field {} is not a string", path, line, name);
      }
      return field->get<std::string>();
    };
    rows.push_back({line, text_of("item"), text_of("verdict"), text_of("label"),
                    text_of("reviewer"), text_of("note")});
  }
  return rows;
}

using Result = VerdictOutcome::Result;

// The status a verdict gives `sample`, or why it cannot apply.
struct Target {
  store::Decision decision;
  std::string refused;  // non-empty: the row is refused
};

Target target_of(store::Verdict verdict, const store::SampleRecord& sample,
                 const std::optional<store::ReviewRecord>& previous) {
  using store::SampleStatus;
  const bool dropped_by_review = previous && previous->verdict == store::Verdict::drop;
  const bool refused_record = sample.status == SampleStatus::rejected && !dropped_by_review;
  const char* never_stored =
      "the pipeline refused this record when it arrived (see its reason), so it was never "
      "part of the dataset: fix it and ingest it again";
  Target t;
  t.decision.status = SampleStatus::accepted;
  switch (verdict) {
    case store::Verdict::keep:
      if (refused_record) t.refused = never_stored;
      break;
    case store::Verdict::drop:
      t.decision.status = SampleStatus::rejected;
      break;
    case store::Verdict::relabel:
      if (refused_record) t.refused = never_stored;
      if (store::is_duplicate(sample.status)) {  // a copy keeps its place; only its label moves
        t.decision.status = sample.status;
        t.decision.duplicate_of = sample.duplicate_of;
      }
      break;
    case store::Verdict::not_duplicate:
      if (!store::is_duplicate(sample.status)) {
        t.refused =
            fmt::format("it is not a duplicate (its status is {})", to_string(sample.status));
      }
      break;
  }
  return t;
}

VerdictOutcome apply_one(store::MetadataStore& store, LabelNames& names, const VerdictRow& row) {
  VerdictOutcome out{row.line, row.item, row.verdict, Result::refused, {}};
  const auto refuse = [&](std::string why) {
    out.why = std::move(why);
    return out;
  };
  const std::optional<store::Verdict> verdict = store::parse_verdict(row.verdict);
  if (!verdict) return refuse(fmt::format("unknown verdict '{}' ({})", row.verdict, kVerdictNames));
  const bool relabel = *verdict == store::Verdict::relabel;
  if (relabel && row.label.empty()) return refuse("relabel needs the new label (column label)");
  if (!relabel && !row.label.empty()) return refuse("a label goes with the verdict relabel only");
  const std::optional<store::SampleRecord> sample = store.find_by_external_key(row.item);
  if (!sample) return refuse("no sample has this key");
  // The same verdict again (a file imported twice) changes nothing.
  const std::optional<store::ReviewRecord> previous = store.review_of(sample->id);
  const std::optional<std::int64_t> label =
      relabel ? names.find(row.label) : std::optional<std::int64_t>();
  if (previous && previous->verdict == *verdict && previous->label == label &&
      (!relabel || label)) {
    out.result = Result::unchanged;
    out.why = std::string(to_string(sample->status));
    return out;
  }
  Target target = target_of(*verdict, *sample, previous);
  if (!target.refused.empty()) return refuse(target.refused);

  store::ReviewRecord review{sample->id, *verdict, std::nullopt, row.reviewer, row.note, {}};
  if (relabel) review.label = names.add(row.label);

  const std::string who = row.reviewer.empty() ? "a reviewer" : row.reviewer;
  const std::string was_label = sample->label ? names.name_of(*sample->label) : "none";
  std::string reason = fmt::format("{} by {} (was {}", row.verdict, who, to_string(sample->status));
  reason += relabel ? fmt::format(", labelled {}): label {}", was_label, row.label) : ")";
  if (!row.note.empty()) reason += ": " + row.note;
  nlohmann::json details = {{"review",
                             {{"verdict", row.verdict},
                              {"reviewer", row.reviewer},
                              {"note", row.note},
                              {"was", to_string(sample->status)},
                              {"was_label", was_label}}}};
  if (relabel) details["review"]["label"] = row.label;
  target.decision.reason = std::move(reason);
  target.decision.details_json = details.dump();
  store.record_review(review, target.decision);
  out.result = Result::applied;
  out.why = std::string(to_string(target.decision.status));
  return out;
}

}  // namespace

std::vector<VerdictRow> read_verdict_file(const std::string& path) {
  FileLimits limits;
  limits.max_bytes = kMaxVerdictFileBytes;
  limits.follow_links = true;  // a person's own file
  const std::vector<unsigned char> bytes = read_regular_file(path, limits, "verdict file");
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);
  const std::size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return {};
  return text[first] == '{' ? read_jsonl(text, path) : read_csv(text, path);
}

ReviewReport apply_verdicts(Dataset& dataset, const std::vector<VerdictRow>& rows) {
  ReviewReport report;
  store::MetadataStore& store = dataset.store();
  try {
    store::Transaction tx(store.database());
    dataset.sync_with_store();
    LabelNames names = dataset.label_names();
    const std::size_t names_before = names.size();
    for (const VerdictRow& row : rows) {
      report.outcomes.push_back(apply_one(store, names, row));
      switch (report.outcomes.back().result) {
        case Result::applied:
          ++report.applied;
          break;
        case Result::unchanged:
          ++report.unchanged;
          break;
        case Result::refused:
          ++report.refused;
          break;
      }
    }
    if (report.applied == 0) return report;  // nothing written: rolled back
    if (names.size() != names_before) names.write(store);
    const std::int64_t revision = dataset.next_revision();
    store.record_writer();
    tx.commit();
    dataset.committed(revision);
    dataset.label_names() = std::move(names);
  } catch (const std::exception&) {
    dataset.reopen_index();
    throw;
  }
  // Statuses moved in and out of the judged set: the index and the label
  // cache catch up from the store.
  dataset.reopen_index();
  dataset.save_index_if_behind();
  return report;
}

std::set<std::int64_t> reviewed_samples(store::MetadataStore& store) {
  std::set<std::int64_t> ids;
  for (const store::ReviewRecord& r : store.reviews()) ids.insert(r.sample_id);
  return ids;
}

}  // namespace winnow::curation::review
