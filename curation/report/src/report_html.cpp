// The quality report as one self-contained HTML page: inline CSS, three
// inline SVG charts drawn here (growth over batches, per-source accuracy with
// intervals, class confusion heat map) and the tables of report_tables.h.
// Nothing is loaded from anywhere (no script, no font, no image), so the file
// can be mailed or archived as it is. Every string from the report is
// escaped: source names, file names and labels are user input.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "winnow/curation/core/html_text.h"
#include "winnow/curation/core/printable_text.h"
#include "report_tables.h"
#include "report_view.h"
#include "winnow/curation/report/report_render.h"

namespace winnow::curation::report {
namespace {

using report::Cell;
using report::kStatusCount;
using report::ReportView;
using report::status_name;
using report::Table;

// Chart colours, one per status (the store's order), then the other charts'.
// The PNG test (tests/curation/report/render/check_report_png.py) looks for them.
constexpr const char* kStatusColours[] = {"#4e79a7", "#f28e2b", "#f6c85f", "#e15759", "#a0a0a0"};
constexpr const char* kSourceBarColour = "#2a9d8f";
constexpr const char* kIntervalColour = "#264653";
// Heat map: off-diagonal cells run from white to this purple; diagonal cells
// (given label = estimated true label) are a neutral grey.
constexpr int kHeatRed = 0x7b, kHeatGreen = 0x32, kHeatBlue = 0x94;
constexpr const char* kDiagonalColour = "#e6e8eb";

// HTML-escaped, with control, bidirectional and zero-width characters shown
// escaped first (visible_text).
std::string escape(const std::string& raw) {
  return html_escape(visible_text(raw));
}

// At most `max_chars` UTF-8 code points of `text`, with "…" when cut (SVG text
// does not wrap; the full text goes into the element's <title>).
std::string shorten(const std::string& text, std::size_t max_chars) {
  std::size_t chars = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool starts_char = (static_cast<unsigned char>(text[i]) & 0xC0) != 0x80;
    if (starts_char && ++chars > max_chars) {
      return text.substr(0, i) + "…";
    }
  }
  return text;
}

// A round step for about `ticks` axis ticks up to `max` (1, 2 or 5 × 10^k).
double nice_step(double max, int ticks) {
  const double raw = std::max(max, 1.0) / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * magnitude >= raw) {
      return factor * magnitude;
    }
  }
  return 10.0 * magnitude;
}

// A table cell: "n/a" and its note for null statistics.
std::string cell_html(const Cell& cell, const char* tag) {
  const std::string align = cell.numeric ? " class=\"num\"" : "";
  if (cell.note.empty()) {
    return fmt::format("<{0}{1}>{2}</{0}>", tag, align, escape(cell.text));
  }
  return fmt::format(
      "<{0}{1} title=\"{2}\"><span class=\"na\">{3}</span> "
      "<span class=\"note\">{2}</span></{0}>",
      tag, align, escape(cell.note), escape(cell.text));
}

// A table with hover titles on its headers and a collapsible legend of them.
std::string table_html(const Table& table, bool with_legend = true) {
  std::string out =
      fmt::format("<div class=\"table-wrap\"><table id=\"{}\">\n<thead><tr>", escape(table.id));
  for (std::size_t c = 0; c < table.columns.size(); ++c) {
    const bool numeric = !table.rows.empty() && table.rows.front()[c].numeric;
    out += fmt::format("<th{} title=\"{}\">{}</th>", numeric ? " class=\"num\"" : "",
                       escape(table.columns[c].meaning), escape(table.columns[c].header));
  }
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (std::size_t c = 0; c < row.size(); ++c) {
      out += cell_html(row[c], c == 0 ? "th" : "td");
    }
    out += "</tr>\n";
  }
  if (table.rows.empty()) {
    out += fmt::format("<tr><td colspan=\"{}\" class=\"empty\">none</td></tr>\n",
                       table.columns.size());
  }
  out += "</tbody></table></div>\n";
  if (with_legend) {
    out += "<details class=\"legend\"><summary>Column definitions</summary><dl>";
    for (const auto& column : table.columns) {
      out += fmt::format("<dt>{}</dt><dd>{}</dd>", escape(column.header), escape(column.meaning));
    }
    out += "</dl></details>\n";
  }
  return out;
}

