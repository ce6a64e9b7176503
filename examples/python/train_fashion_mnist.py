#!/usr/bin/env python3
"""Trains an MLP on Fashion-MNIST with winnow's dynamic data pruning, in plain PyTorch.

The Python twin of examples/train_fashion_mnist.cpp (same model, optimiser,
schedule and data): a DataLoader fed by winnow.Sampler, batches that carry
their sample ids through winnow.IndexedDataset, and Sampler.update for the
weighted loss.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/train_fashion_mnist.py --policy infobatch

Data-parallel, one process per rank, Gloo on the CPU (torchrun sets RANK,
WORLD_SIZE, MASTER_ADDR and MASTER_PORT; the model is wrapped in DDP, the
sampler picks its rank from torch.distributed and serves that rank's shard of
the one plan all ranks build, and update() keeps every rank's scores equal):

    PYTHONPATH=build/python torchrun --standalone --nproc_per_node=2 \
        examples/python/train_fashion_mnist.py --policy infobatch

(Debian's torch 1.13 torchrun needs `--redirects 9:0 --tee 9:0` under Python
3.11, see docs/distributed.md.)
"""
import argparse
import math
import os
import sys
import time

import numpy as np
import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch.nn.parallel import DistributedDataParallel
from torch.utils.data import DataLoader, TensorDataset

import winnow
import fashion_mnist_idx  # beside this file
from fashion_mnist_idx import DEFAULT_DATA

MEAN, STD = 0.2860, 0.3530  # the training set's pixel mean and standard deviation


def load_split(data_dir, prefix):
    """(standardised pixels float [n, 784], labels int64 [n]) of a split."""
    images, labels = fashion_mnist_idx.load_split(data_dir, prefix)
    x = (torch.from_numpy(images.astype(np.float32) / 255.0) - MEAN) / STD
    return x.reshape(len(x), -1), torch.from_numpy(labels)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="infobatch",
                        help="full, infobatch, uniform, infobatch-quantile, ucb, epsilon-greedy "
                             "or a full spec such as 'infobatch(r=0.6,delta=0.85)'")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--prune-ratio", type=float, default=None,
                        help="r for infobatch/uniform (infobatch's default is a 40%% saving budget)")
    parser.add_argument("--target-saving", type=float, default=None,
                        help="saving budget: the share of the run's forward samples to skip")
    parser.add_argument("--delta", type=float, default=0.875)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0, help="DataLoader worker processes")
    parser.add_argument("--device", default="cpu",
                        help="cpu or cuda (under torchrun: each rank uses GPU LOCAL_RANK)")
    parser.add_argument("--data", default=DEFAULT_DATA, help="folder with the Fashion-MNIST IDX files")
    parser.add_argument("--verify-plan", action="store_true",
                        help="data-parallel: check once per epoch that all ranks built the same plan")
    args = parser.parse_args()

    # Under torchrun (WORLD_SIZE set): one rank of a Gloo process group.
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    device = torch.device(args.device)
    if device.type == "cuda":
        if not torch.cuda.is_available():
            sys.exit(f"train_fashion_mnist.py: --device {args.device}: no GPU is visible to torch")
        if distributed:
            device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
            torch.cuda.set_device(device)
    if distributed:
        dist.init_process_group("nccl" if device.type == "cuda" else "gloo")
    rank = dist.get_rank() if distributed else 0
    world_size = dist.get_world_size() if distributed else 1

    def log(*parts, **kwargs):  # rank 0 speaks for all
        if rank == 0:
            print(*parts, **kwargs)

    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the same initial weights on every rank
    train_x, train_y = load_split(args.data, "train")
    test_x, test_y = load_split(args.data, "t10k")
    n = len(train_x)

    # With torch.distributed initialized the sampler serves this rank's shard.
    sampler = winnow.Sampler(n, args.epochs, policy=args.policy, prune_ratio=args.prune_ratio,
                             target_saving=args.target_saving,
                             delta=args.delta, seed=args.seed, verify_plan=args.verify_plan)
    loader = DataLoader(winnow.IndexedDataset(TensorDataset(train_x, train_y)),
                        batch_size=args.batch_size, sampler=sampler, num_workers=args.workers)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                torch.nn.Linear(256, 10)).to(device)
    # DDP averages gradients over ranks; each rank's loss is its own batch's weighted mean.
    trained = DistributedDataParallel(model) if distributed else model
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True,
                                weight_decay=5e-4)
    log(f"train_fashion_mnist.py: mlp, policy {sampler.policy_spec}, {n} samples, "
        f"{args.epochs} epochs, {world_size} rank(s) x {args.threads} thread(s), batch "
        f"{args.batch_size} per rank, {device}", file=sys.stderr)

    start = time.perf_counter()
    for epoch in range(args.epochs):
        # Cosine decay by epoch: pruned epochs make fewer steps.
        lr = 0.5 * args.lr * (1.0 + math.cos(math.pi * epoch / args.epochs))
        for group in optimizer.param_groups:
            group["lr"] = lr
        sampler.set_epoch(epoch)
        loss_sum = torch.zeros((), device=device)
        for ids, (x, y) in loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            per_sample = F.cross_entropy(trained(x), y, reduction="none")
            # Records scores (on a GPU: logged there, no sync) and returns the weighted mean.
            loss = sampler.update(ids, per_sample)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            loss_sum += per_sample.detach().sum()
        stats = sampler.history()[-1]
        served = stats["forward_samples"]  # all ranks together
        log(f"epoch {epoch + 1:>3}/{args.epochs} [{stats['kind']:<9}] samples {served:>6} "
            f"({100.0 * served / n:5.1f}%)  loss {loss_sum.item() * world_size / served:.4f}  "
            f"elapsed {time.perf_counter() - start:.1f}s", file=sys.stderr)
    wall = time.perf_counter() - start
    if distributed:
        dist.barrier()  # no rank tears its group down while a peer still talks to it
        dist.destroy_process_group()
    if rank != 0:
        return

    model.eval()
    with torch.no_grad():
        correct = sum(int((model(test_x[i:i + 1000].to(device)).argmax(1).cpu() ==
                           test_y[i:i + 1000]).sum())
                      for i in range(0, len(test_x), 1000))
    accuracy = correct / len(test_x)
    totals = sampler.totals()
    print(f"mlp {sampler.policy_spec} seed {args.seed} ranks {world_size} {device}: test accuracy "
          f"{accuracy:.4f}, forward samples {totals['forward_samples']} of {totals['full_forward_samples']} (saved "
          f"{100.0 * totals['saved_fraction']:.1f}%), train {wall:.1f}s")
    if sampler.saving_note():
        print(sampler.saving_note())


if __name__ == "__main__":
    main()
