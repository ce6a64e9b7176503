// visible_text: what could hide, reorder or imitate text is shown escaped in
// outputs meant for reading; everything else is kept as it is.
#include <catch2/catch.hpp>

#include <string>

#include "winnow/curation/core/printable_text.h"

using winnow::curation::printable_key;
using winnow::curation::printable_text;
using winnow::curation::visible_text;

TEST_CASE("visible_text escapes controls, bidirectional and zero-width characters",
          "[curation][core]") {
  CHECK(visible_text("plain, été, 猫") == "plain, été, 猫");
  CHECK(visible_text(std::string("a\0b\tc\nd\x7f", 8)) == "a\\x00b\\x09c\\x0ad\\x7f");
  CHECK(visible_text("\xff ok") == "\\xff ok");                   // invalid UTF-8
  CHECK(visible_text("rtl\u202Eevil") == "rtl\\u{202E}evil");     // right-to-left override
  CHECK(visible_text("ann\u200B") == "ann\\u{200B}");             // zero-width space
  CHECK(visible_text("\u2066x\u2069") == "\\u{2066}x\\u{2069}");  // an isolate
  CHECK(visible_text("\uFEFFbom") == "\\u{FEFF}bom");
  CHECK(visible_text("c1\u0085") == "c1\\u{0085}");  // next line, a C1 control
  // Two names that look alike in print differ once shown.
  CHECK(visible_text("ann") != visible_text("ann\u200B"));
  // printable_text (stored names) keeps valid UTF-8 as it is.
  CHECK(printable_text("ann\u200B") == "ann\u200B");
}

TEST_CASE("printable_key never gives two byte strings the same key", "[curation][core]") {
  const std::string typed = "caf\\xe9.png";  // a backslash, then "xe9"
  const std::string latin1 = "caf\xe9.png";  // the byte 0xE9: not UTF-8
  CHECK(printable_key(typed) == "caf\\\\xe9.png");
  CHECK(printable_key(latin1) == "caf\\xe9.png");
  CHECK(printable_key(typed) != printable_key(latin1));
  CHECK(printable_key("a\nb") != printable_key("a\\x0ab"));
  CHECK(printable_key("plain/key-1.png") == "plain/key-1.png");  // most keys are unchanged
  CHECK(printable_key("\\") == "\\\\");
}