std::string section(const Table& table, const std::string& body) {
  std::string out = fmt::format("<section>\n<h2>{}</h2>\n", escape(table.title));
  if (!table.intro.empty()) {
    out += fmt::format("<p class=\"intro\">{}</p>\n", escape(table.intro));
  }
  return out + body + "</section>\n";
}

// --- headline figures --------------------------------------------------------

std::string kpi(const std::string& label, const Cell& value, const std::string& detail,
                const std::string& meaning) {
  const std::string shown = value.note.empty()
                                ? escape(value.text)
                                : fmt::format("<span class=\"na\">{}</span>", escape(value.text));
  const std::string below = value.note.empty() ? escape(detail) : escape(value.note);
  return fmt::format(
      "<div class=\"kpi\" title=\"{}\"><div class=\"kpi-label\">{}</div>"
      "<div class=\"kpi-value\">{}</div><div class=\"kpi-detail\">{}</div></div>\n",
      escape(meaning), escape(label), shown, below);
}

std::string headline_html(const ReportView& report) {
  const report::DatasetView& d = report.dataset;
  std::string out = "<div class=\"kpis\">\n";
  out += kpi("Samples", report::count_cell(d.samples),
             report::format_count(d.labelled_samples) + " labelled",
             "samples in the store (every status); labelled: with a label, excluding rejected "
             "and duplicates");
  out += kpi("Health score", report::coefficient_cell(d.health_score), "cleanlab's label health",
             "cleanlab's overall label health score: share of judged labelled samples whose given "
             "label equals the estimated true label (trace of the joint)");
  out += kpi("Label-issue rate", report::percent_cell(d.label_issue_rate),
             report::format_count(d.by_status.of("label_issue")) + " label issues",
             "label issues / labelled samples that were judged (not rejected, not duplicates)");
  out += kpi(
      "Duplicate rate", report::percent_cell(d.duplicate_rate),
      report::format_count(d.by_status.of("duplicate_exact") + d.by_status.of("duplicate_near")) +
          " exact or near",
      "(exact + near duplicates) / (samples − rejected)");
  out += kpi("Krippendorff's α", report::coefficient_cell(d.krippendorff_alpha),
             "on " + report::format_count(d.krippendorff_alpha_samples) + " samples",
             "nominal α over all samples with ≥ 2 annotations (1 = perfect agreement, 0 = chance)");
  out += kpi("Fleiss' κ", report::coefficient_cell(d.fleiss_kappa),
             "on " + report::format_count(d.fleiss_kappa_samples) + " samples",
             "over the multiply-annotated samples, only when all have the same number of "
             "annotations");
  out += kpi("Annotations", report::count_cell(d.annotations),
             report::format_count(d.multiply_annotated_samples) + " samples with ≥ 2",
             "annotations in the store; samples with two or more annotations");
  return out + "</div>\n";
}

// An empty chart still gets its id and says why it is empty.
std::string empty_chart(const char* id, const char* message) {
  return fmt::format(
      "<svg id=\"{}\" class=\"chart\" viewBox=\"0 0 1080 40\" width=\"1080\" "
      "height=\"40\" role=\"img\">"
      "<text class=\"na-text\" x=\"8\" y=\"24\">{}</text></svg>\n",
      id, message);
}

// --- chart (a): growth over batches -----------------------------------------

std::string status_legend_html() {
  std::string out = "<div class=\"chart-legend\">";
  for (std::size_t s = 0; s < kStatusCount; ++s) {
    out += fmt::format("<span><i style=\"background:{}\"></i>{}</span>", kStatusColours[s],
                       escape(report::status_title(status_name(s))));
  }
  return out + "</div>\n";
}

