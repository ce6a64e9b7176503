"""Sampler: epoch plans, lengths before iteration, set_epoch, steps for schedulers."""
import pytest
import torch
from torch.utils.data import DataLoader

import winnow
from helpers import SquareDataset, skewed_loss, train_epoch


def test_len_matches_ids_served_while_pruning():
    n, epochs = 2000, 8
    s = winnow.Sampler(n, epochs, policy="infobatch", seed=3)
    assert s.policy_spec == "infobatch(delta=0.875,save=0.4)"
    kinds = []
    for epoch in range(epochs):
        s.set_epoch(epoch)
        announced = len(s)
        assert len(s) == announced  # idempotent before iteration
        ids = train_epoch(s)
        assert len(ids) == announced
        assert len(set(ids)) == len(ids) and all(0 <= i < n for i in ids)
        stats = s.history()[-1]
        assert stats["epoch"] == epoch and stats["forward_samples"] == announced
        kinds.append(stats["kind"])
        print(f"epoch {epoch}: {stats['kind']:<9} {announced} ids, mean loss "
              f"{float(skewed_loss(torch.tensor(ids)).mean()):.4f}")
    assert kinds == ["warmup"] + ["pruned"] * 6 + ["annealing"]
    pruned = [h["forward_samples"] for h in s.history() if h["kind"] == "pruned"]
    assert all(p < n for p in pruned), pruned
    totals = s.totals()
    assert totals["epochs"] == epochs
    assert 0.1 < totals["saved_fraction"] < 0.5
    assert totals["forward_samples"] == sum(h["forward_samples"] for h in s.history())


def test_policy_knobs_and_errors():
    assert winnow.Sampler(10, 4, policy="uniform", prune_ratio=0.3, delta=0.5).policy_spec == \
        "uniform(delta=0.5,r=0.3)"
    assert winnow.Sampler(10, 4, policy="full").policy_spec == "full(shuffle=1)"
    assert winnow.Sampler(10, 4, policy="infobatch(r=0.2)").policy_spec.startswith("infobatch(")
    with pytest.raises(ValueError, match="r"):
        winnow.Sampler(10, 4, prune_ratio=1.5)
    with pytest.raises(ValueError, match="nosuch"):
        winnow.Sampler(10, 4, policy="nosuch")
    with pytest.raises(ValueError, match="num_samples"):
        winnow.Sampler(0, 4)
    assert issubclass(winnow.Error, ValueError)


def test_target_saving_is_met_and_reported_per_epoch():
    n, epochs = 5000, 15
    for target in (0.25, 0.4):
        s = winnow.Sampler(n, epochs, target_saving=target, seed=2)
        assert s.policy_spec == f"infobatch(delta=0.875,save={target})"
        for _ in range(epochs):
            train_epoch(s)
        assert abs(s.totals()["saved_fraction"] - target) < 0.02
        per_epoch = [h["saved_fraction"] for h in s.history()]
        assert per_epoch[0] == 0 and per_epoch[-1] == 0 and max(per_epoch) > target
    default = winnow.Sampler(n, epochs, seed=2)
    for _ in range(epochs):
        train_epoch(default)
    assert abs(default.totals()["saved_fraction"] - 0.4) < 0.02
    paper = winnow.Sampler(n, epochs, prune_ratio=0.5, seed=2)
    assert paper.policy_spec == "infobatch(delta=0.875,r=0.5)"
    with pytest.raises(ValueError, match="not both"):
        winnow.Sampler(n, epochs, prune_ratio=0.5, target_saving=0.4)
    with pytest.raises(ValueError, match="save"):
        winnow.Sampler(n, epochs, policy="seta", target_saving=0.4)


