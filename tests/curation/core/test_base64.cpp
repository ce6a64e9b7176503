// Base64 (curation/core/base64.h): RFC 4648's test vectors both ways, and
// text that is not base64 refused.
#include <catch2/catch.hpp>

#include <string>

#include "winnow/curation/core/base64.h"

using winnow::curation::base64_decode;
using winnow::curation::base64_encode;

TEST_CASE("base64: RFC 4648 vectors round-trip, bad text is refused", "[core][base64]") {
  const std::pair<const char*, const char*> vectors[] = {{"", ""},
                                                         {"f", "Zg=="},
                                                         {"fo", "Zm8="},
                                                         {"foo", "Zm9v"},
                                                         {"foob", "Zm9vYg=="},
                                                         {"fooba", "Zm9vYmE="},
                                                         {"foobar", "Zm9vYmFy"}};
  for (const auto& [plain, coded] : vectors) {
    const std::string text(plain);
    CHECK(base64_encode(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()) == coded);
    const auto back = base64_decode(coded);
    REQUIRE(back);
    CHECK(std::string(back->begin(), back->end()) == text);
  }
  CHECK_FALSE(base64_decode("Zm9"));       // not a multiple of 4
  CHECK_FALSE(base64_decode("Zm=v"));      // padding inside
  CHECK_FALSE(base64_decode("Zm9v!A=="));  // not a digit
}