std::string growth_chart(const ReportView& report) {
  if (report.batches.empty()) {
    return empty_chart("chart-growth", "no ingest batches yet");
  }
  const double width = 1080, height = 300, left = 70, right = 16, top = 16, bottom = 44;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  std::int64_t max_total = 1;
  for (const auto& batch : report.batches) {
    max_total = std::max(max_total, batch.cumulative.total);
  }
  const double step = nice_step(static_cast<double>(max_total), 5);
  const double axis_max = std::ceil(static_cast<double>(max_total) / step) * step;
  auto y_of = [&](double value) { return top + plot_h * (1.0 - value / axis_max); };

  std::string out = fmt::format(
      "<svg id=\"chart-growth\" class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
      "height=\"{1}\" role=\"img\" aria-label=\"Cumulative samples per status after each "
      "ingest batch\">\n",
      width, height);
  for (double tick = 0; tick <= axis_max + 0.5 * step; tick += step) {
    out += fmt::format(
        "<line class=\"grid\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>"
        "<text class=\"axis\" x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n",
        left, width - right, y_of(tick), y_of(tick), left - 8, y_of(tick) + 4,
        escape(report::format_count(std::llround(tick))));
  }
  out += fmt::format(
      "<text class=\"axis-title\" transform=\"translate(16 {:.1f}) rotate(-90)\" "
      "text-anchor=\"middle\">samples (cumulative)</text>\n",
      top + plot_h / 2);
  const double band = plot_w / static_cast<double>(report.batches.size());
  const double bar_w = std::min(band * 0.62, 120.0);
  // With many batches, label every n-th bar only, and drop what does not fit.
  const std::size_t label_every = (report.batches.size() + 23) / 24;
  const bool show_totals = band >= 40, show_files = band >= 60;
  for (std::size_t i = 0; i < report.batches.size(); ++i) {
    const report::BatchView& batch = report.batches[i];
    const double x = left + band * (static_cast<double>(i) + 0.5) - bar_w / 2;
    out += fmt::format("<g class=\"growth-bar\" data-batch=\"{}\">\n", batch.id);
    double stacked = 0;
    for (std::size_t s = 0; s < kStatusCount; ++s) {
      const auto count = static_cast<double>(batch.cumulative.by_status[s]);
      if (count <= 0) {
        continue;
      }
      out += fmt::format(
          "<rect class=\"growth-segment\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" fill=\"{}\"><title>after batch {} ({}): {} {} in total, {} from "
          "this batch</title></rect>\n",
          x, y_of(stacked + count), bar_w, y_of(stacked) - y_of(stacked + count), kStatusColours[s],
          batch.id, escape(batch.file), report::format_count(batch.cumulative.by_status[s]),
          escape(report::status_title(status_name(s))),
          report::format_count(batch.counts.by_status[s]));
      stacked += count;
    }
    const double centre = x + bar_w / 2;
    if (show_totals) {
      out += fmt::format(
          "<text class=\"bar-total\" x=\"{:.1f}\" y=\"{:.1f}\" "
          "text-anchor=\"middle\">{}</text>\n",
          centre, y_of(stacked) - 5, report::format_count(batch.cumulative.total));
    }
    if (i % label_every == 0) {
      out += fmt::format(
          "<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">"
          "{}{}{}</text>\n",
          centre, height - bottom + 16, show_files ? "batch " : "", batch.id,
          show_files && batch.state != "done" ? " · " + escape(batch.state) : "");
    }
    if (show_files) {
      out += fmt::format(
          "<text class=\"axis small\" x=\"{:.1f}\" y=\"{:.1f}\" "
          "text-anchor=\"middle\">{}<title>{}</title></text>\n",
          centre, height - bottom + 31,
          escape(shorten(batch.file, static_cast<std::size_t>(band / 6.5))), escape(batch.file));
    }
    out += "</g>\n";
  }
  out +=
      fmt::format("<line class=\"axis-line\" x1=\"{}\" x2=\"{}\" y1=\"{:.1f}\" y2=\"{:.1f}\"/>\n",
                  left, width - right, y_of(0), y_of(0));
  return out + "</svg>\n";
}

// --- chart (b): estimated accuracy per source --------------------------------

