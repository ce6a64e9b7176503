// FolderImporter: a folder tree as one batch of `path` records. The walk
// (keys, labels, sorted order, hidden names), links and FIFOs refused without
// hanging, files that are not images, and a second import of a grown folder.
#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "folder_tree.h"
#include "support/temp_dir.h"
#include "winnow/curation/readers/folder_importer.h"
#include "support/curation_pipeline.h"

namespace fs = std::filesystem;
using namespace winnow::curation::readers;
using winnow::curation::CurationConfig;
using namespace winnow::curation::review;
using namespace winnow::curation::ingest;
using winnow::image::test::write_picture;
using winnow::store::SampleStatus;

namespace {

// Every entry of the importer: (key, label or "-") of records, and the
// reasons of rejections by key.
struct Walked {
  std::vector<std::pair<std::string, std::string>> records;
  std::map<std::string, std::string> rejected;
};

Walked walk_all(FolderImporter& importer) {
  Walked w;
  ManifestEntry entry;
  while (importer.next(entry)) {
    if (entry.ok()) {
      w.records.emplace_back(entry.record->key, entry.record->label.value_or("-"));
      CHECK(entry.record->has_image() == (entry.record->key.find(".txt") == std::string::npos));
    } else {
      w.rejected[entry.rejection->key] = entry.rejection->reason;
    }
  }
  return w;
}

FolderImportOptions reading_28x28(bool labelled = true) {
  FolderImportOptions options;
  options.labelled = labelled;
  options.image = {28, 28, winnow::image::DecodeOptions::kDefaultMaxPixels};
  return options;
}

const FolderImporter::ImportedTest kNothingImported = [](const std::string&, const std::string&) {
  return false;
};

// dogs/ before cats/ on disk, nested folders, hidden names, a file in the root.
void write_tree(const fs::path& root) {
  write_picture(root, "dogs/b.jpg", 1);
  write_picture(root, "dogs/a.jpg", 2);
  write_picture(root, "cats/puppy-like/deep/c.jpg", 3);
  write_picture(root, "cats/z.jpg", 4);
  write_picture(root, "cats/.thumb.jpg", 5);
  write_picture(root, ".git/objects/x.jpg", 6);
  std::ofstream(root / "cats" / "notes.txt") << "not a picture\n";
  write_picture(root, "loose.jpg", 7);
}

std::map<std::string, winnow::store::SampleRecord> samples_by_key(
    winnow::test::Pipeline& pipeline) {
  std::map<std::string, winnow::store::SampleRecord> by_key;
  pipeline.store().for_each_sample(
      [&](const winnow::store::SampleRecord& s) { by_key[s.external_key] = s; });
  return by_key;
}

}  // namespace

TEST_CASE("folder import: keys are paths under the root, labels the class folders, sorted",
          "[image][folder]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "pets";
  write_tree(root);

  SECTION("labelled: the first folder level is the label, the root's files have none") {
    FolderImporter importer(root, reading_28x28(), kNothingImported);
    CHECK(importer.total() == 6);
    CHECK(importer.hidden() == 2);  // cats/.thumb.jpg and .git/
    CHECK(importer.source() == "pets");
    const Walked w = walk_all(importer);
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"cats/notes.txt", "cats"}, {"cats/puppy-like/deep/c.jpg", "cats"},
        {"cats/z.jpg", "cats"},     {"dogs/a.jpg", "dogs"},
        {"dogs/b.jpg", "dogs"},     {"loose.jpg", "-"}};
    CHECK(w.records == expected);
    CHECK(w.rejected.empty());
    CHECK(importer.done() == 6);
  }
  SECTION("unlabelled: every file at any depth, no labels") {
    FolderImportOptions options = reading_28x28(false);
    options.source = "vendor";
    options.key_prefix = "v1/";
    FolderImporter importer(root, options, kNothingImported);
    CHECK(importer.source() == "vendor");
    const Walked w = walk_all(importer);
    REQUIRE(w.records.size() == 6);
    for (const auto& [key, label] : w.records) {
      CHECK(key.rfind("v1/", 0) == 0);
      CHECK(label == "-");
    }
    CHECK(w.records.front().first == "v1/cats/notes.txt");
  }
  SECTION("the root must be a folder") {
    CHECK_THROWS_WITH(FolderImporter(dir.path() / "missing", reading_28x28(), kNothingImported),
                      Catch::Contains("does not exist"));
    CHECK_THROWS_WITH(FolderImporter(root / "loose.jpg", reading_28x28(), kNothingImported),
                      Catch::Contains("is not a folder"));
  }
}

