// A bulk job's prior neighbour lists (winnow.dask phase 2) in the ingest
// pipeline: with lists that hold every record's nearest earlier records, the
// decisions are those of a plain ingest, whether the lists are long enough
// to prove themselves or the pipeline has to search for some records.
#include <catch2/catch.hpp>

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "support/curation_test_helpers.h"
#include "support/temp_dir.h"
#include "support/curation_pipeline.h"
#include "winnow/curation/bulk/listed_verification.h"
#include "winnow/index/prior_neighbours.h"

namespace {

using namespace winnow;
using namespace winnow::store;
using namespace winnow::curation;
using namespace winnow::curation::readers;
using namespace winnow::curation::review;
using namespace winnow::curation::bulk;
using namespace winnow::curation::ingest;
using winnow::curation::test::edited_copy;
using winnow::curation::test::fashion_test;

// 900 test images with exact copies, perturbed copies and flipped labels
// among them, cut into three batches.
std::vector<std::vector<ManifestRecord>> job_batches() {
  std::vector<ManifestRecord> all;
  const auto& images = fashion_test();
  for (std::size_t i = 0; i < 800; ++i) {
    ManifestRecord r = images[i];
    r.key = "img-" + std::to_string(i);
    if (i % 37 == 5) r.label = std::to_string((std::stoi(*r.label) + 3) % 10);  // flipped
    all.push_back(std::move(r));
    if (i % 9 == 4) {  // an exact copy a little later
      ManifestRecord copy = images[i - 3];
      copy.key = "exact-" + std::to_string(i);
      all.push_back(std::move(copy));
    }
    if (i % 11 == 7) {  // a perturbed copy of an earlier image
      ManifestRecord copy =
          edited_copy(images[i - 5], i % 3 == 0 ? 1 : 0, 0, 0.95 + 0.01 * (i % 10), 2.0 + (i % 4),
                      static_cast<unsigned>(i));
      copy.key = "near-" + std::to_string(i);
      copy.content_hash.clear();  // the source's hash, copied with it
      all.push_back(std::move(copy));
    }
  }
  std::vector<std::vector<ManifestRecord>> batches(3);
  for (std::size_t i = 0; i < all.size(); ++i) {
    batches[i * 3 / all.size()].push_back(all[i]);
  }
  return batches;
}

struct JobDecision {
  SampleStatus status;
  std::optional<std::string> duplicate_of;
  std::optional<double> label_quality, gain;
};

std::map<std::string, JobDecision> decisions(
    winnow::test::Pipeline& p, const std::vector<std::vector<ManifestRecord>>& batches) {
  std::map<std::string, JobDecision> out;
  for (const auto& batch : batches) {
    for (const ManifestRecord& r : batch) {
      const auto s = p.store().find_by_external_key(r.key);
      REQUIRE(s);
      std::optional<std::string> original;
      if (s->duplicate_of) original = p.store().find_sample(*s->duplicate_of)->external_key;
      out[r.key] = {s->status, original, s->label_quality, s->gain};
    }
  }
  return out;
}

CurationConfig small_chunks() {
  CurationConfig config;
  config.micro_batch = 64;  // many chunks: lists reach across chunks and batches
  return config;
}

std::vector<ManifestEntry> entries_of(const std::vector<ManifestRecord>& records) {
  std::vector<ManifestEntry> entries(records.size());
  for (std::size_t i = 0; i < records.size(); ++i) entries[i].record = records[i];
  return entries;
}

}  // namespace

