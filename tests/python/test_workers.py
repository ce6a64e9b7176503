"""DataLoader with worker processes, started with fork and with spawn."""
import pytest
import torch
from torch.utils.data import DataLoader

import winnow
from helpers import DictDataset, SquareDataset, skewed_loss


@pytest.mark.parametrize("context", ["spawn", "fork"])
def test_workers_serve_every_planned_id_once_with_its_data(context):
    n, bs, epochs = 900, 32, 5
    s = winnow.Sampler(n, epochs, seed=11)
    loader = DataLoader(winnow.IndexedDataset(SquareDataset(n)), batch_size=bs, sampler=s,
                        num_workers=2, multiprocessing_context=context,
                        persistent_workers=True)
    sizes = []
    for epoch in range(epochs):
        s.set_epoch(epoch)
        announced = len(s)
        assert len(loader) == -(-announced // bs)
        seen = []
        for ids, (x, y) in loader:
            assert ids.dtype == torch.int64
            # the data of each row belongs to its id
            assert torch.equal(x[:, 0], ids.double()) and torch.equal(x[:, 1], ids.double() ** 2)
            assert torch.equal(y, ids % 7)
            s.update(ids, skewed_loss(ids))
            seen.extend(ids.tolist())
        planned = s.pruner.plan_ids().tolist()
        assert seen == planned  # the plan's order, every id once
        assert len(seen) == announced == len(set(seen))
        sizes.append(announced)
    assert min(sizes) < n  # pruning happened
    assert s.history()[-1]["kind"] == "annealing"


def test_dict_items_with_spawn_workers():
    n = 200
    s = winnow.Sampler(n, 2, seed=0)
    loader = DataLoader(winnow.IndexedDataset(DictDataset(n), key="id"), batch_size=50,
                        sampler=s, num_workers=2, multiprocessing_context="spawn")
    seen = []
    for batch in loader:
        assert torch.equal(batch["x"][:, 0], batch["id"].float())
        assert torch.equal(batch["y"], batch["id"] % 3)
        seen.extend(batch["id"].tolist())
    assert sorted(seen) == list(range(n))