TEST_CASE("folder import: links to files are followed, links to folders and FIFOs refused",
          "[image][folder]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "set";
  write_picture(root, "a/real.jpg", 1);
  write_picture(dir.path(), "outside.jpg", 2);
  fs::create_symlink(dir.path() / "outside.jpg", root / "a" / "link.jpg");
  fs::create_symlink("real.jpg", root / "a" / "inside-link.jpg");
  fs::create_directories(dir.path() / "elsewhere");
  write_picture(dir.path(), "elsewhere/secret.jpg", 3);
  fs::create_directory_symlink(dir.path() / "elsewhere", root / "a" / "folder-link");
  REQUIRE(::mkfifo((root / "a" / "pipe.jpg").c_str(), 0644) == 0);  // nobody ever writes it

  fs::create_symlink(dir.path() / "gone.jpg", root / "a" / "dangling.jpg");

  FolderImporter importer(root, reading_28x28(), kNothingImported);
  const Walked w = walk_all(importer);
  // The user's own folder: a file behind a link is read wherever it lies
  // (git-annex, DVC and Debian's packages keep files so).
  REQUIRE(w.records.size() == 3);
  CHECK(w.records[0].first == "a/inside-link.jpg");
  CHECK(w.records[1].first == "a/link.jpg");
  CHECK(w.records[2].first == "a/real.jpg");
  REQUIRE(w.rejected.size() == 3);  // the linked folder is not entered: no secret.jpg
  CHECK_THAT(w.rejected.at("a/folder-link"), Catch::Contains("link to a folder"));
  CHECK_THAT(w.rejected.at("a/dangling.jpg"), Catch::Contains("target cannot be reached"));
  CHECK_THAT(w.rejected.at("a/pipe.jpg"), Catch::Contains("FIFO"));
}

TEST_CASE("folder import: through the pipeline, and again after the folder grew",
          "[image][folder][ingest]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "pets";
  write_tree(root);
  write_picture(root, "dogs/copy-of-a.jpg", 2);  // the bytes of dogs/a.jpg: an exact duplicate
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  winnow::test::Pipeline pipeline(db);
  winnow::store::MetadataStore& store = pipeline.store();
  const FolderImporter::ImportedTest imported = [&](const std::string& key,
                                                    const std::string& source) {
    const auto s = store.find_by_external_key(key);
    return s && s->source == source;
  };
  auto import = [&](FolderImportOptions options) {
    options.image = pipeline.image_reading();
    FolderImporter importer(root, options, imported);
    const std::string checksum = importer.checksum();
    BatchReport report =
        pipeline.ingest_batch("pets", checksum, [&](ManifestEntry& e) { return importer.next(e); });
    return std::make_pair(report, importer.already_imported());
  };

  const auto [first, skipped_first] = import({});
  CHECK(skipped_first == 0);
  CHECK(first.counts.total() == 7);
  auto by_key = samples_by_key(pipeline);
  CHECK(by_key.at("dogs/copy-of-a.jpg").status == SampleStatus::duplicate_exact);
  CHECK(by_key.at("cats/notes.txt").status == SampleStatus::rejected);
  CHECK(by_key.at("dogs/b.jpg").status == SampleStatus::accepted);
  CHECK(by_key.at("dogs/b.jpg").source == "pets");
  CHECK(pipeline.label_names().name_of(*by_key.at("dogs/b.jpg").label) == "dogs");
  CHECK_FALSE(by_key.at("loose.jpg").label.has_value());

  // Grown: two new files and a FIFO. Only they are ingested.
  write_picture(root, "birds/new.jpg", 10);
  write_picture(root, "cats/new.jpg", 11);
  REQUIRE(::mkfifo((root / "cats" / "pipe").c_str(), 0644) == 0);
  const auto [second, skipped_second] = import({});
  CHECK(skipped_second == 7);
  CHECK(second.counts.total() == 3);
  CHECK(second.counts[SampleStatus::accepted] == 2);
  CHECK(second.counts[SampleStatus::rejected] == 1);
  by_key = samples_by_key(pipeline);
  CHECK(by_key.at("cats/pipe").source == "pets");  // a rejection keeps its source
  CHECK(pipeline.label_names().name_of(*by_key.at("birds/new.jpg").label) == "birds");

  // Nothing new: an empty batch; the FIFO was imported (as rejected) too.
  const auto [third, skipped_third] = import({});
  CHECK(skipped_third == 10);
  CHECK(third.counts.total() == 0);

  // Another source: the keys are taken, so every file is a key clash.
  FolderImportOptions other;
  other.source = "other-vendor";
  const auto [fourth, skipped_fourth] = import(other);
  CHECK(skipped_fourth == 0);
  CHECK(fourth.counts[SampleStatus::rejected] == 10);
  CHECK(fourth.rejections.size() >= 1);
}

