"""Sampler.update: the weighted loss, autograd, dtypes, errors, the device path."""
import pickle

import numpy as np
import pytest
import torch

import winnow
from helpers import skewed_loss, train_epoch


def pruning_sampler(n=400, **kwargs):
    """A sampler in its first pruned epoch, so weights differ from 1."""
    s = winnow.Sampler(n, 6, seed=4, **kwargs)
    train_epoch(s)  # warm-up epoch records scores
    assert len(s) < n
    return s


def test_weighted_mean_and_gradient():
    s = pruning_sampler(prune_ratio=0.5)
    ids = torch.tensor(s.pruner.plan_ids()[:64])
    weights = torch.from_numpy(s.weights(ids))
    assert weights.max() == 2.0 and weights.min() == 1.0  # 1/(1-r) for kept candidates
    base = torch.rand(64, dtype=torch.float32, requires_grad=True)
    per_sample = base * 3.0
    before = per_sample.detach().clone()
    loss = s.update(ids, per_sample)
    assert loss.dim() == 0
    assert torch.allclose(loss, (before * weights).mean())
    assert torch.equal(per_sample, before)  # the caller's tensor is unchanged
    loss.backward()
    assert torch.allclose(base.grad, 3.0 * weights / 64)
    np.testing.assert_array_equal(s.pruner.scores_of(ids.numpy()), before.numpy())


def test_leaf_tensor_that_requires_grad():
    s = pruning_sampler()
    ids = torch.tensor(s.pruner.plan_ids()[:8])
    leaf = torch.rand(8, requires_grad=True)
    s.update(ids, leaf).backward()  # the reference's in-place multiply fails here (D6)
    assert torch.allclose(leaf.grad, torch.from_numpy(s.weights(ids)) / 8)


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_half_precision_losses(dtype):
    s = pruning_sampler()
    ids = torch.tensor(s.pruner.plan_ids()[:32])
    values = torch.linspace(0.5, 4.0, 32)
    per_sample = values.to(dtype).requires_grad_()
    loss = s.update(ids, per_sample)
    assert loss.dtype == dtype
    expected = (values.to(dtype).float() * torch.from_numpy(s.weights(ids))).mean()
    assert abs(loss.float().item() - expected.item()) < 2e-2 * expected.item()
    loss.backward()
    assert per_sample.grad.dtype == dtype
    # scores are the losses as fp32, whatever the loss dtype
    np.testing.assert_array_equal(s.pruner.scores_of(ids.numpy()), values.to(dtype).float().numpy())


def test_cpu_autocast_bf16():
    s = pruning_sampler()
    ids = torch.tensor(s.pruner.plan_ids()[:16])
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(16, 4), torch.randint(0, 3, (16,))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        logits = model(x)
        assert logits.dtype == torch.bfloat16
        per_sample = torch.nn.functional.cross_entropy(logits, y, reduction="none")
        loss = s.update(ids, per_sample)
    loss.backward()
    assert model.weight.grad is not None and torch.isfinite(model.weight.grad).all()
    expected = (per_sample.detach().float() * torch.from_numpy(s.weights(ids))).mean()
    assert abs(loss.float().item() - expected.item()) < 2e-2 * expected.item()


def test_clear_errors():
    s = pruning_sampler(n=100)
    ids = torch.arange(4)
    with pytest.raises(ValueError, match="already reduced to a scalar"):
        s.update(ids, torch.rand(4).mean())
    with pytest.raises(ValueError, match=r"shape \[B\], got \[4, 2\]"):
        s.update(ids, torch.rand(4, 2))
    with pytest.raises(ValueError, match="4 losses but 3 ids"):
        s.update(torch.arange(3), torch.rand(4))
    with pytest.raises(ValueError, match="integer"):
        s.update(torch.rand(4), torch.rand(4))
    with pytest.raises(ValueError, match="floating-point"):
        s.update(ids, torch.arange(4))
    with pytest.raises(winnow.Error, match="sample id 100 at position 2 is out of range"):
        s.update(torch.tensor([0, 1, 100, 3]), torch.rand(4))
    with pytest.raises(winnow.Error, match="sample id -1 at position 0"):
        s.update(torch.tensor([-1, 1, 2, 3]), torch.rand(4))
    before = s.pruner.scores_of(np.arange(4))
    with pytest.raises(winnow.Error, match="is nan; losses must be finite"):
        s.update(ids, torch.tensor([0.1, 0.2, float("nan"), 0.4]))
    np.testing.assert_array_equal(s.pruner.scores_of(np.arange(4)), before)  # nothing changed


