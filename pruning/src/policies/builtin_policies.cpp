#include "builtin_policies.h"

#include "epsilon_greedy_policy.h"
#include "full_policy.h"
#include "infobatch_policy.h"
#include "infobatch_quantile_policy.h"
#include "repb_policy.h"
#include "seta_policy.h"
#include "ucb_policy.h"
#include "uniform_policy.h"
#include "winnow/pruning/policy_registry.h"

namespace winnow {
namespace {

template <typename P>
PolicyFactory factory_of() {
  return [](const PolicySpec& spec, std::uint64_t n) { return std::make_unique<P>(spec, n); };
}

}  // namespace

void register_builtin_policies(PolicyRegistry& registry) {
  registry.add("full", "no pruning: every sample every epoch, weight 1", factory_of<FullPolicy>());
  registry.add("infobatch",
               "InfoBatch: skip below-mean samples with probability r, weight kept ones 1/(1-r)",
               factory_of<InfoBatchPolicy>());
  registry.add("infobatch-quantile",
               "InfoBatch with percentile buckets, each with its keep ratio and weight 1/keep",
               factory_of<InfoBatchQuantilePolicy>());
  registry.add("uniform", "dynamic random subset of infobatch's size (or keep=F), weight N/K",
               factory_of<UniformPolicy>());
  registry.add("seta",
               "SeTa: random subset, loss clusters by k-means, a window sliding easy to hard, "
               "no reweighting",
               factory_of<SetaPolicy>());
  registry.add("repb",
               "RePB-style: infobatch within local windows of observations, weights by inverse "
               "selection frequency",
               factory_of<RepbPolicy>());
  registry.add("ucb", "keep the top samples by EMA loss + c*spread, no reweighting",
               factory_of<UcbPolicy>());
  registry.add("epsilon-greedy", "keep top (1-eps) by loss plus eps random, no reweighting",
               factory_of<EpsilonGreedyPolicy>());
}

}  // namespace winnow
