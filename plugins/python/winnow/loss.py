"""The loss step of dynamic pruning: record each sample's raw loss as its score
and return mean(w_i * l_i) with the current plan's weights.

It behaves as the C++ helper winnow::PrunedLoss (plugins/torch/src/pruned_loss.cpp):

- it never modifies the caller's tensor and keeps autograd intact; fp16 and
  bf16 losses are fine (scores are kept in fp32);
- on the CPU it updates the core's host score table at once (bad ids,
  non-finite losses or negative ones, unless the core allows them, raise there
  and change nothing);
- on another device it keeps scores and weights as device tensors: each step is
  a gather and a scatter on the device, with no device-to-host synchronisation.
  Scores come to the host once per epoch, just before the next plan is built
  (the core's score-sync hook). Invalid input found on the device is skipped and
  reported as an error at that epoch boundary; ids given on the CPU are checked
  at once.

In a distributed run (winnow/distributed.py) the same two paths record every
rank's gathered observations and weight this rank's batch.
"""

import numpy as np
import torch

from ._winnow import Error


def check_inputs(loss, ids):
    """Checks shapes and types as PrunedLoss does; returns ids as a tensor or array."""
    if not isinstance(loss, torch.Tensor):
        raise TypeError(f"update: the loss must be a torch.Tensor, got {type(loss).__name__}")
    if loss.dim() == 0:
        raise ValueError("update: the loss is already reduced to a scalar; pass the per-sample "
                         "loss (reduction='none'), shape [B]")
    if loss.dim() != 1:
        raise ValueError(f"update: the per-sample loss must have shape [B], got {list(loss.shape)}")
    if not loss.is_floating_point():
        raise ValueError(f"update: the loss must be a floating-point tensor, got {loss.dtype}")
    if isinstance(ids, torch.Tensor):
        if ids.dim() != 1 or ids.is_floating_point() or ids.is_complex() or ids.dtype == torch.bool:
            raise ValueError(f"update: ids must be a 1-D integer tensor, got {ids.dtype} of shape "
                             f"{list(ids.shape)}")
        count = ids.shape[0]
    else:
        ids = np.asarray(ids)
        if ids.ndim != 1 or ids.dtype.kind not in "iu":
            if ids.ndim == 1 and ids.size == 0:
                ids = ids.astype(np.int64)
            else:
                raise ValueError(f"update: ids must be a 1-D integer array, got {ids.dtype} of "
                                 f"shape {list(ids.shape)}")
        count = ids.shape[0]
    if count != loss.shape[0]:
        raise ValueError(f"update: {loss.shape[0]} losses but {count} ids; each sample needs its id")
    return ids


def host_ids(ids):
    """Ids as a contiguous int64 numpy array on the host (range checked by the core)."""
    if isinstance(ids, torch.Tensor):
        return ids.detach().to("cpu", torch.int64).contiguous().numpy()
    return np.ascontiguousarray(ids, dtype=np.int64) if ids.dtype != np.uint64 else ids


def host_update(core, loss, ids):
    """The CPU path: scores into the core's host table, weights back as a tensor."""
    loss_host = loss.detach().to("cpu", torch.float32).contiguous().numpy()
    weights = core.weighted_update(host_ids(ids), loss_host)
    return (loss * torch.from_numpy(weights).to(loss.device, loss.dtype)).mean()


def host_update_gathered(core, loss, ids, all_ids, all_losses):
    """The CPU path of a distributed step: records every rank's observations
    (`all_ids`, `all_losses`, gathered), weights this rank's batch."""
    core.update(host_ids(all_ids), all_losses.to("cpu", torch.float32).contiguous().numpy())
    weights = core.weights(host_ids(ids))
    return (loss * torch.from_numpy(weights).to(loss.device, loss.dtype)).mean()


class DeviceTables:
    """Scores and weights kept as tensors on `device` (see the module notes)."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.scores = None    # [N] float32
        self.weights = None   # [N] float32
        self.invalid = None   # [] int64: invalid observations since the last pull
        self.generation = None

    def refresh(self, core):
        """Uploads the host scores and the current plan's weights (once per plan)."""
        self.scores = torch.from_numpy(core.scores()).to(self.device)
        self.weights = torch.from_numpy(core.all_weights()).to(self.device)
        if self.invalid is None:
            self.invalid = torch.zeros((), dtype=torch.int64, device=self.device)
        self.generation = core.plan_generation

    def pull(self, core):
        """The score-sync hook: brings the device scores to the host (one transfer)."""
        if self.scores is None:
            return
        core.assign_scores(self.scores.to("cpu").contiguous().numpy())
        bad = int(self.invalid.item())
        if bad > 0:
            self.invalid.zero_()
            raise Error(f"update: {bad} observations reported on {self.device} since the last "
                        f"plan had an id out of range or a non-finite or negative loss; they "
                        f"were skipped")

    def update(self, core, loss, ids):
        """Records this batch's losses; returns its weighted mean."""
        return self.weighted_mean(core, loss, self.record(core, ids, loss.detach()))

    def record(self, core, ids, values):
        """Writes `values` as the scores of `ids`; returns the ids on the device."""
        id_device, valid = self.device_ids(core, ids)
        values = values.to(self.device, torch.float32)
        valid = valid.logical_and(torch.isfinite(values))
        if not core.allow_negative_losses:
            valid = valid.logical_and(values.ge(0))
        self.invalid.add_(valid.logical_not().sum())
        old = self.scores.index_select(0, id_device)
        self.scores.index_put_((id_device,), torch.where(valid, values, old))
        return id_device

    def weighted_mean(self, core, loss, id_device):
        """mean(w_i * l_i) with the current plan's weights of the (device) ids."""
        if self.generation != core.plan_generation:
            self.refresh(core)
        weights = self.weights.index_select(0, id_device)
        return (loss * weights.to(loss.dtype)).mean()

    def device_ids(self, core, ids):
        """Ids as a device tensor and the mask of the valid ones."""
        if self.generation != core.plan_generation:
            self.refresh(core)
        n = core.num_samples
        if isinstance(ids, torch.Tensor) and ids.device.type != "cpu":
            # Checking device ids here would synchronise: clamp them, skip the bad
            # ones and count them for the report at the next plan.
            raw = ids.to(self.device, torch.int64)
            return raw.clamp(0, n - 1), raw.ge(0).logical_and(raw.le(n - 1))
        checked = core_checked_ids(core, host_ids(ids))
        id_device = torch.from_numpy(checked).to(self.device, non_blocking=True)
        return id_device, torch.ones(id_device.shape, dtype=torch.bool, device=self.device)


def core_checked_ids(core, ids):
    """Raises winnow.Error for the first id out of range, as the host path does."""
    if ids.size:
        bad = np.flatnonzero((ids < 0) | (ids >= core.num_samples))
        if bad.size:
            i = int(bad[0])
            raise Error(f"update: sample id {int(ids[i])} at position {i} is out of range (the "
                        f"data set has {core.num_samples} samples)")
    return ids.astype(np.int64, copy=False)
