#include <catch2/catch.hpp>

#include <map>
#include <optional>
#include <vector>

#include "store_test_support.h"
#include "winnow/error.h"
#include "winnow/store/metadata_store.h"
#include "winnow/store/sample_history.h"
#include "winnow/store/transaction.h"

using namespace winnow;
using namespace winnow::store;
using winnow::test::make_sample;
using winnow::test::TempDir;

namespace {

// One write transaction of curation: `write`, then the revision raised last,
// as Dataset::next_revision does.
template <typename Write>
std::int64_t revision_of(MetadataStore& store, Write write) {
  Transaction tx(store.database());
  write();
  SampleHistory history(store.database());
  const std::int64_t next = history.revision() + 1;
  store.set_meta(kRevisionKey, std::to_string(next));
  tx.commit();
  return next;
}

std::map<std::int64_t, SampleState> states_at(SampleHistory& history, std::int64_t revision) {
  std::map<std::int64_t, SampleState> states;
  history.for_each_at(revision, [&](const SampleState& s) { states[s.sample_id] = s; });
  return states;
}

}  // namespace

TEST_CASE("sample history: the dataset as it was at each revision, and what changed",
          "[store][history]") {
  TempDir dir;
  MetadataStore store(dir.file("history.db"));
  SampleHistory history(store.database());
  CHECK(history.revision() == 0);

  std::vector<std::int64_t> ids;
  const std::int64_t r1 = revision_of(store, [&] {
    for (int i = 0; i < 3; ++i) ids.push_back(store.insert_sample(make_sample(i)));
  });
  const std::int64_t r2 = revision_of(store, [&] {
    store.relabel(ids[0], 7, "consensus label 7 replaces 0");
    store.update_status(ids[1], {SampleStatus::label_issue, std::nullopt, "doubtful", ""});
    store.set_label_qualities({{ids[2], 0.5}});  // no new state: quality is not history
    ids.push_back(store.insert_sample(make_sample(3)));
  });
  const std::int64_t r3 = revision_of(store, [&] {
    store.update_status(ids[2], {SampleStatus::duplicate_near, ids[3], "a better copy", ""});
  });
  CHECK(history.revision() == r3);

  const auto at1 = states_at(history, r1);
  REQUIRE(at1.size() == 3);
  CHECK(at1.at(ids[0]).label == 0);
  CHECK(at1.at(ids[1]).status == SampleStatus::accepted);
  const auto at2 = states_at(history, r2);
  REQUIRE(at2.size() == 4);
  CHECK(at2.at(ids[0]).label == 7);
  CHECK(at2.at(ids[0]).revision == r2);
  CHECK(history.reason_of(at2.at(ids[0])) == "consensus label 7 replaces 0");
  CHECK(at2.at(ids[1]).status == SampleStatus::label_issue);
  CHECK(history.reason_of(at2.at(ids[1])) == "doubtful");
  CHECK(at2.at(ids[2]).revision == r1);  // unchanged by the quality
  CHECK(history.reason_of(at2.at(ids[2])) == "new content");
  const auto at3 = states_at(history, r3);
  CHECK(at3.at(ids[2]).status == SampleStatus::duplicate_near);
  CHECK(at3.at(ids[2]).duplicate_of == ids[3]);
  CHECK(states_at(history, 0).empty());

  // Changes from r1 to r3: three samples, one of them new.
  std::map<std::int64_t, std::pair<std::optional<SampleState>, SampleState>> changed;
  history.for_each_changed(r1, r3, [&](const auto& before, const SampleState& after) {
    changed.emplace(after.sample_id, std::make_pair(before, after));
  });
  REQUIRE(changed.size() == 4);
  CHECK_FALSE(changed.at(ids[3]).first.has_value());
  CHECK(changed.at(ids[0]).first->label == 0);
  CHECK(changed.at(ids[0]).second.label == 7);
  CHECK(changed.at(ids[2]).first->status == SampleStatus::accepted);
  CHECK(changed.at(ids[2]).second.status == SampleStatus::duplicate_near);
  std::size_t later = 0;
  history.for_each_changed(r2, r3, [&](const auto&, const SampleState&) { ++later; });
  CHECK(later == 1);
  CHECK_THROWS_WITH(history.for_each_changed(r3, r1, [](const auto&, const SampleState&) {}),
                    Catch::Contains("the first must come before the second"));

  store.set_meta(kRevisionKey, "x12");
  CHECK_THROWS_WITH(history.revision(), Catch::Contains("not a revision number: 'x12'"));
}

TEST_CASE("sample history: which samples a person had decided by a revision", "[store][history]") {
  TempDir dir;
  MetadataStore store(dir.file("reviewed.db"));
  SampleHistory history(store.database());
  std::vector<std::int64_t> ids;
  const std::int64_t r1 = revision_of(store, [&] {
    for (int i = 0; i < 4; ++i) ids.push_back(store.insert_sample(make_sample(i)));
    store.update_status(ids[1], {SampleStatus::label_issue, std::nullopt, "doubtful", ""});
  });
  const std::int64_t r2 = revision_of(store, [&] {
    ReviewRecord keep{ids[1], Verdict::keep, std::nullopt, "ana", "", ""};
    store.record_review(keep, {SampleStatus::accepted, std::nullopt, "a person kept it", ""});
  });
  const std::int64_t r3 = revision_of(store, [&] {
    ReviewRecord relabel{ids[3], Verdict::relabel, 5, "bo", "", ""};
    store.record_review(relabel, {SampleStatus::accepted, std::nullopt, "relabelled", ""});
    store.relabel(ids[0], 9, "a consensus is no person's verdict");
  });
  CHECK(history.reviewed_at(r1).empty());
  CHECK(history.reviewed_at(r2) == std::vector<std::int64_t>{ids[1]});
  CHECK(history.reviewed_at(r3) == std::vector<std::int64_t>{ids[1], ids[3]});
  CHECK(history.reviewed_at(r3 + 5) == history.reviewed_at(r3));
}
