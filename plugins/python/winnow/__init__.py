"""winnow: dynamic data pruning (InfoBatch and friends) for PyTorch training loops.

    import winnow
    sampler = winnow.Sampler(len(dataset), num_epochs, policy="infobatch")
    loader = DataLoader(winnow.IndexedDataset(dataset), batch_size=128, sampler=sampler)
    for epoch in range(num_epochs):
        for ids, (x, y) in loader:
            per_sample = F.cross_entropy(model(x), y, reduction="none")
            loss = sampler.update(ids, per_sample)   # records scores, weighted mean
            loss.backward(); ...

Under torch.distributed (DDP), build the sampler after init_process_group():
each rank then iterates its shard of the one plan all ranks build, and
update() keeps every rank's scores identical (winnow/distributed.py).

The pruning itself (scores, policies, epoch plans, statistics, save format) is
winnow's C++ core, reached through the `_winnow` extension; this package is
the thin torch layer over it.
"""

from ._winnow import DynamicPruner, Error, __version__, policy_names
from .curated import CuratedDataset
from .data import IndexedDataset
from .sampler import Sampler, policy_spec
from .training import TrainingRecord

Error.__module__ = "winnow"  # shown as winnow.Error; a ValueError

__all__ = ["CuratedDataset", "DynamicPruner", "Error", "IndexedDataset", "Sampler",
           "TrainingRecord", "policy_names", "policy_spec"]