std::string sources_chart(const ReportView& report) {
  if (report.sources.empty()) {
    return empty_chart("chart-sources", "no sources or annotators yet");
  }
  const double width = 1080, left = 200, right = 70, top = 26, row_h = 36, bottom = 30;
  const double plot_w = width - left - right;
  const double height = top + row_h * static_cast<double>(report.sources.size()) + bottom;
  auto x_of = [&](double share) { return left + plot_w * std::clamp(share, 0.0, 1.0); };

  std::string out = fmt::format(
      "<svg id=\"chart-sources\" class=\"chart\" viewBox=\"0 0 {0} {1}\" width=\"{0}\" "
      "height=\"{1}\" role=\"img\" aria-label=\"Estimated accuracy per source with 95% Wilson "
      "intervals, worst first\">\n",
      width, height);
  for (int tick = 0; tick <= 100; tick += 20) {
    const double x = x_of(tick / 100.0);
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{1}\" y2=\"{2}\"/>"
        "<text class=\"axis\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}%"
        "</text>\n",
        x, top - 6, height - bottom, height - bottom + 16, tick);
  }
  for (std::size_t i = 0; i < report.sources.size(); ++i) {
    const report::SourceView& source = report.sources[i];
    const double y = top + row_h * static_cast<double>(i);
    const double bar_y = y + 7, bar_h = row_h - 14, middle = y + row_h / 2;
    out += fmt::format(
        "<g class=\"source-row\">\n<text class=\"label\" x=\"{}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">{}<title>{} ({})</title></text>\n",
        left - 10, middle + 4, escape(shorten(source.name, 28)), escape(source.name),
        escape(source.kind));
    if (!source.estimated_accuracy.value) {
      out += fmt::format(
          "<text class=\"na-text\" x=\"{}\" y=\"{:.1f}\">n/a: {}<title>{}</title>"
          "</text>\n</g>\n",
          left + 6, middle + 4, escape(shorten(source.estimated_accuracy.note, 90)),
          escape(source.estimated_accuracy.note));
      continue;
    }
    const double accuracy = *source.estimated_accuracy.value;
    std::string interval_text;
    if (source.accuracy_interval) {
      const auto [low, high] = *source.accuracy_interval;
      interval_text = fmt::format(", 95% interval {:.1f}–{:.1f}%", 100 * low, 100 * high);
    }
    out += fmt::format(
        "<rect class=\"source-bar\" x=\"{}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
        "fill=\"{}\"><title>{}: estimated accuracy {:.1f}%{} (n = {} labels)</title></rect>\n",
        left, bar_y, x_of(accuracy) - left, bar_h, kSourceBarColour, escape(source.name),
        100 * accuracy, interval_text, report::format_count(source.labels));
    double label_x = x_of(accuracy);
    if (source.accuracy_interval) {
      const double low = x_of((*source.accuracy_interval)[0]);
      const double high = x_of((*source.accuracy_interval)[1]);
      out += fmt::format(
          "<g class=\"source-interval\" stroke=\"{0}\"><line x1=\"{1:.1f}\" x2=\"{2:.1f}\" "
          "y1=\"{3:.1f}\" y2=\"{3:.1f}\"/><line x1=\"{1:.1f}\" x2=\"{1:.1f}\" y1=\"{4:.1f}\" "
          "y2=\"{5:.1f}\"/><line x1=\"{2:.1f}\" x2=\"{2:.1f}\" y1=\"{4:.1f}\" y2=\"{5:.1f}\"/>"
          "</g>\n",
          kIntervalColour, low, high, middle, middle - 6, middle + 6);
      label_x = std::max(label_x, high);
    }
    out += fmt::format("<text class=\"value\" x=\"{:.1f}\" y=\"{:.1f}\">{:.1f}%</text>\n</g>\n",
                       label_x + 6, middle + 4, 100 * accuracy);
  }
  return out + "</svg>\n";
}

// --- chart (c): class confusion heat map -------------------------------------

