// render_report_fixture REPORT.json OUT.html [OUT.md]: renders a report JSON
// file with the library's renderers, for the headless-Chromium test
// (render_png.sh) and for looking at the page by hand.
#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "winnow/curation/report/report_render.h"
#include "winnow/error.h"

int main(int argc, char** argv) {
  if (argc < 3 || argc > 4) {
    std::cerr << "usage: render_report_fixture REPORT.json OUT.html [OUT.md]\n";
    return 2;
  }
  try {
    std::ifstream in(argv[1]);
    if (!in) {
      std::cerr << "render_report_fixture: cannot read " << argv[1] << "\n";
      return 1;
    }
    const nlohmann::json report = nlohmann::json::parse(in);
    std::ofstream(argv[2]) << winnow::curation::report::render_report_html(report);
    if (argc == 4) {
      std::ofstream(argv[3]) << winnow::curation::report::render_report_markdown(report);
    }
  } catch (const std::exception& error) {
    std::cerr << "render_report_fixture: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