def test_device_tables_path_matches_host_path():
    # The device path (scores and weights as tensors, synced once per plan) on
    # CPU tensors, as the C++ tests do; it must make the same plans.
    host = winnow.Sampler(600, 6, seed=9)
    device = winnow.Sampler(600, 6, seed=9, device_tables=True)
    for _ in range(6):
        a, b = train_epoch(host), train_epoch(device)
        assert a == b
    np.testing.assert_array_equal(host.scores(), device.scores())
    assert host.totals() == device.totals()
    ids = torch.tensor(device.pruner.plan_ids()[:10])
    loss = torch.rand(10, requires_grad=True)
    out = device.update(ids, loss)
    assert torch.allclose(out, (loss * torch.from_numpy(device.weights(ids))).mean())
    with pytest.raises(winnow.Error, match="out of range"):
        device.update(torch.tensor([600]), torch.rand(1))
    clone = pickle.loads(pickle.dumps(device))  # device scores come home first
    np.testing.assert_array_equal(clone.scores(), device.scores())
    assert device.scores()[int(ids[0])] == loss[0].item()


DEVICES = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])


@pytest.mark.parametrize("device_name", DEVICES)
@pytest.mark.parametrize("policy", ["infobatch", "seta", "repb", "ucb", "infobatch(noisy=2)",
                                    "seta(noisy=2)"])
def test_device_tables_give_every_policy_the_host_paths_plans(policy, device_name):
    # The policies whose observe() hook or score EMA a device path could skip:
    # the log replayed at the plan must make the same plans and scores.
    device = torch.device(device_name)
    host = winnow.Sampler(300, 6, policy=policy, seed=4)
    logged = winnow.Sampler(300, 6, policy=policy, seed=4, device_tables=True)
    for epoch in range(6):
        def loss_of(ids, epoch=epoch):
            base = ((ids * 7919 + epoch * 31) % 97).float() / 97
            return torch.where(ids % 10 == 0, base + 3, base)
        a = train_epoch(host, loss_of)
        b = train_epoch(logged, lambda ids: loss_of(ids).to(device))
        assert a == b, f"epoch {epoch}"
    np.testing.assert_array_equal(host.scores(), logged.scores())


def test_device_tables_report_invalid_losses_at_the_next_plan():
    s = winnow.Sampler(100, 4, seed=0, device_tables=True)
    train_epoch(s)
    s.update(torch.arange(3), torch.tensor([1.0, float("inf"), 2.0]))
    with pytest.raises(winnow.Error, match="1 observations reported on cpu"):
        len(s)  # building the next plan pulls the scores
    assert len(s) <= 100  # the error is reported once; planning goes on


def test_ids_above_2_pow_24_are_exact():
    n = 2 ** 25
    s = winnow.Sampler(n, 3, seed=0)
    top = torch.tensor([n - 1, 2 ** 24 + 1, 2 ** 24, 2 ** 24 + 3], dtype=torch.int64)
    losses = torch.tensor([0.25, 0.5, 0.75, 1.5], dtype=torch.float16)
    s.update(top, losses)
    np.testing.assert_array_equal(s.pruner.scores_of(top.numpy()), losses.float().numpy())
    neighbours = np.array([n - 2, 2 ** 24 - 1, 2 ** 24 + 2], dtype=np.int64)
    np.testing.assert_array_equal(s.pruner.scores_of(neighbours), np.ones(3, np.float32))
    with pytest.raises(winnow.Error, match=f"sample id {n} "):
        s.update(torch.tensor([n]), torch.tensor([1.0]))


