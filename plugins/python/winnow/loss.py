"""The loss step of dynamic pruning: record each sample's raw loss as its score
and return mean(w_i * l_i) with the current plan's weights.

It behaves as the C++ helper winnow::PrunedLoss (plugins/torch/src/pruned_loss.cpp):

- it never modifies the caller's tensor and keeps autograd intact; fp16 and
  bf16 losses are fine (scores are kept in fp32);
- on the CPU it updates the core's host score table at once (bad ids,
  non-finite losses or negative ones, unless the core allows them, raise there
  and change nothing);
- on another device it logs each step's ids and losses as device tensors (no
  device-to-host synchronisation) and keeps the plan's weights there. The log
  comes to the host once per epoch, just before the next plan is built (the
  core's score-sync hook), and is replayed through the core's update in step
  order, so every policy (its score EMA, RePB's windows, the noise-aware
  suspects) sees exactly what the CPU path shows it. Invalid input found on
  the device is skipped and reported as an error at that epoch boundary; ids
  given on the CPU are checked at once. The log takes 13 bytes of device
  memory per observation of the epoch.

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
    """The plan's weights on `device` and the epoch's observation log (see the
    module notes)."""

    def __init__(self, device):
        self.device = torch.device(device)
        self.weights = None   # [N] float32
        self.log = []         # per step: (ids int64 as given, losses float32)
        self.generation = None

    def refresh(self, core):
        """Uploads the current plan's weights (once per plan). A log still
        held belongs to a run the pruner was restored over (a sync empties it
        before every plan), so it is dropped."""
        self.log = []
        self.weights = torch.from_numpy(core.all_weights()).to(self.device)
        self.generation = core.plan_generation

    def pull(self, core):
        """The score-sync hook: brings the log to the host (one transfer) and
        replays it through core.update, step by step; skips and reports the
        observations the CPU path would have refused."""
        if not self.log:
            return
        if self.generation != core.plan_generation:
            # Restored from a saved state since this was recorded: the log
            # belongs to the replaced run and must not touch the restored scores.
            self.log = []
            return
        log, self.log = self.log, []
        sizes = [ids.shape[0] for ids, _ in log]
        ids = torch.cat([entry[0] for entry in log]).cpu().numpy()
        losses = torch.cat([entry[1] for entry in log]).cpu().numpy()
        valid = (ids >= 0) & (ids < core.num_samples) & np.isfinite(losses)
        if not core.allow_negative_losses:
            valid &= losses >= 0
        bad = int(valid.size - np.count_nonzero(valid))
        offset = 0
        for size in sizes:
            keep = valid[offset:offset + size]
            if keep.any():
                core.update(np.ascontiguousarray(ids[offset:offset + size][keep]),
                            np.ascontiguousarray(losses[offset:offset + size][keep]))
            offset += size
        if bad > 0:
            raise Error(f"update: {bad} observations reported on {self.device} since the last "
                        f"plan had an id out of range or a non-finite or negative loss; they "
                        f"were skipped")

    def update(self, core, loss, ids):
        """Records this batch's losses; returns its weighted mean."""
        return self.weighted_mean(core, loss, self.record(core, ids, loss.detach()))

    def record(self, core, ids, values):
        """Logs `values` as observations of `ids` (checked at the replay, so no
        step synchronises); returns the ids on the device, clamped into range."""
        given, id_device = self.device_ids(core, ids)
        # A copy: the caller may reuse its buffer before the replay.
        self.log.append((given, values.to(self.device, torch.float32, copy=True)))
        return id_device

    def weighted_mean(self, core, loss, id_device):
        """mean(w_i * l_i) with the current plan's weights of the (device) ids."""
        if self.generation != core.plan_generation:
            self.refresh(core)
        weights = self.weights.index_select(0, id_device)
        return (loss * weights.to(loss.dtype)).mean()

    def device_ids(self, core, ids):
        """Ids on the device: as given, and clamped into range for lookups.
        Ids given on the CPU are checked at once (the same tensor twice)."""
        if self.generation != core.plan_generation:
            self.refresh(core)
        if isinstance(ids, torch.Tensor) and ids.device.type != "cpu":
            # Checking device ids here would synchronise: the replay skips the
            # bad ones and reports them at the next plan.
            given = ids.to(self.device, torch.int64)
            return given, given.clamp(0, core.num_samples - 1)
        checked = core_checked_ids(core, host_ids(ids))
        id_device = torch.from_numpy(checked).to(self.device, non_blocking=True)
        return id_device, id_device


def core_checked_ids(core, ids):
    """Raises winnow.Error for the first id out of range, as the host path does."""
    if ids.size:
        bad = np.flatnonzero((ids < 0) | (ids >= core.num_samples))
        if bad.size:
            i = int(bad[0])
            raise Error(f"update: sample id {int(ids[i])} at position {i} is out of range (the "
                        f"data set has {core.num_samples} samples)")
    return ids.astype(np.int64, copy=False)
