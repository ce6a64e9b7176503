#include <iostream>

#include "winnow/pruning/dynamic_pruner.h"

int main() {
  winnow::DynamicPruner pruner(1000, 10, "infobatch", 1);
  std::vector<std::uint64_t> ids;
  std::vector<float> losses;
  while (auto batch = pruner.next_batch(100)) {
    ids.assign(batch->ids, batch->ids + batch->size);
    losses.clear();
    for (auto id : ids) losses.push_back(static_cast<float>(id % 10));
    pruner.update(ids.data(), losses.data(), ids.size());
  }
  const auto& plan = pruner.begin_epoch();
  std::cout << "planned " << plan.size() << " of 1000 samples\n";
  return plan.size() < 1000 ? 0 : 1;
}
