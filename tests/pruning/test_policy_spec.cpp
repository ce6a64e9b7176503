#include <catch2/catch.hpp>

#include "winnow/pruning/dynamic_pruner.h"

#include "winnow/error.h"
#include "winnow/pruning/policy_registry.h"
#include "winnow/pruning/policy_spec.h"

using winnow::PolicySpec;

TEST_CASE("policy specs parse names and parameters", "[spec]") {
  const PolicySpec plain = PolicySpec::parse("infobatch");
  CHECK(plain.name == "infobatch");
  CHECK(plain.params.empty());

  const PolicySpec spec =
      PolicySpec::parse(" infobatch-quantile( keep = 0.25:0.5 , percentiles=20:85) ");
  CHECK(spec.name == "infobatch-quantile");
  CHECK(spec.params.at("keep") == "0.25:0.5");
  CHECK(spec.params.at("percentiles") == "20:85");
  CHECK(spec.to_string() == "infobatch-quantile(keep=0.25:0.5,percentiles=20:85)");
  CHECK(PolicySpec::parse(spec.to_string()).to_string() == spec.to_string());
}

TEST_CASE("malformed specs are rejected with the spec quoted", "[spec]") {
  CHECK_THROWS_WITH(PolicySpec::parse("infobatch(r=0.5"), Catch::Contains("infobatch(r=0.5"));
  CHECK_THROWS_WITH(PolicySpec::parse("infobatch(r)"), Catch::Contains("not key=value"));
  CHECK_THROWS_WITH(PolicySpec::parse("infobatch(r=1,r=2)"), Catch::Contains("given twice"));
  CHECK_THROWS_AS(PolicySpec::parse(""), winnow::Error);
  CHECK_THROWS_AS(PolicySpec::parse("info batch"), winnow::Error);
}

TEST_CASE("the registry makes every built-in policy and rejects unknown ones", "[spec]") {
  const auto names = winnow::PolicyRegistry::instance().names();
  for (const char* name : {"full", "infobatch", "infobatch-quantile", "uniform", "ucb",
                           "epsilon-greedy", "seta", "repb"}) {
    CHECK(std::find(names.begin(), names.end(), name) != names.end());
    auto policy = winnow::make_policy(name, 10);
    REQUIRE(policy != nullptr);
    // spec() round-trips through the factory.
    CHECK(winnow::make_policy(policy->spec().to_string(), 10)->spec().to_string() ==
          policy->spec().to_string());
  }
  CHECK_THROWS_WITH(winnow::make_policy("infobach", 10),
                    Catch::Contains("unknown policy 'infobach'") && Catch::Contains("infobatch"));
  CHECK_THROWS_WITH(winnow::make_policy("infobatch(ratio=0.3)", 10),
                    Catch::Contains("unknown key 'ratio'"));
  CHECK_THROWS_WITH(winnow::make_policy("infobatch(r=abc)", 10),
                    Catch::Contains("is not a finite number"));
}

namespace {
// A plugin-style policy: keeps even ids only.
class EvenIdsPolicy final : public winnow::Policy {
 public:
  EvenIdsPolicy(const PolicySpec& spec, std::uint64_t) {
    winnow::ParamReader reader(spec);
    reader.finish();
  }
  PolicySpec spec() const override { return PolicySpec{"test-even-ids", {}}; }
  void plan(const winnow::ScoreTable& scores, winnow::Rng&, winnow::EpochPlan& plan) override {
    plan.ids.clear();
    for (std::uint64_t i = 0; i < scores.size(); i += 2) plan.ids.push_back(i);
  }
  bool needs_scores() const override { return false; }
};
WINNOW_REGISTER_POLICY(EvenIdsPolicy, "test-even-ids", "keeps even ids (test plug-in)");
}  // namespace

TEST_CASE("plug-in policies register by name without touching pruning/", "[spec]") {
  winnow::DynamicPruner pruner(10, 4, "test-even-ids");
  CHECK(pruner.plan().ids == std::vector<std::uint64_t>{0, 2, 4, 6, 8});
  CHECK_THROWS_WITH(winnow::PolicyRegistry::instance().add(
                        "test-even-ids", "again",
                        [](const PolicySpec& s, std::uint64_t n) {
                          return std::unique_ptr<winnow::Policy>(new EvenIdsPolicy(s, n));
                        }),
                    Catch::Contains("already registered"));
}