def test_a_budget_the_run_is_short_for_is_said():
    import warnings
    with pytest.warns(RuntimeWarning, match=r"4 of the 6 epochs may prune, so each skips 60%"):
        winnow.Sampler(300, 6)
    with pytest.warns(RuntimeWarning, match=r"saves about 27%, not 40%"):
        winnow.Sampler(300, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        winnow.Sampler(300, 15)
        winnow.Sampler(300, 6, prune_ratio=0.5)
        winnow.Sampler(300, 6, target_saving=0.3)


def test_set_epoch_accepts_current_or_next_only():
    s = winnow.Sampler(300, 4, seed=1)
    s.set_epoch(0)
    with pytest.raises(ValueError, match=r"set_epoch\(2\).*serves epoch 0 next"):
        s.set_epoch(2)
    train_epoch(s)
    s.set_epoch(0)  # the epoch just served: accepted, changes nothing
    s.set_epoch(1)
    s.set_epoch(1)
    assert s.epoch == 1
    with pytest.raises(ValueError, match="cannot skip or repeat"):
        s.set_epoch(3)
    train_epoch(s)
    assert s.history()[-1]["epoch"] == 1


def test_len_is_stable_during_iteration():
    s = winnow.Sampler(500, 3, seed=0)
    train_epoch(s)
    n = len(s)
    it = iter(s)
    first = [next(it) for _ in range(10)]
    assert len(s) == n  # the epoch being served, not the one after
    rest = list(it)
    assert len(first) + len(rest) == n


def test_dataloader_len_and_steps(tmp_path):
    n, bs, epochs = 1000, 64, 6
    s = winnow.Sampler(n, epochs, seed=2)
    loader = DataLoader(winnow.IndexedDataset(SquareDataset(n)), batch_size=bs, sampler=s)
    for _ in range(epochs):
        expected = s.steps_per_epoch(bs)
        assert len(loader) == expected
        steps = 0
        for ids, (x, _) in loader:
            s.update(ids, skewed_loss(ids))
            steps += 1
        assert steps == expected
    assert s.steps_per_epoch(bs, drop_last=True) == len(s) // bs


def test_one_cycle_lr_over_the_whole_run_never_overflows():
    n, bs, epochs = 1500, 32, 8
    s = winnow.Sampler(n, epochs, seed=5)
    loader = DataLoader(winnow.IndexedDataset(SquareDataset(n)), batch_size=bs, sampler=s)
    model = torch.nn.Linear(2, 1).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    total = s.total_steps(bs)
    assert total == epochs * -(-n // bs)  # nothing planned yet: the all-data bound
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=total)
    steps = 0
    for epoch in range(epochs):
        s.set_epoch(epoch)
        for ids, (x, _) in loader:
            scaled = x / torch.tensor([n, n * n], dtype=torch.float64)
            per_sample = (model(scaled).squeeze(1) - 0.5) ** 2 + skewed_loss(ids).double()
            opt.zero_grad()
            s.update(ids, per_sample).backward()
            opt.step()
            sched.step()
            steps += 1
    assert steps <= total and s.total_steps(bs) == steps  # exact once the run is over
    assert steps < total  # pruning saved steps


def test_one_cycle_lr_per_epoch_sized_with_len():
    # The reference implementation's defect D2: len() one epoch late overflows this.
    n, bs, epochs = 1200, 50, 6
    s = winnow.Sampler(n, epochs, seed=7)
    loader = DataLoader(winnow.IndexedDataset(SquareDataset(n)), batch_size=bs, sampler=s)
    model = torch.nn.Linear(2, 1).double()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    lengths = []
    for _ in range(epochs):
        sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=len(loader))
        lengths.append(len(loader))
        for ids, (x, _) in loader:
            s.update(ids, skewed_loss(ids))
            opt.step()
            sched.step()
    assert len(set(lengths)) > 1  # the length really changed between epochs


def test_an_epoch_served_without_update_is_said_once():
    """A training loop that never calls update() prunes nothing: the sampler says
    so when the next epoch is planned, once, and says nothing when losses come."""
    import warnings

    import torch

    quiet = winnow.Sampler(200, 4, policy="infobatch", seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any warning fails this half
        for _ in range(3):
            ids = list(quiet)
            for start in range(0, len(ids), 50):
                batch = ids[start:start + 50]
                quiet.update(batch, torch.rand(len(batch)))

    silent = winnow.Sampler(200, 4, policy="infobatch", seed=3)
    list(silent)  # epoch 0 served, no update()
    with pytest.warns(RuntimeWarning, match=r"epoch 0 was served but update\(\) was never called"):
        list(silent)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(silent)  # said once


def test_the_sampler_takes_the_dataset_itself():
    """Given the dataset, the sampler counts its samples: the count cannot
    disagree with what the loader serves."""
    ds = SquareDataset(137)
    sampler = winnow.Sampler(ds, 3, policy="infobatch", seed=1)
    assert sampler.num_samples == 137
    assert sorted(list(sampler)) == list(range(137))  # the first epoch serves every sample
    assert winnow.Sampler(137, 3).num_samples == 137
    with pytest.raises(TypeError, match="the dataset or its number of samples"):
        winnow.Sampler(object(), 3)


def test_a_run_that_saved_nothing_says_why():
    """Two epochs of InfoBatch are a warm-up and an annealing epoch: nothing is
    saved, and saving_note() says why; a longer run saves and says nothing."""
    short = winnow.Sampler(300, 2, policy="infobatch", seed=2)
    for _ in range(2):
        ids = list(short)
        short.update(ids, torch.rand(len(ids)))
    note = short.saving_note()
    assert "epoch 0 warm-up" in note and "epoch 1 annealing" in note and "more epochs" in note
    assert "infobatch(" in note and "bound method" not in note

    long = winnow.Sampler(300, 8, policy="infobatch", seed=2)
    for _ in range(4):
        ids = list(long)
        long.update(ids, torch.rand(len(ids)))
    assert long.totals()["saved_fraction"] > 0
    assert long.saving_note() == ""