std::string heat_colour(double intensity) {
  auto mix = [intensity](int channel) {
    return static_cast<int>(std::lround(255.0 + (channel - 255.0) * intensity));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", mix(kHeatRed), mix(kHeatGreen), mix(kHeatBlue));
}

std::string confusion_chart(const ReportView& report) {
  const report::LabelMatrix& matrix = report.dataset.class_confusion;
  const std::size_t k = matrix.class_names.size();
  if (k == 0) {
    return empty_chart("chart-confusion", "no judged labelled samples yet");
  }
  const double cell = k <= 10 ? 38 : std::max(12.0, 380.0 / static_cast<double>(k));
  const double left = 118, top = 104, right = 64, bottom = 12;
  const double width = left + cell * static_cast<double>(k) + right;
  const double height = top + cell * static_cast<double>(k) + bottom;

  // Colour off-diagonal cells by their share of the row (how often a given
  // label k turns out to be class j), scaled to the largest such share.
  std::vector<double> row_totals(k, 0.0);
  double max_share = 0.0;
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t c = 0; c < k; ++c) {
      row_totals[r] += matrix.cells[r][c];
    }
    for (std::size_t c = 0; c < k; ++c) {
      if (c != r && row_totals[r] > 0) {
        max_share = std::max(max_share, matrix.cells[r][c] / row_totals[r]);
      }
    }
  }

  std::string out = fmt::format(
      "<svg id=\"chart-confusion\" class=\"chart\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
      "width=\"{0:.0f}\" height=\"{1:.0f}\" role=\"img\" aria-label=\"Given label versus "
      "estimated true label, judged labelled samples\">\n",
      width, height);
  out += fmt::format(
      "<text class=\"axis-title\" x=\"{:.1f}\" y=\"12\" text-anchor=\"middle\">"
      "estimated true label y*</text>\n"
      "<text class=\"axis-title\" transform=\"translate(12 {:.1f}) rotate(-90)\" "
      "text-anchor=\"middle\">given label ỹ</text>\n",
      left + cell * static_cast<double>(k) / 2, top + cell * static_cast<double>(k) / 2);
  for (std::size_t i = 0; i < k; ++i) {
    const double offset = cell * (static_cast<double>(i) + 0.5);
    const std::string name = escape(shorten(matrix.class_names[i], 12));
    out += fmt::format(
        "<text class=\"axis\" transform=\"translate({:.1f} {:.1f}) rotate(-45)\">"
        "{}</text>\n<text class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" "
        "text-anchor=\"end\">{}</text>\n",
        left + offset - 2, top - 6, name, left - 6, top + offset + 4, name);
  }
  const bool labels_fit = cell >= 28;
  for (std::size_t r = 0; r < k; ++r) {
    for (std::size_t c = 0; c < k; ++c) {
      const double count = matrix.cells[r][c];
      const double share = row_totals[r] > 0 ? count / row_totals[r] : 0.0;
      const double intensity = r == c || max_share <= 0 ? 0.0 : share / max_share;
      const std::string fill = r == c ? kDiagonalColour : heat_colour(intensity);
      const double x = left + cell * static_cast<double>(c);
      const double y = top + cell * static_cast<double>(r);
      out += fmt::format(
          "<rect class=\"confusion-cell\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" "
          "height=\"{:.1f}\" fill=\"{}\"><title>given {}, estimated true {}: {} samples ({:.1f}% "
          "of given {})</title></rect>\n",
          x, y, cell - 1, cell - 1, fill, escape(matrix.class_names[r]),
          escape(matrix.class_names[c]), report::format_count(std::llround(count)), 100 * share,
          escape(matrix.class_names[r]));
      if (labels_fit && count > 0) {
        out += fmt::format(
            "<text class=\"cell-text{}\" x=\"{:.1f}\" y=\"{:.1f}\" "
            "text-anchor=\"middle\">{}</text>\n",
            intensity > 0.55 ? " light" : "", x + (cell - 1) / 2, y + (cell - 1) / 2 + 3.5,
            std::llround(count));
      }
    }
  }
  return out + "</svg>\n";
}

// --- per-source confusion matrices -------------------------------------------