TEST_CASE("prior neighbour lists give the decisions of a plain ingest", "[ingest][job]") {
  const auto batches = job_batches();
  winnow::test::TempDir dir;
  winnow::test::Pipeline::init(dir.file("plain.db"), small_chunks());
  winnow::test::Pipeline plain(dir.file("plain.db"));
  for (std::size_t b = 0; b < batches.size(); ++b) {
    plain.ingest_batch("b" + std::to_string(b), "c" + std::to_string(b), entries_of(batches[b]));
  }
  const auto expected = decisions(plain, batches);

  // Every record's embedding and position, and its nearest earlier records.
  std::vector<const ManifestRecord*> order;
  for (const auto& batch : batches) {
    for (const ManifestRecord& r : batch) order.push_back(&r);
  }
  const std::size_t n = order.size(), dim = plain.embedder().dim();
  std::vector<float> vectors(n * dim);
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) {
    plain.embedder().embed(*order[i], vectors.data() + i * dim);
    positions[i] = static_cast<std::int64_t>(i);
  }
  const std::vector<std::uint8_t> wanted(n, 1);

  // Long lists (twice the neighbours the ingest takes) and lists barely longer
  // than that, which the copies and rejections often leave short; long lists
  // with the near-duplicate verdicts the workers make (listed_verification.h).
  const auto image_verifier = make_image_verifier(plain.config());
  const auto text_verifier = make_text_verifier(plain.config());
  const ListedRecordLookup at_position = [&](std::int64_t position) {
    return order[static_cast<std::size_t>(position)];
  };
  const auto long_k = static_cast<unsigned>(2 * plain.config().label_k);
  const auto short_k = static_cast<unsigned>(plain.config().label_k + 1);
  for (const auto& [list_k, with_verdicts] :
       {std::pair{long_k, false}, {short_k, false}, {long_k, true}}) {
    DYNAMIC_SECTION("lists of " << list_k << (with_verdicts ? " with verdicts" : "")) {
      const index::PriorNeighbourLists lists =
          index::prior_neighbours(vectors.data(), positions.data(), wanted.data(), n, dim, list_k);
      const std::string db = dir.file("job-" + std::to_string(list_k) + ".db");
      winnow::test::Pipeline::init(db, small_chunks());
      winnow::test::Pipeline job(db);
      REQUIRE(job.start_job(n));
      JobNeighbourCounts counts;
      std::size_t i = 0;
      for (std::size_t b = 0; b < batches.size(); ++b) {
        std::vector<ManifestEntry> entries = entries_of(batches[b]);
        std::vector<JobRecord> jobs(entries.size());
        for (std::size_t j = 0; j < entries.size(); ++j) {
          const ManifestEntry& e = entries[j];
          auto prior = std::make_shared<PriorNeighbours>();
          prior->positions.assign(lists.positions.begin() + i * list_k,
                                  lists.positions.begin() + (i + 1) * list_k);
          prior->similarities.assign(lists.similarities.begin() + i * list_k,
                                     lists.similarities.begin() + (i + 1) * list_k);
          prior->complete = lists.complete[i] != 0;
          if (with_verdicts) {
            verify_listed(*e.record, *prior, at_position, plain.config(), *image_verifier,
                          *text_verifier, 20);
          }
          jobs[j].position = static_cast<std::int64_t>(i++);
          jobs[j].prior_neighbours = std::move(prior);
        }
        const BatchReport r = job.ingest_job_batch("b" + std::to_string(b), "c" + std::to_string(b),
                                                   std::move(entries), std::move(jobs));
        counts.listed += r.job_neighbours.listed;
        counts.searched += r.job_neighbours.searched;
        counts.verdicts_taken += r.job_neighbours.verdicts_taken;
        counts.verified_by_writer += r.job_neighbours.verified_by_writer;
      }
      CHECK(job.job_under_way());
      const auto got = decisions(job, batches);
      std::size_t differ = 0;
      for (const auto& [key, want] : expected) {
        const JobDecision& d = got.at(key);
        INFO("record " << key);
        CHECK(d.status == want.status);
        CHECK(d.duplicate_of == want.duplicate_of);
        CHECK(d.label_quality.has_value() == want.label_quality.has_value());
        if (d.label_quality && want.label_quality) {
          CHECK(*d.label_quality == Approx(*want.label_quality).margin(1e-5));
        }
        CHECK(d.gain.has_value() == want.gain.has_value());
        if (d.gain && want.gain) CHECK(*d.gain == Approx(*want.gain).margin(1e-5));
        differ += d.status != want.status;
      }
      CHECK(differ == 0);
      // Every embedded record but the exact copies (decided by their hash
      // first) took its list.
      CHECK(counts.listed == static_cast<std::int64_t>(n - 89));
      if (list_k == long_k) CHECK(counts.searched < counts.listed / 20);
      if (list_k == short_k) CHECK(counts.searched > 0);
      WARN("lists of " << list_k << ": " << counts.listed << " listed, " << counts.searched
                       << " searched");
      CHECK(counts.searched <= counts.listed);
      // With verdicts the writer verifies only the candidates of its own
      // chunk's pending records that came after the worker's last verdict.
      if (with_verdicts) {
        CHECK(counts.verdicts_taken > 100);
        CHECK(counts.verified_by_writer < counts.verdicts_taken / 5);
      } else {
        CHECK(counts.verdicts_taken == 0);
        CHECK(counts.verified_by_writer > 100);
      }
      WARN("verdicts taken " << counts.verdicts_taken << ", verified by the writer "
                             << counts.verified_by_writer);
    }
  }
}

