"""Sampler: a torch.utils.data.Sampler serving winnow's epoch plans."""

import math
import warnings
import weakref

import numpy as np

import torch.utils.data

from ._winnow import DynamicPruner
from .distributed import ScoreSync, group_size_and_rank, initialized, resolve_ranks
from .loss import DeviceTables, check_inputs, host_ids, host_update, host_update_gathered

_FORMAT = "winnow.Sampler/1"


def policy_spec(policy="infobatch", prune_ratio=None, delta=0.875, target_saving=None):
    """The core's spec string for a policy name and the common knobs.

    ``target_saving`` is the saving budget of infobatch and uniform: the share
    of the whole run's forward samples to skip (infobatch's default is 0.4).
    ``prune_ratio`` is ``r`` for infobatch and uniform (the share of
    below-mean samples skipped, not a share of the data set; uniform's default
    0.5) and the hard-pruned share for ucb and epsilon-greedy (0.5). A policy
    given with parameters, e.g. ``"infobatch(r=0.3,delta=0.9)"``, and
    ``"full"`` are used as written.
    """
    if prune_ratio is not None and target_saving is not None:
        raise ValueError("give prune_ratio (a fixed ratio) or target_saving (a budget), not both")
    if "(" in policy or policy == "full":
        if prune_ratio is not None or target_saving is not None:
            raise ValueError(f"policy {policy!r} is used as written; put r= or save= in it "
                             f"instead of prune_ratio or target_saving")
        return policy
    if target_saving is not None:
        return f"{policy}(save={target_saving!r},delta={delta!r})"
    if policy in ("infobatch", "uniform", "repb"):
        if prune_ratio is None and policy == "infobatch":
            return f"{policy}(delta={delta!r})"
        return f"{policy}(r={0.5 if prune_ratio is None else prune_ratio!r},delta={delta!r})"
    if policy in ("ucb", "epsilon-greedy"):
        return f"{policy}(prune={0.5 if prune_ratio is None else prune_ratio!r},delta={delta!r})"
    if prune_ratio is not None:
        raise ValueError(f"policy {policy!r} has no prune_ratio")
    return f"{policy}(delta={delta!r})"


def noise_aware_spec(spec, patience=3):
    """``spec`` with the noise-aware option (``noisy=patience``) unless it has one."""
    if "noisy=" in spec:
        return spec
    if spec.endswith(")"):
        return f"{spec[:-1]},noisy={patience})"
    return f"{spec}(noisy={patience})"


