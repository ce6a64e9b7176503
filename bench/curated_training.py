#!/usr/bin/python3
"""What training on a curated store gains: Fashion-MNIST with flipped labels, through winnow.

Fashion-MNIST's 60,000 training images with a share --flip of their labels flipped
uniformly to another class (drawn from --seed) go into a store as
bench/label_issues_stream.py builds it (and with its code): `winnow init --db D`
(defaults), then one `winnow import-idx` per IDX file of --batches; the kNN vote flags
label issues. The store is kept in --work, keyed by flip, seed, batches and limit, so a
rerun skips building it. Then the MLP of examples/demo/main_job.py (784-256-10, SGD
nesterov lr 0.05 cosine by epoch, wd 5e-4, batch 128; its `train`, one torch thread)
trains --epochs on pixels read with winnow.CuratedDataset, once per training seed
(--seed, --seed+1, ... : --train-seeds of them), every run through an infobatch
winnow.Sampler, and is tested on the clean t10k test set:

  all            every judged sample, CuratedDataset(db, status=("accepted", "label_issue")),
                 a plain winnow.Sampler(len(ds), epochs, policy="infobatch") (no verdicts)
  accepted       CuratedDataset(db): the flagged samples left out; ds.sampler(epochs)
  down-weighted  CuratedDataset(db, status=("accepted", "label_issue")) with ds.sampler(epochs):
                 the noise-aware policy down-weights the flagged samples

One JSON line for the store (label-issue precision/recall against the flipped samples),
one per run (samples, flipped share of its labels, test accuracy: the mean and each
seed's, forward samples), then a summary line (each run against `all`).

  OMP_NUM_THREADS=1 PYTHONPATH=build/python nice -n 19 /usr/bin/python3 bench/curated_training.py \\
      --flip 0.3 --seed 1 --batches 10 --epochs 15 --train-seeds 2 --work /tmp/winnow-curated-training

(--limit N: the first N training images only, for a quick check.)
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import time
import warnings

os.environ.setdefault("OMP_NUM_THREADS", "1")  # before torch loads; `winnow` inherits it

import numpy as np  # noqa: E402
import torch  # noqa: E402

import winnow  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "examples", "demo"))
import main_job  # noqa: E402  (the training recipe)
from label_issues_stream import DATA, measure, read_idx, run_seed  # noqa: E402

JUDGED = ("accepted", "label_issue")


def flipped_positions(n, flip, seed):
    """The positions label_issues_stream.run_seed flips (its draws, in its order)."""
    rng = np.random.default_rng(seed)
    return rng.choice(n, int(round(n * flip)), replace=False)


def store_keys(n, batches):
    """The key run_seed gives each position: b<batch>-<6-digit position in the batch>."""
    bounds = np.linspace(0, n, batches + 1).astype(int)
    return [f"b{b}-{i:06d}" for b in range(batches) for i in range(bounds[b + 1] - bounds[b])]


def build_store(args):
    """The store of (flip, seed, batches, limit) in --work, built once; (db, build record)."""
    name = f"flip{args.flip}-b{args.batches}" + (f"-n{args.limit}" if args.limit else "")
    work = os.path.join(args.work, name)
    folder = os.path.join(work, f"seed{args.seed}")
    db, done = os.path.join(folder, "labels.db"), os.path.join(folder, "built.json")
    if os.path.exists(done) and os.path.exists(db):
        with open(done) as f:
            return db, dict(json.load(f), cached=True)
    shutil.rmtree(folder, ignore_errors=True)  # an unfinished build (its index files too)
    stream = argparse.Namespace(winnow=args.winnow, noise=args.flip, noise_max=0.0,
                                batches=args.batches, limit=args.limit, work=work,
                                every_batch=False, init_arg=[])
    built = run_seed(stream, args.seed)
    for f in os.listdir(folder):  # the IDX batches are in the store now
        if f.endswith(".idx"):
            os.remove(os.path.join(folder, f))
    with open(done, "w") as f:
        json.dump(built, f)
    return db, dict(built, cached=False)


def store_figures(db, args, built):
    """Label-issue precision/recall of the store against the flipped samples; the
    flipped keys; a check that they are exactly the judged samples whose label differs."""
    true = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    n = len(true) if args.limit == 0 else min(args.limit, len(true))
    keys = store_keys(n, args.batches)
    position = {k: p for p, k in enumerate(keys)}
    flipped = set(flipped_positions(n, args.flip, args.seed).tolist())
    judged = winnow.CuratedDataset(db, status=JUDGED)
    positions = [position[k] for k in judged.keys]
    stored = [int(judged.classes[t]) for t in judged.targets]
    mismatch = int(sum((p in flipped) != (s != true[p]) for p, s in zip(positions, stored)))
    flipped_keys = {k for k, p in zip(judged.keys, positions) if p in flipped}
    flagged = {judged.keys[i] for i in judged.label_issues}
    return {"store": db, "cached": built["cached"], "samples": n, "flip": args.flip,
            "seed": args.seed, "batches": args.batches, "flipped": len(flipped),
            "judged": len(judged), "build_seconds": built["seconds"],
            # as label_issues_stream measures it: over every flipped sample
            "label_issues": measure(flagged, {keys[p] for p in flipped}),
            # over the judged ones only (a duplicate or rejected sample has no label verdict)
            "label_issues_judged": measure(flagged, flipped_keys),
            "label_mismatch": mismatch}, flipped_keys


def run(name, what, ds, sampler_of_ds, args, seeds, flipped_keys, test_x, test_y):
    """Trains `ds` once per seed; the run's JSON record."""
    pixels, labels = main_job.curated_pixels(ds)
    noisy = sum(k in flipped_keys for k in ds.keys)
    accuracies, forward, wall = [], [], []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for seed in seeds:
            model, _, stats = main_job.train("mlp", pixels, labels, args.epochs, "infobatch", seed,
                                             dataset=ds if sampler_of_ds else None)
            accuracies.append(round(main_job.accuracy(model, test_x, test_y), 4))
            forward.append(stats["forward_samples"])
            wall.append(stats["wall_seconds"])
    return {"run": name, "data": what, "policy": stats["policy"], "samples": len(ds),
            "flagged": len(ds.label_issues), "flipped_share": round(noisy / max(1, len(ds)), 4),
            "epochs": args.epochs, "seeds": seeds,
            "test_accuracy": round(statistics.mean(accuracies), 4), "test_accuracies": accuracies,
            "forward_samples": round(statistics.mean(forward)), "forward_samples_each": forward,
            "wall_seconds": round(statistics.mean(wall), 1),
            "warnings": sorted({str(w.message) for w in caught})}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--winnow", default="build/bin/winnow")
    parser.add_argument("--flip", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--train-seeds", type=int, default=2)
    parser.add_argument("--limit", type=int, default=0, help="only the first N images (0: all)")
    parser.add_argument("--work", default="/tmp/winnow-curated-training")
    args = parser.parse_args()
    torch.set_num_threads(1)
    start = time.monotonic()

    db, built = build_store(args)
    store, flipped_keys = store_figures(db, args, built)
    print(json.dumps(store), flush=True)

    images = read_idx(f"{DATA}/t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    test_x = main_job.as_input(images)
    test_y = torch.from_numpy(read_idx(f"{DATA}/t10k-labels-idx1-ubyte.gz", 8).astype(np.int64))
    seeds = [args.seed + i for i in range(args.train_seeds)]
    judged = winnow.CuratedDataset(db, status=JUDGED)
    accepted = winnow.CuratedDataset(db, revision=judged.revision)
    plans = [("all", "accepted + label_issue, winnow.Sampler (no verdicts)", judged, False),
             ("accepted", "accepted only, ds.sampler()", accepted, True),
             ("down-weighted", "accepted + label_issue, ds.sampler() (noise-aware)", judged, True)]
    runs = {}
    for name, what, ds, own in plans:
        runs[name] = run(name, what, ds, own, args, seeds, flipped_keys, test_x, test_y)
        print(json.dumps(runs[name]), flush=True)

    base = runs["all"]
    print(json.dumps({
        "summary": True, "flip": args.flip, "seed": args.seed, "samples": store["samples"],
        "epochs": args.epochs, "train_seeds": seeds,
        "label_issues": {k: store["label_issues"][k] for k in ("precision", "recall", "flagged")},
        "runs": {name: {"samples": r["samples"], "test_accuracy": r["test_accuracy"],
                        "gain_points": round(100 * (r["test_accuracy"] - base["test_accuracy"]), 2),
                        "forward_samples": r["forward_samples"],
                        "forward_share_of_all": round(r["forward_samples"] / base["forward_samples"], 3)}
                 for name, r in runs.items()},
        "seconds": round(time.monotonic() - start, 1)}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
