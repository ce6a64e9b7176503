#include <iostream>

#include "winnow/torch/plan_sampler.h"

int main() {
  auto pruner = std::make_shared<winnow::DynamicPruner>(100, 3, "infobatch");
  winnow::PlanSampler sampler(pruner);
  sampler.reset();
  std::size_t samples = 0;
  std::size_t batches = 0;
  while (auto batch = sampler.next(32)) {
    samples += batch->size();
    ++batches;
  }
  std::cout << "served " << samples << " samples in " << batches << " batches\n";
  return 0;
}
