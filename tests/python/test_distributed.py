"""Data-parallel pruning: two ranks on loopback (Gloo), plus in-process sharding checks.

The two-rank scenarios run once, in two forked processes (distributed_worker.py);
each test checks one property of what both ranks saw.
"""
import pickle

import numpy as np
import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import winnow
from distributed_worker import BIG, rank_loss, run_rank
from helpers import train_epoch

WORLD = 2

pytestmark = pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(),
                                reason="torch.distributed with Gloo is not available")


@pytest.fixture(scope="module")
def ranks(tmp_path_factory):
    """What each of the two ranks saw, as a list indexed by rank."""
    folder = tmp_path_factory.mktemp("ddp")
    # fork: the ranks inherit the imported torch (spawn re-imports it, 5-10 s
    # on a busy 2-core machine); no process group exists before the fork.
    mp.start_processes(run_rank, args=(WORLD, str(folder / "init"), str(folder)), nprocs=WORLD,
                       join=True, start_method="fork")
    out = []
    for rank in range(WORLD):
        with open(folder / f"rank{rank}.pkl", "rb") as f:
            out.append(pickle.load(f))
    return out


def test_ranks_build_identical_plans(ranks):
    a, b = (r["sharded"]["epochs"] for r in ranks)
    assert [e["hash"] for e in a] == [e["hash"] for e in b]
    assert len({e["hash"] for e in a}) == len(a)  # a new plan every epoch
    assert [e["plan"] for e in a] == [e["plan"] for e in b]
    assert len(a[1]["plan"]) < 1001  # epoch 1 is pruned