TEST_CASE("the writer takes the workers' near-duplicate verdicts as they are", "[ingest][job]") {
  // Verdicts that call every listed candidate a near duplicate: a record whose
  // nearest earlier records pass the candidate gate becomes a near duplicate,
  // though a plain ingest, verifying the pixels, accepts most of them.
  const auto batches = job_batches();
  std::vector<ManifestRecord> records = batches[0];
  const std::size_t n = records.size();
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, small_chunks());
  winnow::test::Pipeline job(db);
  const std::size_t dim = job.embedder().dim();
  std::vector<float> vectors(n * dim);
  std::vector<std::int64_t> positions(n);
  for (std::size_t i = 0; i < n; ++i) {
    job.embedder().embed(records[i], vectors.data() + i * dim);
    positions[i] = static_cast<std::int64_t>(i);
  }
  const std::vector<std::uint8_t> wanted(n, 1);
  const index::PriorNeighbourLists lists =
      index::prior_neighbours(vectors.data(), positions.data(), wanted.data(), n, dim, 60);
  REQUIRE(job.start_job(n));
  std::vector<ManifestEntry> entries = entries_of(records);
  std::vector<JobRecord> jobs(n);
  std::size_t gated = 0;  // records with an earlier record at or above the gate
  std::vector<bool> has_verdicts(n, false);
  for (std::size_t i = 0; i < n; ++i) {
    auto prior = std::make_shared<PriorNeighbours>();
    prior->positions.assign(lists.positions.begin() + i * 60,
                            lists.positions.begin() + (i + 1) * 60);
    prior->similarities.assign(lists.similarities.begin() + i * 60,
                               lists.similarities.begin() + (i + 1) * 60);
    prior->complete = lists.complete[i] != 0;
    for (std::size_t r = 0; r < 60 && prior->positions[r] >= 0 &&
                            prior->similarities[r] >= job.config().min_candidate_similarity;
         ++r) {
      prior->verified_similarities.push_back(1.0);
      prior->verified_thresholds.push_back(0.5);
    }
    has_verdicts[i] = !prior->verified_similarities.empty();
    gated += has_verdicts[i];
    jobs[i].position = static_cast<std::int64_t>(i);
    jobs[i].prior_neighbours = std::move(prior);
  }
  REQUIRE(gated > 20);
  const BatchReport r = job.ingest_job_batch("b", "c", std::move(entries), std::move(jobs));
  CHECK(r.job_neighbours.verdicts_taken > 0);
  CHECK(r.job_neighbours.verified_by_writer < r.job_neighbours.verdicts_taken);

  winnow::test::Pipeline::init(dir.file("plain.db"), small_chunks());
  winnow::test::Pipeline plain(dir.file("plain.db"));
  plain.ingest_batch("b", "c", entries_of(records));
  std::size_t near = 0, near_plain = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto s = job.store().find_by_external_key(records[i].key);
    REQUIRE(s);
    if (s->status == SampleStatus::duplicate_near) {
      ++near;
      INFO("record " << records[i].key);
      CHECK(has_verdicts[i]);  // only a verdict made it one
    }
    near_plain +=
        plain.store().find_by_external_key(records[i].key)->status == SampleStatus::duplicate_near;
  }
  CHECK(near > near_plain + 20);
}

TEST_CASE("a bulk job ends when another process writes the dataset, and needs an empty one",
          "[ingest][job]") {
  const auto batches = job_batches();
  winnow::test::TempDir dir;
  const std::string db = dir.file("data.db");
  winnow::test::Pipeline::init(db, small_chunks());
  winnow::test::Pipeline job(db);
  REQUIRE(job.start_job(10));
  // Lists that name nothing: taken while the job holds, ignored once it ended.
  const auto listed = [](winnow::test::Pipeline& pipeline, const std::string& name,
                         const std::string& checksum, const std::vector<ManifestRecord>& records,
                         std::int64_t first) {
    std::vector<JobRecord> jobs(records.size());
    for (JobRecord& j : jobs) {
      j.position = first++;
      j.prior_neighbours = std::make_shared<PriorNeighbours>();
    }
    return pipeline.ingest_job_batch(name, checksum, entries_of(records), std::move(jobs));
  };
  const std::vector<ManifestRecord> first(batches[0].begin(), batches[0].begin() + 5);
  BatchReport r = listed(job, "b0", "c0", first, 0);
  CHECK(r.job_neighbours.listed == 5);
  // An empty list that is not complete proves nothing: the pipeline searched.
  CHECK(r.job_neighbours.searched == 5);

  {
    winnow::test::Pipeline other(db);
    other.ingest_batch("other", "c-other", entries_of({batches[1][0]}));
  }
  const std::vector<ManifestRecord> second(batches[0].begin() + 5, batches[0].begin() + 10);
  r = listed(job, "b1", "c1", second, 5);
  CHECK(r.job_neighbours.listed == 0);
  CHECK_FALSE(job.job_under_way());
  CHECK(r.counts[SampleStatus::accepted] + r.counts[SampleStatus::label_issue] +
            r.counts[SampleStatus::duplicate_near] + r.counts[SampleStatus::duplicate_exact] ==
        5);

  CHECK_FALSE(job.start_job(10));  // the dataset holds samples now

  // A position outside the job fails the batch with the record named.
  winnow::test::TempDir dir2;
  winnow::test::Pipeline::init(dir2.file("d.db"), small_chunks());
  winnow::test::Pipeline fresh(dir2.file("d.db"));
  REQUIRE(fresh.start_job(3));
  CHECK_THROWS_WITH(listed(fresh, "b", "c", first, 1),
                    Catch::Contains("record 'img-") && Catch::Contains("job position 3"));
  CHECK_FALSE(fresh.job_under_way());  // a failed batch ends the job
}
