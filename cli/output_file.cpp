#include "output_file.h"

#include <fstream>

#include "winnow/curation/core/printable_text.h"
#include "winnow/error.h"

namespace winnow::cli {

void write_output_file(const std::string& path, const std::string& text, const char* what) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  WINNOW_THROW_IF_NOT_KIND(out.is_open(), io, "cannot write the {} to '{}'", what,
                           curation::visible_text(path));
  out << text;
  out.close();
  WINNOW_THROW_IF_NOT_KIND(!out.fail(), io, "writing the {} to '{}' failed", what,
                           curation::visible_text(path));
}

}  // namespace winnow::cli
