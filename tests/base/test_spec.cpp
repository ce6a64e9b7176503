#include <catch2/catch.hpp>

#include "winnow/error.h"
#include "winnow/spec.h"

using winnow::Spec;

namespace {

// The message of the error parsing `text` throws; fails the test if none.
std::string parse_error(const std::string& text, const std::string& what = "policy") {
  try {
    Spec::parse(text, what);
  } catch (const winnow::Error& e) {
    CHECK(e.kind() == winnow::ErrorKind::invalid_input);
    return e.what();
  }
  FAIL("'" << text << "' parsed");
  return {};
}

}  // namespace

TEST_CASE("a spec is a name, optionally with key=value parameters", "[spec]") {
  const Spec plain = Spec::parse("infobatch", "policy");
  CHECK(plain.name == "infobatch");
  CHECK(plain.params.empty());
  CHECK(Spec::parse("hnsw()", "index config").params.empty());
  CHECK(Spec::parse("hnsw( )", "index config").params.empty());
  // One trailing ',' is allowed.
  CHECK(Spec::parse("pixels(dim=64, )", "embedder spec").to_string() == "pixels(dim=64)");

  const Spec spec = Spec::parse("pixels(width=28,height=28,pool=2)", "embedder spec");
  CHECK(spec.name == "pixels");
  CHECK(spec.params ==
        std::map<std::string, std::string>{{"width", "28"}, {"height", "28"}, {"pool", "2"}});
}

TEST_CASE("whitespace around tokens is ignored, inside values it is kept", "[spec]") {
  const Spec spec =
      Spec::parse(" \tinfobatch-quantile ( keep = 0.25:0.5 , percentiles=20:85 ) \n", "policy");
  CHECK(spec.name == "infobatch-quantile");
  CHECK(spec.params.at("keep") == "0.25:0.5");
  CHECK(spec.params.at("percentiles") == "20:85");
  CHECK(
      Spec::parse("torchscript(path = /models/my model.pt )", "embedder spec").params.at("path") ==
      "/models/my model.pt");
}

TEST_CASE("a value holds anything but ','", "[spec]") {
  const Spec spec = Spec::parse("torchscript(path=/m/a(1)=b.pt,width=28)", "embedder spec");
  CHECK(spec.params.at("path") == "/m/a(1)=b.pt");
  CHECK(spec.params.at("width") == "28");
  CHECK(Spec::parse("x(Key_2-b=1)", "policy").params.count("Key_2-b") == 1);
}

TEST_CASE("to_string is canonical and round-trips", "[spec]") {
  CHECK(Spec::parse(" flat ", "index config").to_string() == "flat");
  CHECK(Spec::parse("flat()", "index config").to_string() == "flat");
  const Spec spec = Spec::parse("hnsw( efSearch = 128, M=16 )", "index config");
  CHECK(spec.to_string() == "hnsw(M=16,efSearch=128)");  // keys sorted (bytewise)
  CHECK(Spec::parse(spec.to_string(), "index config").to_string() == spec.to_string());
  CHECK(Spec::parse(spec.to_string(), "index config").params == spec.params);
  CHECK(Spec{"ucb", {{"prune", "0.3"}, {"c", "1"}}}.to_string() == "ucb(c=1,prune=0.3)");
}

TEST_CASE("every parse error names what is parsed, the text and the culprit", "[spec]") {
  using Catch::Contains;
  CHECK_THAT(parse_error("infobatch(r=0.5"),
             Contains("policy 'infobatch(r=0.5'") && Contains("expected ')' at the end"));
  CHECK_THAT(parse_error("infobatch)"), Contains("')' without '('"));
  CHECK_THAT(parse_error("", "index config"),
             Contains("index config ''") && Contains("expected a name"));
  CHECK_THAT(parse_error("info batch"), Contains("got name 'info batch'"));
  CHECK_THAT(parse_error("(r=1)"), Contains("expected a name"));
  CHECK_THAT(parse_error("torchscript:/m.pt", "embedder spec"),
             Contains("embedder spec 'torchscript:/m.pt'") && Contains("got name"));
  CHECK_THAT(parse_error("infobatch(r)"), Contains("'r' is not key=value"));
  CHECK_THAT(parse_error("infobatch(r=1,,)"), Contains("'' is not key=value"));
  CHECK_THAT(parse_error("infobatch(,)"), Contains("'' is not key=value"));
  CHECK_THAT(parse_error("infobatch(,r=1)"), Contains("'' is not key=value"));
  CHECK_THAT(parse_error("infobatch(=1)"), Contains("key ''"));
  CHECK_THAT(parse_error("infobatch(r x=1)"),
             Contains("key 'r x' (in 'r x=1') must be letters, digits"));
  CHECK_THAT(parse_error("hnsw(M=)", "index config"),
             Contains("index config 'hnsw(M=)'") && Contains("key 'M' has no value"));
  CHECK_THAT(parse_error("infobatch(r=1, r=2)"),
             Contains("policy 'infobatch(r=1, r=2)'") && Contains("key 'r' given twice"));
}
