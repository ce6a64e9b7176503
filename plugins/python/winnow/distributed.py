"""Keeping score tables identical across data-parallel ranks (torch.distributed).

Every rank must build the same plan, and a plan is a function of (seed, epoch,
scores): so every rank records the losses of every sample trained on any rank.
Each step, ScoreSync all-gathers the local batch's ids as int64 and its raw
per-sample losses as float32, two separate tensors (an id is never squeezed
through a float, so ids above 2^24 stay exact), as the C++
winnow::DistributedPrunedLoss does. Batches may differ in size between ranks
(a short last batch): the sizes are gathered first and the shorter batches
padded to the longest, then trimmed again.

Per step and rank: one int64 (the size), then 8*Bmax + 4*Bmax bytes are sent
and W times that received; see docs/distributed.md.

Every rank must call update() the same number of times, in the same order as
any other collective (as with DDP's backward). Checks that depend on the data
(ids out of range, non-finite losses) run after the gathers on the same data
everywhere, so every rank raises the same error and none is left waiting.
"""

import torch
import torch.distributed as dist


def initialized():
    """True when a default torch.distributed process group exists."""
    return dist.is_available() and dist.is_initialized()


def group_size_and_rank(process_group=None):
    """(world size, rank) of `process_group` (None: the default group)."""
    return dist.get_world_size(process_group), dist.get_rank(process_group)


def resolve_ranks(world_size, rank, process_group):
    """The (world_size, rank) a Sampler serves.

    Given explicitly, they are used as they are (and checked against the
    process group when update() first synchronises). Left out, they come from
    `process_group` or the default group when torch.distributed is
    initialized, and are (1, 0) otherwise.
    """
    if world_size is None and rank is None:
        if process_group is not None or initialized():
            return group_size_and_rank(process_group)
        return 1, 0
    if world_size is None or rank is None:
        raise ValueError(f"Sampler: give both world_size and rank, or neither (got world_size="
                         f"{world_size}, rank={rank}); left out, they come from torch.distributed")
    world_size, rank = int(world_size), int(rank)
    if world_size < 1 or not 0 <= rank < world_size:
        raise ValueError(f"Sampler: rank {rank} is out of range for world_size {world_size} "
                         f"(ranks are 0 to world_size - 1)")
    return world_size, rank


def hash_as_int64(value):
    """An unsigned 64-bit hash as the int64 with the same bits (for a tensor)."""
    return value - (1 << 64) if value >= (1 << 63) else value


class ScoreSync:
    """All-gathers each step's (id, loss) pairs over a process group.

    `process_group=None` means the default group, looked up at each call, so a
    sampler can be built (or unpickled) before init_process_group().
    """

    def __init__(self, world_size, rank, process_group=None):
        self.world_size = world_size
        self.rank = rank
        self.process_group = process_group
        self._checked = False

    def _group(self):
        if not initialized():
            raise RuntimeError(f"update: this sampler is rank {self.rank} of {self.world_size}, "
                               f"but torch.distributed is not initialized; call "
                               f"torch.distributed.init_process_group() first (every rank "
                               f"records every rank's losses through it)")
        if not self._checked:
            size, rank = group_size_and_rank(self.process_group)
            if (size, rank) != (self.world_size, self.rank):
                raise ValueError(f"update: the process group is rank {rank} of {size}, but the "
                                 f"sampler was set up as rank {self.rank} of {self.world_size}")
            self._checked = True
        return self.process_group

    def device(self):
        """Where the gathered tensors live: the current GPU for NCCL, else the CPU."""
        if dist.get_backend(self._group()) == "nccl":
            return torch.device("cuda", torch.cuda.current_device())
        return torch.device("cpu")

    def all_gather(self, local):
        """The rank-ordered list of every rank's `local` (same shape everywhere)."""
        group = self._group()
        parts = [torch.empty_like(local) for _ in range(self.world_size)]
        dist.all_gather(parts, local, group=group)
        return parts

    def gather(self, ids, losses):
        """Every rank's ids (int64) and losses (float32), concatenated in rank order."""
        device = self.device()
        ids = ids.detach().to(device, torch.int64).contiguous()
        losses = losses.detach().to(device, torch.float32).contiguous()
        count = ids.shape[0]
        sizes = [int(s) for s in self.all_gather(torch.tensor([count], dtype=torch.int64,
                                                              device=device))]
        longest = max(sizes)
        if longest > count:  # a shorter batch: pad, gather, trim
            ids = torch.cat([ids, ids.new_zeros(longest - count)])
            losses = torch.cat([losses, losses.new_zeros(longest - count)])
        all_ids = self.all_gather(ids)
        all_losses = self.all_gather(losses)
        return (torch.cat([part[:n] for part, n in zip(all_ids, sizes)]),
                torch.cat([part[:n] for part, n in zip(all_losses, sizes)]))

    def check_same_plan(self, plan_hash, epoch):
        """All-gathers the plan hash; raises on every rank if any rank differs."""
        local = torch.tensor([hash_as_int64(plan_hash)], dtype=torch.int64, device=self.device())
        hashes = [int(h) for h in self.all_gather(local)]
        if len(set(hashes)) != 1:
            listing = ", ".join(f"rank {r}: {h & 0xFFFFFFFFFFFFFFFF:016x}"
                                for r, h in enumerate(hashes))
            raise RuntimeError(f"Sampler: the ranks built different plans for epoch {epoch} "
                               f"({listing}); every rank needs the same num_samples, policy, seed "
                               f"and scores (state_dict) and must call update() on every batch")