TEST_CASE("folder import: the checksum names the files to import", "[image][folder]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "set";
  write_picture(root, "a/1.jpg", 1);
  const FolderImportOptions options = reading_28x28();
  const std::string one = FolderImporter(root, options, kNothingImported).checksum();
  CHECK(FolderImporter(root, options, kNothingImported).checksum() == one);
  FolderImportOptions unlabelled = options;
  unlabelled.labelled = false;
  CHECK(FolderImporter(root, unlabelled, kNothingImported).checksum() != one);
  write_picture(root, "a/2.jpg", 2);
  CHECK(FolderImporter(root, options, kNothingImported).checksum() != one);
  const auto all_imported = [](const std::string&, const std::string&) { return true; };
  FolderImporter none(root, options, all_imported);
  CHECK(none.total() == 0);
  CHECK(none.already_imported() == 2);
}

TEST_CASE("folder import: names that are not valid UTF-8 or hold control bytes become \\xNN",
          "[image][folder][ingest]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "set";
  write_picture(root, "caf\xe9/a.jpg", 1);     // Latin-1 folder name: the label
  write_picture(root, "ok/new\nline.jpg", 2);  // a newline in a file name
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  winnow::test::Pipeline pipeline(db);
  FolderImportOptions options;
  options.image = pipeline.image_reading();
  FolderImporter importer(root, options, kNothingImported);
  const BatchReport report = pipeline.ingest_batch(
      "set", importer.checksum(), [&](ManifestEntry& e) { return importer.next(e); });
  CHECK(report.counts[SampleStatus::accepted] == 2);
  const auto by_key = samples_by_key(pipeline);
  REQUIRE(by_key.count("caf\\xe9/a.jpg") == 1);
  CHECK(pipeline.label_names().name_of(*by_key.at("caf\\xe9/a.jpg").label) == "caf\\xe9");
  CHECK(by_key.count("ok/new\\x0aline.jpg") == 1);
}

TEST_CASE("folder import: a file gone mid-import is tried again by the next import",
          "[image][folder][ingest]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "pets";
  write_tree(root);
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, CurationConfig{});
  winnow::test::Pipeline pipeline(db);
  const FolderImporter::ImportedTest imported = [&](const std::string& key,
                                                    const std::string& source) {
    const auto s = pipeline.store().find_by_external_key(key);
    return s && s->source == source;
  };
  FolderImportOptions options;
  options.image = pipeline.image_reading();

  // The walk lists dogs/b.jpg; it is gone before it is read.
  std::ifstream in(root / "dogs" / "b.jpg", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!bytes.empty());
  FolderImporter first(root, options, imported);
  fs::remove(root / "dogs" / "b.jpg");
  const BatchReport r1 = pipeline.ingest_batch("pets", first.checksum(),
                                               [&](ManifestEntry& e) { return first.next(e); });
  CHECK(r1.counts[SampleStatus::rejected] >= 1);
  CHECK_FALSE(pipeline.store().find_by_external_key("dogs/b.jpg"));  // the key is left free

  // Back again: the next import takes it (and skips what the first took).
  std::ofstream(root / "dogs" / "b.jpg", std::ios::binary) << bytes;
  FolderImporter second(root, options, imported);
  const BatchReport r2 = pipeline.ingest_batch("pets", second.checksum(),
                                               [&](ManifestEntry& e) { return second.next(e); });
  CHECK(r2.counts.total() == 1);
  const auto b = pipeline.store().find_by_external_key("dogs/b.jpg");
  REQUIRE(b);
  CHECK(b->status == SampleStatus::accepted);
}

TEST_CASE("folder import: two names that print alike get different keys", "[image][folder]") {
  winnow::test::TempDir dir;
  const fs::path root = dir.path() / "set";
  write_picture(root, "a/caf\\xe9.jpg", 1);  // typed: a backslash, then "xe9"
  write_picture(root, "a/caf\xe9.jpg", 2);   // the byte 0xE9: not UTF-8
  FolderImporter importer(root, reading_28x28(), kNothingImported);
  const Walked w = walk_all(importer);
  REQUIRE(w.records.size() == 2);
  CHECK(w.records[0].first != w.records[1].first);
  CHECK((w.records[0].first == "a/caf\\\\xe9.jpg" || w.records[1].first == "a/caf\\\\xe9.jpg"));
  CHECK((w.records[0].first == "a/caf\\xe9.jpg" || w.records[1].first == "a/caf\\xe9.jpg"));
}