def test_negative_losses_are_refused_unless_allowed():
    s = pruning_sampler(n=100)
    ids = torch.arange(4)
    before = s.pruner.scores_of(np.arange(4))
    with pytest.raises(winnow.Error, match=r"loss of sample 2 at position 2 is -1e\+30") as caught:
        s.update(ids, torch.tensor([0.1, 0.2, -1e30, 0.4]))
    assert caught.value.kind == "invalid_input"
    np.testing.assert_array_equal(s.pruner.scores_of(np.arange(4)), before)  # nothing changed
    s.update(ids, torch.tensor([0.0, -0.0, 0.5, 1.0]))  # zero is a loss

    signed = winnow.Sampler(100, 4, seed=0, allow_negative_losses=True)
    assert signed.pruner.allow_negative_losses
    signed.update(ids, torch.tensor([-0.5, -2.0, 0.5, 1.0]))
    assert signed.scores()[1] == -2.0
    assert pickle.loads(pickle.dumps(signed)).pruner.allow_negative_losses  # saved with the state


def test_device_tables_skip_negative_losses_and_report_them():
    s = winnow.Sampler(100, 4, seed=0, device_tables=True)
    train_epoch(s)
    s.update(torch.arange(3), torch.tensor([1.0, -1e30, 2.0]))
    with pytest.raises(winnow.Error, match="1 observations reported on cpu"):
        len(s)
    assert s.scores().min() >= 0


def test_batch_loss_mode_blends_the_batch_mean_and_rescales_it():
    s = pruning_sampler()
    ids = torch.tensor(s.pruner.plan_ids()[:32])
    before = s.scores()[ids.numpy()]
    weights = torch.from_numpy(s.weights(ids))
    batch_loss = torch.tensor(2.0, requires_grad=True)
    out = s.update_batch_loss(ids, batch_loss, momentum=0.75)
    assert torch.allclose(out, batch_loss * weights.mean())
    out.backward()
    assert batch_loss.grad is not None
    assert np.allclose(s.scores()[ids.numpy()], 0.75 * before + 0.25 * 2.0)
    with pytest.raises(ValueError, match="scalar"):
        s.update_batch_loss(ids, torch.ones(32))
    with pytest.raises(winnow.Error, match="finite"):
        s.update_batch_loss(ids, torch.tensor(float("nan")))


def test_recent_policies_are_spec_strings():
    for policy in ("seta", "repb", "seta(prune=0.2,groups=4,window=0.75)"):
        s = winnow.Sampler(300, 5, policy=policy, seed=1)
        train_epoch(s)
        train_epoch(s)
        assert s.totals()["forward_samples"] < 600


@pytest.mark.parametrize("policy", ["infobatch", "repb"])
def test_device_tables_drop_what_they_logged_before_a_restore(policy):
    # A mid-epoch resume: what the device logged for the replaced run must not
    # be replayed over the restored scores, whether a sync or a step comes first.
    s = winnow.Sampler(40, 5, policy=policy, seed=3, device_tables=True)
    it = iter(s)
    next(it)
    state = s.state_dict()
    restored = s.scores()
    ids = torch.tensor(s.pruner.plan_ids()[:8])
    s.update(ids, torch.full((8,), 7.0))
    s.load_state_dict(state)
    np.testing.assert_array_equal(s.scores(), restored)
    s.update(ids, torch.full((8,), 9.0))
    s.load_state_dict(state)
    s.update(ids[1:2], torch.tensor([4.0]))
    expected = restored.copy()
    expected[int(ids[1])] = 4.0
    np.testing.assert_array_equal(s.scores(), expected)
