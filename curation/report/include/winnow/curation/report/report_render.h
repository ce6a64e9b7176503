// Renderers of the quality report. The report is built as JSON (its schema is
// docs/report-schema.md); these turn that JSON into a self-contained HTML page
// (inline CSS and SVG charts, no network) or a Markdown summary. They read only
// the documented keys and throw winnow::Error naming a key that is missing or
// has the wrong type.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace winnow::curation::report {

std::string render_report_html(const nlohmann::json& report);
std::string render_report_markdown(const nlohmann::json& report);

}  // namespace winnow::curation::report
