// winnow chooses the embedder of a dataset made without --embedder by the
// first content it is given, until a sample holds an embedding; an explicit
// embedder is never changed. Real store, real manifests.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "support/curation_pipeline.h"
#include "support/temp_dir.h"
#include "winnow/curation/dataset/embedder_choice.h"
#include "winnow/curation/readers/manifest_reader.h"
#include "winnow/store/metadata_store.h"

using namespace winnow;
using namespace winnow::curation;

namespace {

std::string write_lines(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
  return path;
}

std::string stored_embedder(const std::string& db) {
  store::MetadataStore store(db);
  return CurationConfig::from_json(*store.get_meta(CurationConfig::kMetaKey)).embedder;
}

}  // namespace

TEST_CASE("the default embedder of each kind of content", "[embedder_choice]") {
  CHECK(default_embedder_for(ContentKind::pixels) == CurationConfig{}.embedder);
  CHECK(default_embedder_for(ContentKind::path) == "pixels(width=32,height=32,fourier=6,colour=1)");
  CHECK(default_embedder_for(ContentKind::text) == "hashed-ngrams(n=3,dim=256)");
  CHECK(default_embedder_for(ContentKind::text, 12) == "provided(dim=12)");
  // Pixel arrays at their own size (CIFAR's 32 x 32), the default at 28 x 28.
  CHECK(default_embedder_for(ContentKind::pixels, 0, 32, 32) ==
        "pixels(width=32,height=32,pool=1,fourier=6)");
  CHECK(default_embedder_for(ContentKind::pixels, 0, 28, 28) == CurationConfig{}.embedder);
}

TEST_CASE("a manifest's content is its first record's with any", "[embedder_choice]") {
  test::TempDir dir;
  const std::string text = write_lines(dir.file("t.jsonl"),
                                       "\n{\"key\": \"n\", \"annotations\": [{\"annotator\": "
                                       "\"a\", \"label\": \"x\"}]}\n{\"key\": \"t\", \"text\": "
                                       "\"words\"}\n");
  const std::optional<BatchContent> t = manifest_content(text);
  REQUIRE(t);
  CHECK(t->kind == ContentKind::text);
  CHECK(t->embedding_dim == 0);
  const std::optional<BatchContent> p =
      manifest_content(write_lines(dir.file("p.jsonl"),
                                   "{\"key\": \"p\", \"pixels\": [1, 2, 3, 4], \"width\": 2, "
                                   "\"height\": 2}\n"));
  REQUIRE(p);
  CHECK(p->kind == ContentKind::pixels);
  const std::optional<BatchContent> f = manifest_content(
      write_lines(dir.file("f.jsonl"), "{\"key\": \"f\", \"path\": \"missing.png\"}\n"));
  REQUIRE(f);
  CHECK(f->kind == ContentKind::path);  // the file is not read
  const std::optional<BatchContent> e = manifest_content(write_lines(
      dir.file("e.jsonl"), "{\"key\": \"e\", \"text\": \"w\", \"embedding\": [1, 0, 0]}\n"));
  REQUIRE(e);
  CHECK(e->embedding_dim == 3);
  CHECK_FALSE(manifest_content(write_lines(dir.file("bad.jsonl"), "not json\n")));
  CHECK_FALSE(manifest_content(dir.file("missing.jsonl")));
}

TEST_CASE("the embedder is chosen until a sample holds an embedding", "[embedder_choice]") {
  test::TempDir dir;
  const std::string db = dir.file("auto.db");
  CurationConfig config;
  config.embedder_auto = true;
  test::Pipeline::init(db, config);

  // Chosen, and chosen again while nothing is embedded.
  CHECK(choose_embedder(db, {ContentKind::text, 0}) == "hashed-ngrams(n=3,dim=256)");
  CHECK(stored_embedder(db) == "hashed-ngrams(n=3,dim=256)");
  CHECK_FALSE(choose_embedder(db, {ContentKind::text, 0}));  // already so
  CHECK(choose_embedder(db, {ContentKind::path, 0}) ==
        "pixels(width=32,height=32,fourier=6,colour=1)");
  CHECK(choose_embedder(db, {ContentKind::text, 0}) == "hashed-ngrams(n=3,dim=256)");

  // A batch of text embeds its records: the choice stays from then on.
  const std::string manifest =
      write_lines(dir.file("m.jsonl"), "{\"key\": \"a\", \"text\": \"one paragraph\"}\n");
  {
    test::Pipeline p(db);
    CHECK(p.embedder().spec().rfind("hashed-ngrams(n=3,dim=256", 0) == 0);
    const auto r = p.ingest_batch(manifest, readers::file_checksum(manifest),
                                  readers::read_manifest(manifest));
    CHECK(r.counts[store::SampleStatus::accepted] == 1);
  }
  CHECK_FALSE(choose_embedder(db, {ContentKind::pixels, 0}));
  CHECK(stored_embedder(db) == "hashed-ngrams(n=3,dim=256)");

  // An explicit embedder is never changed, nor a database never initialised.
  const std::string fixed = dir.file("fixed.db");
  test::Pipeline::init(fixed, CurationConfig{});
  CHECK_FALSE(choose_embedder(fixed, {ContentKind::text, 0}));
  CHECK(stored_embedder(fixed) == CurationConfig{}.embedder);
  CHECK_FALSE(choose_embedder(dir.file("missing.db"), {ContentKind::text, 0}));
  CHECK_FALSE(std::filesystem::exists(dir.file("missing.db")));
}
