#include <catch2/catch.hpp>

#include "winnow/error.h"
#include "winnow/spec_reader.h"

using winnow::Spec;
using winnow::SpecReader;

namespace {

SpecReader reader_of(const std::string& text, const std::string& what = "policy") {
  return SpecReader(Spec::parse(text, what), what, text);
}

}  // namespace

TEST_CASE("absent keys read as the fallback, present ones as their type", "[spec_reader]") {
  SpecReader reader = reader_of("p(r=0.25, ks=20 : 85, n=007, m=3, path=/a b/c.pt)");
  CHECK(reader.number("r", 0.5) == 0.25);
  CHECK(reader.number("delta", 0.875) == 0.875);
  CHECK(reader.numbers("ks", {1.0}) == std::vector<double>{20.0, 85.0});
  CHECK(reader.numbers("other", {1.0, 2.0}) == std::vector<double>{1.0, 2.0});
  CHECK(reader.integer("n", 1, 10) == 7);
  CHECK(reader.integer("absent", 99, 10) == 99);  // the fallback is not bounded
  CHECK(reader.positive_int("m", 16) == 3);
  CHECK(reader.string("path", "") == "/a b/c.pt");
  CHECK(reader.string("name", "x") == "x");
  CHECK_NOTHROW(reader.finish());
  CHECK(reader.number("r", 0.5) == 0.25);  // reading twice is allowed
}

TEST_CASE("bounds of integers", "[spec_reader]") {
  CHECK(reader_of("p(n=999999999)").integer("n", 0, 999'999'999) == 999'999'999);
  CHECK_THROWS_WITH(reader_of("p(n=1000000000)").integer("n", 0, 999'999'999),
                    Catch::Contains("is not a non-negative integer (at most 999999999)"));
  CHECK(reader_of("p(n=0)").integer("n", 5) == 0);
  CHECK(reader_of("p(n=18446744073709551615)").integer("n", 0) == UINT64_MAX);
  CHECK_THROWS_AS(reader_of("p(n=18446744073709551616)").integer("n", 0), winnow::Error);
  CHECK(reader_of("p(M=2147483647)").positive_int("M", 1) == 2147483647);
  CHECK_THROWS_WITH(reader_of("p(M=2147483648)").positive_int("M", 1),
                    Catch::Contains("is not a positive integer (at most 2147483647)"));
  CHECK_THROWS_WITH(reader_of("p(M=0)").positive_int("M", 1),
                    Catch::Contains("value '0' of 'M' is not a positive integer"));
}

TEST_CASE("every value error names what, the text, the key and the value", "[spec_reader]") {
  using Catch::Contains;
  const auto fails = [](const std::string& text, auto read, const std::string& message) {
    SpecReader reader = reader_of(text, "embedder spec");
    try {
      read(reader);
    } catch (const winnow::Error& e) {
      CHECK(e.kind() == winnow::ErrorKind::invalid_input);
      CHECK_THAT(e.what(), Contains("embedder spec '" + text + "'") && Contains(message));
      return;
    }
    FAIL("'" << text << "' was read");
  };
  const auto number = [](SpecReader& r) { r.number("r", 0); };
  const auto numbers = [](SpecReader& r) { r.numbers("r", {}); };
  const auto integer = [](SpecReader& r) { r.integer("r", 0); };
  const auto positive = [](SpecReader& r) { r.positive_int("r", 1); };
  fails("e(r=abc)", number, "value 'abc' of 'r' is not a finite number");
  fails("e(r=inf)", number, "value 'inf' of 'r' is not a finite number");
  fails("e(r=nan)", number, "value 'nan' of 'r' is not a finite number");
  fails("e(r=1e999)", number, "value '1e999' of 'r' is not a finite number");
  fails("e(r=0.5x)", number, "value '0.5x' of 'r' is not a finite number");
  fails("e(r=1:x)", numbers, "value '1:x' of 'r' is not a finite number: 'x'");
  fails("e(r=1:)", numbers, "value '1:' of 'r' is not a finite number: ''");
  fails("e(r=-1)", integer, "value '-1' of 'r' is not a non-negative integer");
  fails("e(r=+1)", integer, "value '+1' of 'r' is not a non-negative integer");
  fails("e(r=1e3)", integer, "value '1e3' of 'r' is not a non-negative integer");
  fails("e(r=1 2)", integer, "value '1 2' of 'r' is not a non-negative integer");
  fails("e(r=abc)", positive, "value 'abc' of 'r' is not a positive integer");
  fails("e(r=-3)", positive, "value '-3' of 'r' is not a positive integer");
}

TEST_CASE("finish rejects keys nobody read and lists those read", "[spec_reader]") {
  SpecReader reader = reader_of("hnsw(M=8,m=3)", "index config");
  reader.positive_int("M", 16);
  reader.positive_int("efSearch", 64);
  CHECK_THROWS_WITH(reader.finish(),
                    Catch::Contains("index config 'hnsw(M=8,m=3)': unknown key 'm' for 'hnsw' "
                                    "(expected M, efSearch)"));
  CHECK_THROWS_WITH(reader_of("flat(M=3)", "index config").finish(),
                    Catch::Contains("unknown key 'M' ('flat' takes no parameters)"));
}

TEST_CASE("without the text, errors quote the canonical spec", "[spec_reader]") {
  SpecReader reader(Spec{"infobatch", {{"ratio", "0.3"}}}, "policy");
  CHECK_THROWS_WITH(reader.finish(),
                    Catch::Contains("policy 'infobatch(ratio=0.3)': unknown key 'ratio'"));
}
