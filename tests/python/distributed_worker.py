"""One rank of the two-rank tests in test_distributed.py (a process of its own).

run_rank() joins a Gloo process group on loopback through a FileStore, runs
every scenario in order (the collectives of all ranks must line up) and
pickles what it saw to <out_dir>/rank<r>.pkl for the test to compare.
"""
import os
import pickle
import warnings

import torch
import torch.distributed as dist
from torch.utils.data import DataLoader

import winnow
from helpers import SquareDataset, skewed_loss

BIG = 2 ** 24 + 64  # a data set with ids that float32 cannot represent exactly


def rank_loss(ids, rank):
    """Differs by rank, so a table that missed another rank's losses shows it."""
    return skewed_loss(ids) * (1.0 + rank)


def train_sharded(rank, n=1001, epochs=4, batch_size=64):
    """Scenario 1: DataLoader over this rank's shard, plan checked every epoch."""
    s = winnow.Sampler(n, epochs, seed=5, verify_plan=True)  # ranks from torch.distributed
    assert (s.world_size, s.rank) == (dist.get_world_size(), rank)
    loader = DataLoader(winnow.IndexedDataset(SquareDataset(n)), batch_size=batch_size, sampler=s)
    epochs_seen = []
    for epoch in range(epochs):
        s.set_epoch(epoch)
        announced, steps, plan_hash = len(s), len(loader), s.plan_hash()
        served = []
        for ids, (x, _) in loader:
            assert torch.equal(x[:, 0], ids.double())
            per_sample = rank_loss(ids, rank).requires_grad_()
            loss = s.update(ids, per_sample)
            expected = (per_sample.detach() * torch.from_numpy(s.weights(ids))).mean()
            assert torch.allclose(loss.detach(), expected), (loss, expected)  # the LOCAL mean
            served.extend(ids.tolist())
        epochs_seen.append({"announced": announced, "steps": steps, "hash": plan_hash,
                            "plan": s.pruner.plan_ids().tolist(), "served": served,
                            "scores": s.scores()})
    return {"epochs": epochs_seen, "history": s.history(), "totals": s.totals()}


def unequal_batches(rank):
    """Scenario 2: batches of different sizes on the two ranks, one of them empty,
    through the host tables and through the device tables (here on the CPU)."""
    host = winnow.Sampler(50, 2, seed=1)
    device = winnow.Sampler(50, 2, seed=1, device_tables=True)
    steps = [([0, 1, 2, 3, 4], [10, 11, 12]), ([], [20, 21])]
    for step in steps:
        ids = torch.tensor(step[rank], dtype=torch.int64)
        losses = ids.float() * 0.5 + 0.25
        a, b = host.update(ids, losses), device.update(ids, losses)
        assert torch.equal(a, b) or (a.isnan() and b.isnan())  # an empty batch's mean is NaN
    return {"host": host.scores(), "device": device.scores()}


def ids_above_2_pow_24(rank):
    """Scenario 3: ids past float32's exact integers, with half-precision losses."""
    s = winnow.Sampler(BIG, 2, seed=0)
    if rank == 0:
        ids = torch.tensor([2 ** 24 + 1, 2 ** 24 + 3, BIG - 1])
        losses = torch.tensor([0.25, 0.5, 0.75], dtype=torch.float16)
    else:
        ids = torch.tensor([2 ** 24, 2 ** 24 + 2])
        losses = torch.tensor([1.5, 2.5], dtype=torch.bfloat16)
    s.update(ids, losses)
    probe = [2 ** 24 - 1, 2 ** 24, 2 ** 24 + 1, 2 ** 24 + 2, 2 ** 24 + 3, 2 ** 24 + 4, BIG - 2,
             BIG - 1]
    return dict(zip(probe, s.pruner.scores_of(torch.tensor(probe).numpy()).tolist()))


def whole_plan_on_every_rank(rank, world_size, n=300, epochs=3, batch_size=32):
    """Scenario 4: shard=False, batches split across ranks as accelerate does."""
    s = winnow.Sampler(n, epochs, seed=2, shard=False)
    hashes = []
    for _ in range(epochs):
        hashes.append(s.plan_hash())  # the coming epoch's plan
        plan = list(s)
        batches = [plan[i:i + batch_size] for i in range(0, len(plan), batch_size)]
        if len(batches) % world_size:  # accelerate's even_batches: same count on every rank
            batches += batches[:world_size - len(batches) % world_size]
        for batch in batches[rank::world_size]:
            ids = torch.tensor(batch)
            s.update(ids, rank_loss(ids, rank))
    return {"hashes": hashes, "scores": s.scores(), "totals": s.totals()}


def batch_loss_mode(rank, n=400, epochs=3, batch_size=25):
    """Scenario 7: batch-loss-score mode (no per-sample losses), each rank's
    batch mean blended into its own samples' scores on every rank."""
    s = winnow.Sampler(n, epochs, seed=3)
    seen = []
    for epoch in range(epochs):
        s.set_epoch(epoch)
        shard = list(s)
        for start in range(0, len(shard), batch_size):
            ids = torch.tensor(shard[start:start + batch_size])
            batch_loss = rank_loss(ids, rank).mean()
            out = s.update_batch_loss(ids, batch_loss)
            expected = float(batch_loss) * float(s.weights(ids).mean())
            assert abs(float(out) - expected) <= 1e-6 * max(1.0, abs(expected)), (out, expected)
            seen.append((ids.tolist(), float(batch_loss)))
    return {"scores": s.scores(), "history": s.history(), "seen": seen}


def different_seeds_are_caught(rank):
    """Scenario 5: verify_plan raises on every rank when the plans differ."""
    s = winnow.Sampler(100, 3, seed=rank, verify_plan=True)
    try:
        iter(s)
    except RuntimeError as error:
        return str(error)
    return None


def built_too_early_warns(early):
    """Scenario 6: a sampler built before init_process_group warns at its first epoch."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        iter(early)
    return [str(w.message) for w in caught]


def run_rank(rank, world_size, init_file, out_dir):
    torch.set_num_threads(1)
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    early = winnow.Sampler(10, 2)  # before the group: a single-process sampler
    dist.init_process_group("gloo", init_method=f"file://{init_file}", world_size=world_size,
                            rank=rank)
    try:
        result = {
            "early": built_too_early_warns(early),
            "sharded": train_sharded(rank),
            "unequal": unequal_batches(rank),
            "big": ids_above_2_pow_24(rank),
            "whole_plan": whole_plan_on_every_rank(rank, world_size),
            "mismatch": different_seeds_are_caught(rank),
            "batch_loss": batch_loss_mode(rank),
        }
        with open(os.path.join(out_dir, f"rank{rank}.pkl"), "wb") as f:
            pickle.dump(result, f)
        # No rank closes its sockets while a peer may still be in its last
        # collective ("Connection closed by peer").
        dist.barrier()
    finally:
        dist.destroy_process_group()
