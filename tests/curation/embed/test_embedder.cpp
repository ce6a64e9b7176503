#include <catch2/catch.hpp>

#include <cmath>

#include "support/curation_test_helpers.h"
#include "winnow/curation/embed/embedder.h"
#include "winnow/error.h"

using namespace winnow::curation;
using namespace winnow::curation::embed;
using namespace winnow::curation::test;

namespace {

double norm(const std::vector<float>& v) {
  double s = 0;
  for (const float x : v) {
    s += double(x) * x;
  }
  return std::sqrt(s);
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    s += double(a[i]) * b[i];
  }
  return s / (norm(a) * norm(b));
}

ManifestRecord text(const std::string& t) {
  ManifestRecord r;
  r.key = "t";
  r.kind = ContentKind::text;
  r.text = t;
  return r;
}

}  // namespace

TEST_CASE("embedder specs give the documented dims and canonical specs", "[embedder]") {
  EmbedderOptions opt;
  opt.width = 28;
  opt.height = 28;
  opt.input_dim = 5;
  CHECK(make_embedder("pixels", opt)->dim() == 784);
  CHECK(make_embedder("pixels(pool=2)", opt)->dim() == 196);
  CHECK(make_embedder("pixels(dim=64, seed=3)", opt)->spec() ==
        "pixels(width=28,height=28,pool=1,dim=64,seed=3)");
  CHECK(make_embedder("pixels(fourier=6)", opt)->dim() == 6 * 11 - 1);
  CHECK(make_embedder("hashed-ngrams")->spec() == "hashed-ngrams(n=3,dim=256,seed=0)");
  CHECK(make_embedder("provided", opt)->dim() == 5);
  CHECK(make_embedder("provided(dim=7)")->dim() == 7);
  CHECK_THROWS_WITH(make_embedder("resnet"), Catch::Contains("unknown embedder"));
  CHECK_THROWS_WITH(make_embedder("pixels(pool=2)"), Catch::Contains("image size"));
  CHECK_THROWS_WITH(make_embedder("pixels(color=1)", opt), Catch::Contains("unknown key 'color'"));
  CHECK_THROWS_WITH(make_embedder("pixels(dim=x)", opt), Catch::Contains("non-negative integer"));
  CHECK_THROWS_WITH(make_embedder("pixels(dim=5000)", opt), Catch::Contains("exceeds"));
  CHECK_THROWS_WITH(make_embedder("provided"), Catch::Contains("dimension"));
}

TEST_CASE("embedder specs follow the one spec grammar", "[embedder]") {
  EmbedderOptions opt;
  opt.width = 28;
  opt.height = 28;
  // Whitespace around tokens and one trailing ',' are accepted, as they always were.
  CHECK(make_embedder(" pixels ( dim = 64 ,\tseed=3, ) ", opt)->spec() ==
        "pixels(width=28,height=28,pool=1,dim=64,seed=3)");
  CHECK_THROWS_WITH(make_embedder("pixels(dim=64,dim=32)", opt),
                    Catch::Contains("embedder spec 'pixels(dim=64,dim=32)'") &&
                        Catch::Contains("key 'dim' given twice"));
  CHECK_THROWS_WITH(make_embedder("pixels(dim=1000000000)", opt),
                    Catch::Contains("value '1000000000' of 'dim'"));
  CHECK_THROWS_WITH(make_embedder("pixels(dim=64", opt), Catch::Contains("')' at the end"));
}

TEST_CASE("pixel embeddings are unit vectors, deterministic and brightness invariant",
          "[embedder]") {
  const auto& recs = fashion_test();
  EmbedderOptions opt;
  opt.width = 28;
  opt.height = 28;
  for (const char* spec : {"pixels", "pixels(pool=2,dim=64)", "pixels(fourier=6)"}) {
    INFO(spec);
    const auto e = make_embedder(spec, opt);
    const std::vector<float> a = e->embed(recs[0]);
    CHECK(norm(a) == Approx(1.0).margin(1e-5));
    CHECK(make_embedder(spec, opt)->embed(recs[0]) == a);
    const ManifestRecord brighter = edited_copy(recs[0], 0, 0, 0.9, 0.0, 1);
    CHECK(cosine(e->embed(brighter), a) > 0.99);
    CHECK(cosine(e->embed(recs[1]), a) < 0.99);
  }
  // The Fourier magnitudes barely move under a one-pixel shift.
  const auto f = make_embedder("pixels(fourier=6)", opt);
  CHECK(cosine(f->embed(edited_copy(recs[3], 1, -1, 1.0, 0.0, 1)), f->embed(recs[3])) > 0.98);

  ManifestRecord flat = recs[0];
  std::fill(flat.pixels.begin(), flat.pixels.end(), 7);
  CHECK_THROWS_WITH(make_embedder("pixels", opt)->embed(flat), Catch::Contains("constant image"));
  CHECK_THROWS_WITH(make_embedder("pixels", opt)->embed(text("x")),
                    Catch::Contains("needs an image"));
}