class Sampler(torch.utils.data.Sampler):
    """Serves one pruned training run, epoch by epoch, to a DataLoader.

        sampler = winnow.Sampler(ds, num_epochs, policy="infobatch")  # or len(ds)
        loader = DataLoader(winnow.IndexedDataset(ds), batch_size=128, sampler=sampler)
        for epoch in range(num_epochs):
            for ids, (x, y) in loader:
                loss = sampler.update(ids, F.cross_entropy(model(x), y, reduction="none"))

    - ``iter(sampler)`` begins the next epoch and yields its plan (ints).
    - ``len(sampler)`` is the coming epoch's length, exact before iteration
      starts (the plan is built then; building is idempotent until served).
    - ``steps_per_epoch(bs)`` / ``total_steps(bs)`` size schedulers; the run
      total is an upper bound until every epoch is planned, so a OneCycleLR
      sized with it never overflows.
    - ``update(ids, per_sample_loss)`` records scores and returns the weighted
      mean loss (never modifies its input; autograd and autocast are fine).
    - ``state_dict()`` / ``load_state_dict()`` resume mid-epoch with the same
      remaining ids and the same later plans; the sampler pickles.

    The sampler itself lives in the main process (DataLoader workers only get
    the dataset), so it works with any ``num_workers`` and start method.

    Data-parallel training (DDP): with torch.distributed initialized (or
    ``world_size``/``rank`` given), every rank builds the same plan and
    iterates its own shard: L = ceil(P / W) ids, the plan wrapped around, so
    all ranks make the same number of steps and the W*L - P (< W) padding
    entries repeat the plan's first ones. ``update`` all-gathers ids (int64)
    and losses (float32) over ``process_group`` (None: the default group) so
    every rank records every rank's samples; it returns the LOCAL weighted
    mean (DDP averages the gradients). ``shard=False`` serves the whole plan
    on every rank for loaders that split batches across ranks themselves
    (accelerate's prepared DataLoader); scores are still synchronised.
    ``verify_plan=True`` all-gathers ``plan_hash()`` at the start of each epoch
    and raises on every rank if any rank planned differently.

    How much is saved: ``policy="infobatch"`` (the default) aims at a saving
    budget, 40% of the whole run's forward samples, warm-up and annealing
    epochs counted; ``target_saving=F`` sets another budget, ``prune_ratio=R``
    the paper's fixed ratio instead. ``history()`` gives each epoch's saving.

    Curation into training: ``label_issues=IDS`` (the samples winnow's
    curation flagged) makes the policy noise-aware (``noisy=3`` added to its
    spec unless it has one, docs/pruning.md) and down-weights those samples
    (weight x0.25) from the first pruned epoch; ``trusted_labels=IDS`` (labels
    a person confirmed) are never down-weighted. ``CuratedDataset.sampler()``
    passes both from the store.

    ``update`` raises winnow.Error on a negative loss (it would drag down the
    mean the policies threshold on); ``allow_negative_losses=True`` accepts
    them for losses that can legitimately be negative.
    """

    _CHUNK = 1024  # ids taken from the core at a time

    def __init__(self, num_samples, num_epochs, policy="infobatch", prune_ratio=None,
                 delta=0.875, seed=0, *, target_saving=None, world_size=None, rank=None,
                 process_group=None,
                 shard=True, verify_plan=False, device_tables=None,
                 allow_negative_losses=False, label_issues=None, trusted_labels=None):
        # torch's Sampler.__init__ only wants a data_source it ignores.
        num_samples = _sample_count(num_samples)
        explicit_ranks = world_size is not None
        world_size, rank = resolve_ranks(world_size, rank, process_group)
        spec = policy_spec(policy, prune_ratio, delta, target_saving)
        label_issues = _id_array(label_issues)
        trusted_labels = _id_array(trusted_labels)
        if len(label_issues) or len(trusted_labels):
            spec = noise_aware_spec(spec)
        self._core = DynamicPruner(int(num_samples), int(num_epochs), spec, int(seed),
                                   world_size=world_size if shard else 1,
                                   rank=rank if shard else 0,
                                   allow_negative_losses=bool(allow_negative_losses))
        self._sync = ScoreSync(world_size, rank, process_group) if world_size > 1 else None
        self._verify_plan = bool(verify_plan)
        self._device_tables = device_tables
        if len(trusted_labels):
            self._core.trust_labels(trusted_labels)
        if len(label_issues):
            self._core.flag_label_issues(label_issues)
        self._setup()
        self._warned_single = explicit_ranks  # asked for on purpose: no warning
        self._warned_no_update = False
        note = self._core.budget_note()  # a budget the run is short for
        if note:
            warnings.warn(note, RuntimeWarning, stacklevel=2)

    def _setup(self):
        self._tables = None      # DeviceTables once a device loss was seen
        self._active = None      # token of the iterator serving the current epoch
        self._position = 0       # ids of the current plan handed out
        self._generation = self._core.plan_generation
        self._resume = None      # restored mid-epoch: position to continue from
        self._updates = 0        # update() calls since the current plan was built

    # --- the core -------------------------------------------------------------
    @property
    def pruner(self):
        """The C++ DynamicPruner (winnow._winnow) behind this sampler."""
        return self._core

    @property
    def world_size(self):
        """Ranks sharing the plan (1 without torch.distributed)."""
        return 1 if self._sync is None else self._sync.world_size

    @property
    def rank(self):
        return 0 if self._sync is None else self._sync.rank

    def plan_hash(self):
        """XXH64 of the coming (or current) epoch's global plan, equal on all ranks."""
        self._begin()
        return self._core.plan_hash()

    def _begin(self):
        """Builds (or keeps) the coming epoch's plan; returns this rank's share."""
        self._core.begin_epoch()
        if self._core.plan_generation != self._generation:
            self._warn_if_no_update()
            self._generation = self._core.plan_generation
            self._position = 0
            self._updates = 0
        return self._core.shard_size()

    def _warn_if_no_update(self):
        """Said once: an epoch was served and no loss came back before the next plan."""
        if self._warned_no_update or self._updates > 0 or self._position == 0:
            return
        self._warned_no_update = True
        warnings.warn(f"winnow.Sampler: epoch {self._core.epoch - 1} was served but update() was "
                      f"never called: the pruner has seen no losses, so it prunes nothing. Call "
                      f"loss = sampler.update(ids, per_sample_loss) each step (the per-sample "
                      f"losses, reduction='none'), or update_batch_loss() for a batch loss",
                      RuntimeWarning, stacklevel=3)

    # --- torch Sampler ------------------------------------------------------
    def __len__(self):
        if self._resume is not None:
            return self._core.shard_size() - self._resume
        if self._active is not None:
            return self._core.shard_size()  # the epoch being served
        return self._begin()

    def __iter__(self):
        token = object()
        head = None
        if self._resume is not None:
            start, self._resume = self._resume, None
            head = self._core.shard_ids()[start:self._core.position]
            self._position = start
        else:
            self._begin()
        if self._verify_plan and self._sync is not None:
            self._sync.check_same_plan(self._core.plan_hash(), self._core.epoch)
        if self._sync is None and not self._warned_single:
            self._warn_if_built_before_the_group()
        self._active = token
        return self._serve(token, head)

    def _warn_if_built_before_the_group(self):
        self._warned_single = True
        if initialized() and group_size_and_rank()[0] > 1:
            warnings.warn(f"winnow.Sampler: torch.distributed has {group_size_and_rank()[0]} "
                          f"ranks, but this sampler was built as a single-process one (before "
                          f"init_process_group): every rank serves the "
                          f"whole plan and scores are not synchronised. Build it after "
                          f"init_process_group() or pass world_size and rank", stacklevel=3)

    def _serve(self, token, head):
        core = self._core
        try:
            if head is not None:
                for i in head.tolist():
                    if self._active is not token:
                        return
                    self._position += 1
                    yield i
            while self._active is token:
                chunk = core.next_batch(self._CHUNK)
                if chunk is None:
                    return
                for i in chunk.tolist():
                    if self._active is not token:
                        return
                    self._position += 1
                    yield i
        finally:
            if self._active is token:
                self._active = None

    # --- epochs and steps ---------------------------------------------------------
    def _served_epoch(self):
        """The epoch last begun (served in part or in full), or None."""
        core = self._core
        if self._resume is not None or core.position > 0 or core.epoch_finished:
            return core.epoch
        return core.epoch - 1 if core.epoch > 0 else None

    def _coming_epoch(self):
        core = self._core
        if self._resume is not None:
            return core.epoch
        if core.position > 0 or core.epoch_finished:
            return core.epoch + 1
        return core.epoch

    def set_epoch(self, epoch):
        """Checks the epoch index; winnow serves epochs in order by itself.

        Accepts the coming epoch (the usual call before each epoch) and the one
        last begun; anything else raises ValueError (use load_state_dict to go
        back to a saved point).
        """
        epoch = int(epoch)
        coming, served = self._coming_epoch(), self._served_epoch()
        if epoch == coming or epoch == served:
            return
        last = "no epoch served yet" if served is None else f"epoch {served} was begun last"
        raise ValueError(f"set_epoch({epoch}): this sampler serves epoch {coming} next ({last}); "
                         f"winnow plans epochs in order from the scores it has seen and cannot "
                         f"skip or repeat one. Call set_epoch({coming}) or nothing; to go back, "
                         f"load_state_dict() a saved state")

    @property
    def epoch(self):
        """The epoch the next iteration serves."""
        return self._coming_epoch()

    def steps_per_epoch(self, batch_size, drop_last=False):
        """Batches of the coming epoch (exact: its plan is built now)."""
        batch_size = _positive(batch_size, "steps_per_epoch")
        n = len(self)
        return n // batch_size if drop_last else -(-n // batch_size)

    def total_steps(self, batch_size):
        """Batches of the whole run: exact for planned epochs, an upper bound (all
        data) for the rest, so a step-based schedule sized with it never overflows."""
        return self._core.total_planned_steps(_positive(batch_size, "total_steps"))

    # --- the loss step ------------------------------------------------------------
    def update(self, ids, per_sample_loss):
        """Records the raw per-sample losses of `ids` as scores and returns the
        weighted mean loss, mean(w_i * l_i), with the current plan's weights."""
        ids = check_inputs(per_sample_loss, ids)
        self._updates += 1
        tables = self._tables_for(per_sample_loss.device)
        if self._sync is None:
            if tables is None:
                return host_update(self._core, per_sample_loss, ids)
            return tables.update(self._core, per_sample_loss, ids)
        # Data-parallel: record every rank's samples, weight this rank's batch.
        if not isinstance(ids, torch.Tensor):
            ids = torch.from_numpy(host_ids(ids).astype("int64", copy=False))
        all_ids, all_losses = self._sync.gather(ids, per_sample_loss)
        if tables is None:
            return host_update_gathered(self._core, per_sample_loss, ids, all_ids, all_losses)
        tables.record(self._core, all_ids, all_losses)
        _, local_ids = tables.device_ids(self._core, ids)
        return tables.weighted_mean(self._core, per_sample_loss, local_ids)

    def update_batch_loss(self, ids, batch_loss, momentum=0.9):
        """Batch-loss-score mode (BLS), for losses with no per-sample value:
        blends the batch's mean loss into the score of each of its samples,
        score = momentum * score + (1 - momentum) * batch_loss, and returns
        the batch loss times the batch's mean weight. One scalar crosses to
        the host per step. With several ranks every rank's batch is recorded."""
        if not isinstance(batch_loss, torch.Tensor) or batch_loss.dim() != 0:
            raise ValueError("update_batch_loss: batch_loss must be a scalar tensor "
                             "(the mean loss of the batch)")
        host = host_ids(ids)
        self._updates += 1
        value = float(batch_loss.detach())
        if self._sync is None:
            all_ids, all_losses = host, np.full(len(host), value, dtype=np.float32)
        else:
            tensor_ids = torch.from_numpy(host.astype("int64", copy=False))
            gathered_ids, gathered = self._sync.gather(
                tensor_ids, batch_loss.detach().float().expand(len(host)).cpu())
            all_ids = host_ids(gathered_ids)
            all_losses = gathered.detach().cpu().numpy().astype(np.float32, copy=False)
        self._core.update_batch_loss(all_ids, all_losses, momentum)
        return batch_loss * float(self._core.mean_weight(host))

    def _tables_for(self, device):
        if self._tables is not None:
            if self._tables.device != device and device.type != "cpu":
                raise ValueError(f"update: this sampler keeps its scores on {self._tables.device}; "
                                 f"got a loss on {device}")
            return self._tables
        wanted = self._device_tables
        if wanted is None:
            wanted = device.type != "cpu"
        if not wanted:
            return None
        self._tables = DeviceTables(device)
        ref = weakref.ref(self)

        def pull():
            sampler = ref()
            if sampler is not None and sampler._tables is not None:
                sampler._tables.pull(sampler._core)

        self._core.set_score_sync(pull)
        return self._tables

    def weights(self, ids):
        """The current plan's loss weights of `ids` (numpy float32)."""
        return self._core.weights(_as_ids(ids))

    def scores(self):
        """Every sample's score (numpy float32 copy, device scores included)."""
        self._core.sync_scores()
        return self._core.scores()

    # --- statistics ---------------------------------------------------------------
    @property
    def num_samples(self):
        return self._core.num_samples

    @property
    def num_epochs(self):
        return self._core.num_epochs

    @property
    def policy_spec(self):
        return self._core.policy_spec()

    def history(self):
        """Per finished epoch: epoch, kind, planned/forward/full_forward samples,
        candidates, saved_fraction."""
        return self._core.history()

    def totals(self):
        """Run totals: epochs, forward_samples, full_forward_samples, saved_fraction."""
        return self._core.totals()

    def saving_note(self):
        """Why nothing was saved so far, from the finished epochs' kinds, or ""
        when some epoch saved samples: a short run can be all warm-up (the
        policy has no losses yet) and annealing (the run's last epochs train on
        every sample), and so save nothing."""
        history = self._core.history()
        if not history or any(h["saved_fraction"] > 0 for h in history):
            return ""
        why = {"warmup": "warm-up: a full pass, the policy has no losses yet",
               "annealing": "annealing: the run's last epochs train on every sample"}
        epochs = "; ".join(f"epoch {h['epoch']} {why.get(h['kind'], h['kind'])}" for h in history)
        return (f"no samples saved yet ({epochs}); {self.policy_spec} prunes only the "
                f"epochs between its warm-up and its annealing, so a run needs more epochs "
                f"than these {len(history)} to save any")

    # --- checkpoints ----------------------------------------------------------------
    def state_dict(self, consumed=None):
        """The whole sampler state: the core's bytes and the position in the epoch.

        The position is the number of the current epoch's ids handed out. A
        DataLoader reads ahead, so when saving mid-epoch from a training loop
        pass ``consumed`` (samples of this epoch the loop actually trained on)
        to resume exactly there.
        """
        position = self._resume if self._resume is not None else self._position
        if self._resume is None and self._core.position == 0:
            position = 0
        if consumed is not None:
            consumed = int(consumed)
            if not 0 <= consumed <= position:
                raise ValueError(f"state_dict(consumed={consumed}): only {position} ids of this "
                                 f"epoch were handed out")
            position = consumed
        return {"format": _FORMAT, "pruner": self._core.to_bytes(), "position": position}

    def load_state_dict(self, state):
        """Restores a state_dict(); the next iteration continues where it was saved."""
        if not isinstance(state, dict) or state.get("format") != _FORMAT:
            raise ValueError("load_state_dict: not a winnow.Sampler state_dict")
        data = bytes(state["pruner"])
        restored = DynamicPruner.from_bytes(data, "state_dict")
        if restored.num_samples != self._core.num_samples:
            raise ValueError(f"load_state_dict: the state holds a pruner for "
                             f"{restored.num_samples} samples, this sampler serves "
                             f"{self._core.num_samples}")
        core = self._core
        if (restored.world_size, restored.rank) != (core.world_size, core.rank):
            raise ValueError(f"load_state_dict: the state was saved by rank {restored.rank} of "
                             f"{restored.world_size}, this sampler serves rank {core.rank} of "
                             f"{core.world_size}; each rank resumes from its own state with the "
                             f"same world size")
        position = int(state["position"])
        if not 0 <= position <= restored.position:
            raise ValueError(f"load_state_dict: position {position} is outside the served part "
                             f"(0..{restored.position}) of the saved epoch")
        self._core.restore(data, "state_dict")  # keeps a device score-sync hook
        self._restored(position)

    def _restored(self, position):
        core = self._core
        self._active = None
        self._generation = core.plan_generation
        self._position = position
        self._resume = position if core.position > 0 and position < core.shard_size() else None

    def __getstate__(self):
        # A process group does not pickle: a copy synchronises over the default group.
        return {"state": self.state_dict(), "device_tables": self._device_tables,
                "world_size": self.world_size, "rank": self.rank,
                "verify_plan": self._verify_plan}

    def __setstate__(self, state):
        s = state["state"]
        self._core = DynamicPruner.from_bytes(bytes(s["pruner"]), "pickle")
        self._device_tables = state["device_tables"]
        world_size, rank = state.get("world_size", 1), state.get("rank", 0)
        self._sync = ScoreSync(world_size, rank) if world_size > 1 else None
        self._verify_plan = state.get("verify_plan", False)
        self._setup()
        self._warned_single = False
        self._restored(int(s["position"]))

    def __repr__(self):
        ranks = "" if self._sync is None else f", rank {self.rank} of {self.world_size}"
        return (f"winnow.Sampler({self.num_samples} samples, {self.num_epochs} epochs, "
                f"policy {self.policy_spec!r}, next epoch {self.epoch}{ranks})")


def _sample_count(data):
    """The samples of a run: an int, or the dataset itself (anything with a
    length), so that the count cannot disagree with the data loaded."""
    if isinstance(data, (int, np.integer)):
        return int(data)
    if hasattr(data, "__len__"):
        return len(data)
    try:
        return int(data)
    except (TypeError, ValueError):
        raise TypeError(f"winnow.Sampler: the first argument is the dataset or its number of "
                        f"samples, got {type(data).__name__}") from None


def _id_array(ids):
    """Sample ids as a 1-D int64 array (None: none)."""
    if ids is None:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(_as_ids(ids), dtype=np.int64).reshape(-1)


def _positive(value, what):
    value = int(value)
    if value <= 0:
        raise ValueError(f"{what}: batch_size must be positive, got {value}")
    return value


def _as_ids(ids):
    import numpy as np

    if isinstance(ids, torch.Tensor):
        return ids.detach().to("cpu", torch.int64).contiguous().numpy()
    return np.asarray(ids)