def test_shards_are_disjoint_equal_and_cover_the_plan(ranks):
    a, b = (r["sharded"]["epochs"] for r in ranks)
    odd_plans = 0
    for ea, eb in zip(a, b):
        plan = ea["plan"]
        padding = -len(plan) % WORLD
        assert ea["announced"] == eb["announced"] == (len(plan) + padding) // WORLD
        assert ea["steps"] == eb["steps"] == -(-ea["announced"] // 64)
        # rank 0 serves the first half of the plan, rank 1 the rest, wrapped around
        assert ea["served"] + eb["served"] == plan + plan[:padding]
        assert set(ea["served"]) & set(eb["served"]) == set(plan[:padding])
        odd_plans += padding
    assert odd_plans > 0  # the wrap-around remainder was exercised


def test_score_tables_are_identical_and_hold_every_ranks_losses(ranks):
    a, b = (r["sharded"]["epochs"] for r in ranks)
    for ea, eb in zip(a, b):
        np.testing.assert_array_equal(ea["scores"], eb["scores"])
    last = a[-1]
    table = last["scores"]
    padding = set(last["plan"][:-len(last["plan"]) % WORLD])  # trained twice
    for rank, served in enumerate((a[-1]["served"], b[-1]["served"])):
        ids = torch.tensor([i for i in served if i not in padding])
        np.testing.assert_array_equal(table[ids.numpy()], rank_loss(ids, rank).numpy())
    assert ranks[0]["sharded"]["history"] == ranks[1]["sharded"]["history"]
    totals = ranks[0]["sharded"]["totals"]
    assert 0.05 < totals["saved_fraction"] < 0.5


def test_unequal_last_batches(ranks):
    a, b = ranks[0]["unequal"]["host"], ranks[1]["unequal"]["host"]
    np.testing.assert_array_equal(a, b)
    for r in ranks:
        np.testing.assert_array_equal(r["unequal"]["device"], a)  # the device-table path
    for i in [0, 1, 2, 3, 4, 10, 11, 12, 20, 21]:
        assert a[i] == i * 0.5 + 0.25
    assert a[5] == 1.0 and a[13] == 1.0  # untouched: the initial score


def test_ids_above_2_pow_24_are_exact_on_every_rank(ranks):
    expected = {2 ** 24 - 1: 1.0, 2 ** 24: 1.5, 2 ** 24 + 1: 0.25, 2 ** 24 + 2: 2.5,
                2 ** 24 + 3: 0.5, 2 ** 24 + 4: 1.0, BIG - 2: 1.0, BIG - 1: 0.75}
    assert ranks[0]["big"] == expected
    assert ranks[1]["big"] == expected


def test_whole_plan_mode_keeps_tables_in_step(ranks):
    a, b = ranks[0]["whole_plan"], ranks[1]["whole_plan"]
    assert a["hashes"] == b["hashes"]
    np.testing.assert_array_equal(a["scores"], b["scores"])
    assert a["totals"] == b["totals"] and a["totals"]["saved_fraction"] > 0


def test_batch_loss_mode_keeps_every_ranks_tables_equal(ranks):
    a, b = ranks[0]["batch_loss"], ranks[1]["batch_loss"]
    np.testing.assert_array_equal(a["scores"], b["scores"])
    assert a["history"] == b["history"] and len(a["history"]) == 3
    # Replayed on one host table in step order (both ranks' batches of a step
    # together, as the gather gives them), the scores are the same.
    replay = winnow.Sampler(400, 3, seed=3)
    for (ids_a, loss_a), (ids_b, loss_b) in zip(a["seen"], b["seen"]):
        ids = np.array(ids_a + ids_b, dtype=np.int64)
        losses = np.array([loss_a] * len(ids_a) + [loss_b] * len(ids_b), dtype=np.float32)
        replay.pruner.update_batch_loss(ids, losses, 0.9)
    np.testing.assert_allclose(replay.pruner.scores(), a["scores"], rtol=1e-6)
    # Both ranks' batches reached the table: a sample seen by rank 1 only moved.
    only_b = set(i for ids, _ in b["seen"] for i in ids) - set(i for ids, _ in a["seen"] for i in ids)
    assert only_b and all(a["scores"][i] != 1.0 for i in only_b)


def test_verify_plan_raises_on_every_rank(ranks):
    for r in ranks:
        assert r["mismatch"] is not None
        assert "ranks built different plans for epoch 0" in r["mismatch"]


def test_a_sampler_built_before_the_group_warns(ranks):
    for r in ranks:
        assert len(r["early"]) == 1 and "built as a single-process one" in r["early"][0]


# --- in one process: sharding without communication ---------------------------------

def test_shards_of_explicit_ranks():
    n, world = 1003, 3
    samplers = [winnow.Sampler(n, 4, seed=9, world_size=world, rank=r) for r in range(world)]
    assert len({s.plan_hash() for s in samplers}) == 1
    shards = [list(s) for s in samplers]
    plan = samplers[0].pruner.plan_ids().tolist()
    assert sorted(plan) == list(range(n))
    padding = -n % world
    assert [len(s) for s in shards] == [(n + padding) // world] * world
    assert sum(shards, []) == plan + plan[:padding]
    assert samplers[1].steps_per_epoch(100) == -(-len(shards[1]) // 100)
    with pytest.raises(RuntimeError, match="torch.distributed is not initialized"):
        samplers[0].update(torch.tensor([1, 2]), torch.rand(2))
    with pytest.raises(ValueError, match="out of range for world_size 3"):
        winnow.Sampler(n, 4, world_size=3, rank=3)
    with pytest.raises(ValueError, match="both world_size and rank"):
        winnow.Sampler(n, 4, world_size=3)


def test_distributed_state_dict_and_pickle_keep_the_rank():
    s = winnow.Sampler(500, 3, seed=1, world_size=2, rank=1)
    it = iter(s)
    head = [next(it) for _ in range(40)]
    state = s.state_dict()
    clone = pickle.loads(pickle.dumps(s))
    assert (clone.world_size, clone.rank) == (2, 1)
    rest = list(it)
    assert list(clone) == rest and len(head) + len(rest) == 250
    resumed = winnow.Sampler(500, 3, world_size=2, rank=1)
    resumed.load_state_dict(state)
    assert list(resumed) == rest
    with pytest.raises(ValueError, match="saved by rank 1 of 2, this sampler serves rank 0 of 2"):
        winnow.Sampler(500, 3, world_size=2, rank=0).load_state_dict(state)
    single = winnow.Sampler(500, 3)
    train_epoch(single)
    assert single.world_size == 1 and single.rank == 0
