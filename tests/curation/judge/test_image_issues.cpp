// ImageIssuePolicy and ImageIssueJudge: thresholds to issues, odd size
// against the dataset's median, grayscale only in a colour set, the policy's
// JSON (old configs load with the defaults) and decide()'s rejection.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "support/temp_dir.h"
#include "winnow/curation/judge/image_issues.h"
#include "winnow/curation/config/dataset_config.h"
#include "winnow/curation/judge/record_decision.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"

using namespace winnow::curation;
using namespace winnow::curation::judge;
using winnow::store::ImageIssue;

namespace {

ImageMeasurement image(std::size_t width, std::size_t height, double colour = 0.5) {
  ImageMeasurement m;
  m.width = width;
  m.height = height;
  m.scores.grayscale = colour;
  return m;
}

}  // namespace

TEST_CASE("image issues: scores below their thresholds are issues", "[curation][image_issues]") {
  winnow::test::TempDir dir;
  winnow::store::MetadataStore store(dir.file("j.db"));
  winnow::store::ImageQualityTable table(store.database());
  ImageIssuePolicy policy;
  ImageIssueJudge judge(policy, table);
  ImageMeasurement m = image(200, 100);
  m.scores.blurry = 0.05;  // < 0.125
  m.scores.dark = 0.39;    // < 0.4
  m.scores.bright = 0.41;  // not < 0.4
  const winnow::store::ImageQualityRecord r = judge.judge(m);
  CHECK(r.has(ImageIssue::blurry));
  CHECK(r.has(ImageIssue::dark));
  CHECK_FALSE(r.has(ImageIssue::bright));
  CHECK(r.score(ImageIssue::odd_aspect_ratio) == Approx(0.5));
  CHECK_FALSE(r.has(ImageIssue::odd_aspect_ratio));  // 0.5 is not below 0.5
  CHECK(judge.judge(image(201, 100)).has(ImageIssue::odd_aspect_ratio));
  CHECK(r.width == 200);
  CHECK(r.height == 100);
  // Too few images to compare with: odd size and grayscale are not judged.
  CHECK_FALSE(r.score(ImageIssue::odd_size).has_value());
  CHECK_FALSE(judge.judge(image(100, 100, 0.0)).has(ImageIssue::grayscale));
}

TEST_CASE("image issues: odd size and grayscale are judged against the dataset",
          "[curation][image_issues]") {
  winnow::test::TempDir dir;
  winnow::store::MetadataStore store(dir.file("d.db"));
  winnow::store::ImageQualityTable table(store.database());
  ImageIssuePolicy policy;
  {
    ImageIssueJudge judge(policy, table);
    for (int i = 0; i < 19; ++i) judge.add(image(300, 300));
    judge.add(image(300, 300, 0.0));  // 19 of 20 in colour
    const auto tiny = judge.judge(image(50, 50));
    REQUIRE(tiny.score(ImageIssue::odd_size).has_value());
    CHECK(*tiny.score(ImageIssue::odd_size) == Approx(50.0 / 300));
    CHECK(tiny.has(ImageIssue::odd_size));
    CHECK(judge.judge(image(1600, 1600)).has(ImageIssue::odd_size));  // 300/1600 < 0.2
    CHECK_FALSE(judge.judge(image(600, 600)).has(ImageIssue::odd_size));
    CHECK(judge.judge(image(300, 300, 0.01)).has(ImageIssue::grayscale));
    // Three more grey images: 19 of 23 (0.83) still a colour set; 4 more: 19/27 is not.
    for (int i = 0; i < 3; ++i) judge.add(image(300, 300, 0.0));
    CHECK(judge.judge(image(300, 300, 0.0)).has(ImageIssue::grayscale));
    for (int i = 0; i < 4; ++i) judge.add(image(300, 300, 0.0));
    CHECK_FALSE(judge.judge(image(300, 300, 0.0)).has(ImageIssue::grayscale));
  }
  // A new judge starts from the stored rows.
  const std::int64_t id = store.insert_sample([] {
    winnow::store::NewSample s;
    s.external_key = "k";
    s.content_hash = "h";
    return s;
  }());
  winnow::store::ImageQualityRecord stored;
  stored.sample_id = id;
  stored.width = stored.height = 1000;
  stored.scores[static_cast<std::size_t>(ImageIssue::grayscale)] = 0.5;
  table.put(stored);
  policy.min_reference_images = 1;
  ImageIssueJudge later(policy, table);
  const auto r = later.judge(image(100, 100));
  CHECK(*r.score(ImageIssue::odd_size) == Approx(0.1));
  CHECK(later.judge(image(100, 100, 0.0)).has(ImageIssue::grayscale));
}

TEST_CASE("image issues: the policy's JSON, and configs without it", "[curation][image_issues]") {
  ImageIssuePolicy policy;
  policy.action = ImageIssuePolicy::Action::reject;
  policy.thresholds[static_cast<std::size_t>(ImageIssue::odd_size)] = 0.1;
  const ImageIssuePolicy back = ImageIssuePolicy::from_json(policy.to_json());
  CHECK(back.action == ImageIssuePolicy::Action::reject);
  CHECK(back.threshold(ImageIssue::odd_size) == 0.1);
  CHECK(back.threshold(ImageIssue::blurry) == ImageIssuePolicy{}.threshold(ImageIssue::blurry));

  const nlohmann::json partial = {{"thresholds", {{"dark", 0.3}}}};
  const ImageIssuePolicy p = ImageIssuePolicy::from_json(partial);
  CHECK(p.action == ImageIssuePolicy::Action::flag);
  CHECK(p.threshold(ImageIssue::dark) == 0.3);

  CHECK_THROWS_WITH(ImageIssuePolicy::from_json({{"action", "delete"}}),
                    Catch::Contains("not flag or reject"));
  CHECK_THROWS_WITH(ImageIssuePolicy::from_json({{"thresholds", {{"fuzzy", 0.3}}}}),
                    Catch::Contains("'fuzzy' is not an image issue"));
  CHECK_THROWS_WITH(ImageIssuePolicy::from_json({{"thresholds", {{"dark", 1.5}}}}),
                    Catch::Contains("dark=1.5 must be in [0, 1]"));
  CHECK_THROWS_AS(ImageIssuePolicy::from_json({{"thresholds", {{"dark", "low"}}}}), winnow::Error);

  // A config stored before image issues existed loads with the defaults.
  nlohmann::json old = nlohmann::json::parse(CurationConfig{}.to_json());
  old.erase("image_issues");
  const CurationConfig loaded = CurationConfig::from_json(old.dump());
  CHECK(loaded.image_issues.action == ImageIssuePolicy::Action::flag);
  CHECK(loaded.image_issues.thresholds == ImageIssuePolicy{}.thresholds);
  // And a config with a policy keeps it.
  CurationConfig config;
  config.image_issues = policy;
  CHECK(CurationConfig::from_json(config.to_json()).image_issues.action ==
        ImageIssuePolicy::Action::reject);
}

TEST_CASE("image issues: decide() rejects after exact dedup, before embedding",
          "[curation][image_issues]") {
  Candidate c;
  c.key = "k";
  c.line = 3;
  c.image_issues = "image 'a.png' has image-quality issues: dark (score 0.100 < 0.4)";
  c.embed_error = "never read";
  const winnow::store::Decision d = decide(c, {}, DecisionRules{});
  CHECK(d.status == winnow::store::SampleStatus::rejected);
  CHECK(d.reason == *c.image_issues);
  c.exact_duplicate_of = 5;
  CHECK(decide(c, {}, DecisionRules{}).status == winnow::store::SampleStatus::duplicate_exact);
}
