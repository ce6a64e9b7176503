#!/usr/bin/env python3
"""bench_sync_python: the per-step cost of winnow.Sampler.update's score sync in a
data-parallel run, one process per rank, Gloo over loopback (the Python twin of
bench_sync's one-rank-per-process mode).

    PYTHONPATH=build/python /usr/bin/python3 bench/bench_sync_python.py --ranks 2,4 --batches 128,1024

For each (ranks, batch) it starts W processes (fork), pins rank r to core
r mod cores (os.sched_setaffinity; with more ranks than cores, ranks share),
and times on rank 0, per step:
  gather_us: ScoreSync.gather alone (sizes int64[1], ids int64[B], losses
             float32[B]: three torch.distributed.all_gather calls);
  step_us:   a whole Sampler.update (the same gathers, recording W*B
             observations in the core, the local weighted mean).
Prints one JSON document with the load average (the machine is shared).
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist
import torch.multiprocessing as mp

import winnow
from winnow.distributed import ScoreSync


def summary(values):
    values = sorted(values)
    return {"median": values[len(values) // 2], "mean": statistics.fmean(values),
            "p90": values[len(values) * 9 // 10]}


def run_rank(rank, world, batch, steps, samples, init_file, out_file, pin):
    torch.set_num_threads(1)
    cores = sorted(os.sched_getaffinity(0))
    if pin:
        os.sched_setaffinity(0, {cores[rank % len(cores)]})
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    dist.init_process_group("gloo", init_method=f"file://{init_file}", world_size=world,
                            rank=rank)
    sampler = winnow.Sampler(samples, 1000, policy="infobatch")
    sync = ScoreSync(world, rank)
    generator = torch.Generator().manual_seed(rank)
    ids = torch.randint(samples, (batch,), generator=generator)
    losses = torch.rand(batch, generator=generator)
    gather_us, step_us = [], []
    warmup = 20
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        sync.gather(ids, losses)
        t1 = time.perf_counter()
        sampler.update(ids, losses)
        t2 = time.perf_counter()
        if step >= warmup:
            gather_us.append((t1 - t0) * 1e6)
            step_us.append((t2 - t1) * 1e6)
    dist.barrier()
    if rank == 0:
        with open(out_file, "w") as f:
            json.dump({"gather_us": summary(gather_us), "step_us": summary(step_us)}, f)
    dist.destroy_process_group()


def measure(world, batch, steps, samples, pin):
    with tempfile.TemporaryDirectory() as folder:
        out_file = os.path.join(folder, "rank0.json")
        mp.start_processes(run_rank, nprocs=world, start_method="fork",
                           args=(world, batch, steps, samples, os.path.join(folder, "init"),
                                 out_file, pin))
        with open(out_file) as f:
            timings = json.load(f)
    return {"ranks": world, "ranks_as": "processes", "pinned": pin, "batch": batch,
            "steps": steps, "bytes_sent_per_rank": 8 + 12 * batch,
            "bytes_received_per_rank": world * (8 + 12 * batch), **timings,
            "load_average": os.getloadavg()[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", default="2,4", help="world sizes")
    parser.add_argument("--batches", default="128,1024", help="batch sizes per rank")
    parser.add_argument("--steps", type=int, default=300, help="timed steps per configuration")
    parser.add_argument("--samples", type=int, default=60000, help="data set size")
    parser.add_argument("--no-pin", action="store_true", help="leave the ranks unpinned")
    args = parser.parse_args()
    results = [measure(int(w), int(b), args.steps, args.samples, not args.no_pin)
               for w in args.ranks.split(",") for b in args.batches.split(",")]
    json.dump({"benchmark": "bench_sync_python", "torch": torch.__version__,
               "cores": len(os.sched_getaffinity(0)), "results": results}, sys.stdout, indent=2)
    print()


if __name__ == "__main__":
    main()