// One source's Dawid-Skene confusion matrix as a shaded table: the diagonal
// (correct labels) in teal, mistakes in purple, by probability.
std::string source_confusion_html(const report::SourceView& source) {
  const Table table = report::source_confusion_table(source);
  std::string out = fmt::format(
      "<details class=\"matrix\"><summary>{}</summary>\n"
      "<div class=\"table-wrap\"><table class=\"matrix\">\n<thead><tr>",
      escape(table.title));
  for (const auto& column : table.columns) {
    out += fmt::format("<th title=\"{}\">{}</th>", escape(column.meaning), escape(column.header));
  }
  out += "</tr></thead>\n<tbody>\n";
  const auto& cells = source.confusion->cells;
  for (std::size_t r = 0; r < cells.size(); ++r) {
    out += "<tr>" + cell_html(table.rows[r][0], "th");
    for (std::size_t c = 0; c < cells[r].size(); ++c) {
      const double p = std::clamp(cells[r][c], 0.0, 1.0);
      const std::string shade =
          r == c ? fmt::format("rgba(42,157,143,{:.2f})", 0.15 + 0.6 * p)
                 : fmt::format("rgba(123,50,148,{:.2f})", std::min(0.8, 2.0 * p));
      out += fmt::format("<td class=\"num\" style=\"background:{}\">{}</td>", shade,
                         escape(table.rows[r][c + 1].text));
    }
    out += "</tr>\n";
  }
  return out + "</tbody></table></div>\n<p class=\"intro\">" + escape(table.intro) +
         "</p></details>\n";
}

// --- the page ----------------------------------------------------------------

constexpr const char* kStyle = R"css(
:root { --ink: #1f2933; --muted: #616e7c; --line: #e4e7eb; --panel: #f8f9fa; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff;
  font: 14px/1.45 "Segoe UI", Roboto, "Helvetica Neue", Arial, "Liberation Sans", sans-serif; }
