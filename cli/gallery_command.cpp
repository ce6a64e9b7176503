// winnow gallery --db D --out FILE.html [--max-per-section N]: the review
// gallery, one self-contained page of the flagged samples (docs/gallery.md).
#include <chrono>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "command.h"
#include "output_file.h"
#include "winnow/curation/core/printable_text.h"
#include "winnow/curation/dataset/dataset.h"
#include "winnow/curation/gallery/gallery.h"
#include "winnow/error.h"

namespace winnow::cli {

Command add_gallery_command(CLI::App& parent) {
  struct Options {
    std::string db, out;
    curation::gallery::GalleryOptions gallery;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = parent.add_subcommand(
      "gallery",
      "write the review gallery: duplicate groups, label issues and image-quality issues as "
      "pictures or text in one HTML page, with verdicts to download for winnow review");
  cmd->add_option("--db", o->db, "database file")->required();
  cmd->add_option("--out", o->out, "the HTML file to write")->required();
  cmd->add_option("--max-per-section", o->gallery.max_per_section,
                  "at most this many groups, label issues or images of one issue per section, "
                  "worst first")
      ->capture_default_str()
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--thumbnail", o->gallery.thumbnail_side, "the pictures' longer side, px")
      ->capture_default_str()
      ->check(CLI::Range(16, 512));
  cmd->footer("Example: winnow gallery --db data.db --out gallery.html");
  return {cmd, [o] {
            const auto t0 = std::chrono::steady_clock::now();
            curation::Dataset dataset(o->db, curation::OpenMode::read_only);
            const curation::gallery::Gallery gallery =
                curation::gallery::build_gallery(dataset, o->gallery);
            const std::string page = curation::gallery::render_gallery_html(gallery);
            write_output_file(o->out, page, "gallery");
            const double seconds =
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            std::cout << fmt::format(
                "{}: {} duplicate groups, {} label issues, {} image-quality strips; {} pictures, "
                "{} items without one; {:.1f} MB in {:.1f} s\n",
                curation::visible_text(o->out), gallery.groups_total, gallery.label_issues_total,
                gallery.strips.size(), gallery.thumbnails, gallery.missing,
                static_cast<double>(page.size()) / 1e6, seconds);
            return 0;
          }};
}

}  // namespace winnow::cli