TEST_CASE("hashed n-grams make similar texts close", "[embedder]") {
  const auto e = make_embedder("hashed-ngrams(n=3,dim=256)");
  const auto a = e->embed(text("the quick brown fox jumps over the lazy dog"));
  const auto b = e->embed(text("the quick brown fox jumped over the lazy dog!"));
  const auto c = e->embed(text("completely unrelated sentence about databases"));
  CHECK(a.size() == 256);
  CHECK(norm(a) == Approx(1.0).margin(1e-5));
  CHECK(cosine(a, b) > 0.8);
  CHECK(cosine(a, c) < 0.4);
  CHECK(e->embed(text("ab")).size() == 256);  // shorter than n
  CHECK(norm(e->embed(text("héllo wörld"))) == Approx(1.0).margin(1e-5));
  CHECK_THROWS_WITH(e->embed(text("")), Catch::Contains("empty text"));
}

TEST_CASE("the provided embedder normalises the manifest's vector", "[embedder]") {
  const auto e = make_embedder("provided(dim=2)");
  ManifestRecord r = text("x");
  r.embedding = {3.0f, 4.0f};
  const auto v = e->embed(r);
  CHECK(v[0] == Approx(0.6f));
  CHECK(v[1] == Approx(0.8f));
  r.embedding = {1.0f};
  CHECK_THROWS_WITH(e->embed(r), Catch::Contains("expected 2"));
  r.embedding = {0.0f, 0.0f};
  CHECK_THROWS_AS(e->embed(r), winnow::Error);
}

TEST_CASE("pixels(colour=1) embeds the colour image, channel by channel", "[embedder]") {
  const auto colour = make_embedder("pixels(width=8,height=8,fourier=2,colour=1)", {});
  const auto grey = make_embedder("pixels(width=8,height=8,fourier=2)", {});
  CHECK(colour->dim() == 3 * grey->dim());
  CHECK(colour->spec() == "pixels(width=8,height=8,pool=1,fourier=2,colour=1)");
  // A red disc on white and the same disc in blue: the same grey levels
  // (red and blue swapped), told apart only in colour.
  ManifestRecord red;
  red.key = "red";
  red.kind = ContentKind::path;
  red.path = "red.png";
  red.width = red.height = 8;
  red.pixels.assign(64, 0);
  red.colour.assign(3 * 64, 255);
  for (std::size_t y = 0; y < 8; ++y) {
    for (std::size_t x = 0; x < 8; ++x) {
      const bool disc = (x - 3.5) * (x - 3.5) + (y - 3.5) * (y - 3.5) < 7.0;
      red.pixels[y * 8 + x] = disc ? 120 : 255;
      if (disc) {
        red.colour[3 * (y * 8 + x) + 0] = 220;
        red.colour[3 * (y * 8 + x) + 1] = 40;
        red.colour[3 * (y * 8 + x) + 2] = 40;
      }
    }
  }
  ManifestRecord blue = red;
  blue.key = "blue";
  for (std::size_t i = 0; i < 64; ++i) std::swap(blue.colour[3 * i], blue.colour[3 * i + 2]);
  CHECK(cosine(grey->embed(red), grey->embed(blue)) == Approx(1.0));
  CHECK(cosine(colour->embed(red), colour->embed(blue)) < 0.9);
  CHECK(norm(colour->embed(red)) == Approx(1.0));

  // Grey pixel arrays have no colour image, and the size must be the colour image's.
  ManifestRecord pixels_only = red;
  pixels_only.kind = ContentKind::pixels;
  pixels_only.colour.clear();
  CHECK_THROWS_WITH(colour->embed(pixels_only), Catch::Contains("no colour image"));
  const auto wrong_size = make_embedder("pixels(width=4,height=4,colour=1)", {});
  CHECK_THROWS_WITH(wrong_size->embed(red), Catch::Contains("expects 4 x 4 RGB"));
  CHECK_THROWS_WITH(make_embedder("pixels(width=8,height=8,colour=2)", {}),
                    Catch::Contains("colour=2 must be 0 or 1"));
}