main { max-width: 1140px; margin: 0 auto; padding: 24px 28px 48px; }
header { border-bottom: 2px solid var(--ink); padding-bottom: 10px; margin-bottom: 18px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 6px; }
.meta, .intro, .note, .kpi-detail, .chart-note { color: var(--muted); }
.meta { font-size: 13px; }
.intro { margin: 0 0 10px; }
.kpis { display: grid; grid-template-columns: repeat(auto-fit, minmax(140px, 1fr)); gap: 10px; }
.kpi { background: var(--panel); border: 1px solid var(--line); border-radius: 6px; padding: 10px 12px; }
.kpi-label { font-size: 12px; color: var(--muted); text-transform: uppercase; letter-spacing: .03em; }
.kpi-value { font-size: 24px; font-weight: 600; font-variant-numeric: tabular-nums; }
.kpi-detail { font-size: 12px; }
/* Charts keep their drawn size and shrink with a narrow window, never grow. */
svg.chart { max-width: 100%; height: auto; display: block; font-size: 12px; }
svg .grid { stroke: var(--line); }
svg .axis-line { stroke: #9aa5b1; }
svg .axis, svg .label { fill: #3e4c59; }
svg .small { font-size: 10.5px; fill: var(--muted); }
svg .axis-title { fill: var(--muted); font-size: 12px; }
svg .bar-total, svg .value { fill: var(--ink); font-weight: 600; }
svg .na-text { fill: var(--muted); font-style: italic; }
svg .source-interval line { stroke-width: 1.6; }
svg .cell-text { font-size: 11px; fill: #1f2933; }
svg .cell-text.light { fill: #fff; }
.chart-legend { display: flex; flex-wrap: wrap; gap: 4px 16px; font-size: 13px; margin: 2px 0 6px; }
.chart-legend i { display: inline-block; width: 11px; height: 11px; border-radius: 2px;
  margin-right: 5px; vertical-align: -1px; }
.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; font-variant-numeric: tabular-nums; }
th, td { padding: 5px 9px; border-bottom: 1px solid var(--line); text-align: left;
  vertical-align: top; }
thead th { font-size: 12px; color: var(--muted); font-weight: 600; border-bottom: 2px solid #cbd2d9;
  cursor: help; white-space: nowrap; }
tbody th { font-weight: 600; }
.num { text-align: right; }
tbody tr:hover { background: #f5f7fa; }
.na { color: var(--muted); font-style: italic; }
.note { font-size: 12px; display: block; }
table.matrix { width: auto; }
#table-batches td { white-space: nowrap; }
table.matrix td, table.matrix th { padding: 3px 7px; font-size: 12px; }
details { margin: 4px 0; }
summary { cursor: pointer; color: #3e4c59; }
details.legend { font-size: 13px; }
details.legend dl { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; }
details.legend dt { font-weight: 600; }
details.legend dd { margin: 0; color: var(--muted); }
.columns { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 0 32px; }
@media (min-width: 900px) { .columns.wide-left { grid-template-columns: 3fr 2fr; } }
footer { margin-top: 36px; font-size: 12px; color: var(--muted); }
)css";

}  // namespace

std::string render_report_html(const nlohmann::json& json) {
  const ReportView view = report::read_report_view(json);
  std::string out;
  out +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += fmt::format("<title>Annotation quality report: {}</title>\n", escape(view.database));
  out += fmt::format("<style>{}</style>\n</head>\n<body>\n<main>\n", kStyle);
  out += fmt::format(
      "<header><h1>Annotation quality report</h1>\n<div class=\"meta\">{} ({}) · "
      "generated {} · winnow {} · report schema {}</div></header>\n",
      escape(view.database), escape(report::database_versions_text(view)),
      escape(view.generated_at), escape(view.winnow_version), view.schema_version);
  out += headline_html(view);

  out +=
      "<section>\n<h2>Growth over batches</h2>\n<p class=\"intro\">Samples per status in the "
      "store after each ingest batch (cumulative); the number on a bar is the total.</p>\n";
  out += status_legend_html() + growth_chart(view) + "</section>\n";

  out +=
      "<section>\n<h2>Estimated accuracy per source</h2>\n<p class=\"intro\">Dawid-Skene "
      "expected accuracy, worst first: the sources to question before paying for more of "
      "their labels. Whiskers: 95% Wilson interval with n = the source's labels.</p>\n";
  out += sources_chart(view) + "</section>\n";

  const Table pairs = report::confused_pairs_table(view);
  out +=
      "<div class=\"columns\">\n<section>\n<h2>Class confusion</h2>\n<p class=\"intro\">"
      "Judged labelled samples by given label (row) and estimated true label (column). "
      "Off-diagonal shading: the cell's share of its row (how often that given label is "
      "really the other class), darkest = largest; the grey diagonal holds the agreeing "
      "labels.</p>\n";
  out += confusion_chart(view) + "</section>\n";
  out += section(pairs, table_html(pairs)) + "</div>\n";

  out += "<div class=\"columns wide-left\">\n";
  const Table dataset = report::dataset_table(view);
  out += section(dataset, table_html(dataset, false));
  const Table distribution = report::class_distribution_table(view);
  out += section(distribution, table_html(distribution));
  out += "</div>\n";

  const Table sources = report::sources_table(view);
  std::string matrices;
  for (const report::SourceView& source : view.sources) {
    if (source.confusion) {
      matrices += source_confusion_html(source);
    }
  }
  out += section(sources, table_html(sources) + matrices);
  const Table classes = report::classes_table(view);
  out += section(classes, table_html(classes));
  const Table batches = report::batches_table(view);
  out += section(batches, table_html(batches));
  if (view.image_quality && view.image_quality->dataset.images > 0) {
    const Table by_source = report::image_issues_by_source_table(view);
    out += section(by_source, table_html(by_source));
    const Table by_class = report::image_issues_by_class_table(view);
    out += section(by_class, table_html(by_class));
  }
  if (view.training) {
    const Table training = report::training_table(view);
    out += section(training, table_html(training));
  }
  out +=
      "<footer>Definitions of every figure: docs/report-schema.md in the winnow "
      "repository. Hover a column header for its meaning.</footer>\n";
  out += "</main>\n</body>\n</html>\n";
  return out;
}

}  // namespace winnow::curation::report
