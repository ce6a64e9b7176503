#!/usr/bin/python3
"""Label-issue precision and recall through the `winnow` CLI, as a user measures them.

Per seed: the Fashion-MNIST training images in file order, with a share --noise of
their labels flipped uniformly to another class (the flips drawn from the seed; with
--noise-max above --noise, each seed's share is drawn uniformly in [noise, noise-max]).
The images arrive as --batches IDX files of equal size; `winnow init --db D` (with no
options but --init-arg's), then one `winnow import-idx` per file (key prefix b<i>, so keys b<i>-<6-digit position>), and
`winnow export` reads what the store says at the end:

  precision   flipped samples whose status is label_issue / samples with status label_issue
  recall      flipped samples whose status is label_issue / flipped samples
  after_batch precision and recall after each batch, over the samples arrived so far
              (with --every-batch)

One JSON line per seed, then a summary line (min precision, min recall).

  OMP_NUM_THREADS=1 bench/label_issues_stream.py --seeds 1 2 3
"""
import argparse
import gzip
import json
import os
import struct
import sys
import time

import numpy as np

from cli_runs import remove_database, winnow

DATA = os.environ.get("WINNOW_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")


def read_idx(path, offset):
    with gzip.open(path) as f:
        return np.frombuffer(f.read(), np.uint8, offset=offset)


def write_idx_images(path, images):
    with open(path, "wb") as f:
        f.write(struct.pack(">IIII", 0x00000803, len(images), 28, 28))
        f.write(images.tobytes())


def write_idx_labels(path, labels):
    with open(path, "wb") as f:
        f.write(struct.pack(">II", 0x00000801, len(labels)))
        f.write(labels.astype(np.uint8).tobytes())


def measure(flagged_keys, flipped_keys):
    tp = len(flagged_keys & flipped_keys)
    return {"flagged": len(flagged_keys), "flipped": len(flipped_keys),
            "precision": round(tp / max(1, len(flagged_keys)), 4),
            "recall": round(tp / max(1, len(flipped_keys)), 4)}


def label_issue_keys(args, db):
    rows = winnow(args, "export", "--db", db, "--status", "label_issue").splitlines()
    return {json.loads(line)["key"] for line in rows}


def run_seed(args, seed):
    images = read_idx(f"{DATA}/train-images-idx3-ubyte.gz", 16).reshape(-1, 28, 28)
    labels = read_idx(f"{DATA}/train-labels-idx1-ubyte.gz", 8).astype(np.int64)
    n = len(labels) if args.limit == 0 else min(args.limit, len(labels))
    images, labels = images[:n], labels[:n]
    rng = np.random.default_rng(seed)
    noise = args.noise if args.noise_max <= args.noise else rng.uniform(args.noise, args.noise_max)
    flipped = rng.choice(n, int(round(n * noise)), replace=False)
    noisy = labels.copy()
    noisy[flipped] = (labels[flipped] + rng.integers(1, 10, len(flipped))) % 10
    work = os.path.join(args.work, f"seed{seed}")
    os.makedirs(work, exist_ok=True)
    db = os.path.join(work, "labels.db")
    remove_database(db)
    winnow(args, "init", "--db", db, *args.init_arg)
    bounds = np.linspace(0, n, args.batches + 1).astype(int)
    keys = np.empty(n, dtype=object)
    for b in range(args.batches):
        keys[bounds[b]:bounds[b + 1]] = [f"b{b}-{i:06d}" for i in range(bounds[b + 1] - bounds[b])]
    flipped_keys = set(keys[flipped])
    after = []
    t0 = time.time()
    for b in range(args.batches):
        lo, hi = bounds[b], bounds[b + 1]
        img, lab = os.path.join(work, f"b{b}-images.idx"), os.path.join(work, f"b{b}-labels.idx")
        write_idx_images(img, images[lo:hi])
        write_idx_labels(lab, noisy[lo:hi])
        winnow(args, "import-idx", "--quiet", "--db", db, "--prefix", f"b{b}", img, lab)
        if args.every_batch:
            arrived = set(keys[flipped[flipped < hi]])
            after.append(measure(label_issue_keys(args, db), arrived))
    seconds = time.time() - t0
    result = {"seed": seed, "noise": round(noise, 4), "samples": n, "batches": args.batches,
              **measure(label_issue_keys(args, db), flipped_keys), "seconds": round(seconds, 1)}
    if args.every_batch:
        result["after_batch"] = after
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--winnow", default="build/bin/winnow")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--noise", type=float, default=0.1)
    parser.add_argument("--noise-max", type=float, default=0.0)
    parser.add_argument("--batches", type=int, default=10)
    parser.add_argument("--limit", type=int, default=0, help="only the first N images (0: all)")
    parser.add_argument("--work", default="/tmp/winnow-label-stream")
    parser.add_argument("--every-batch", action="store_true")
    parser.add_argument("--init-arg", action="append", default=[])
    args = parser.parse_args()
    results = []
    for seed in args.seeds:
        results.append(run_seed(args, seed))
        print(json.dumps(results[-1]), flush=True)
    print(json.dumps({"summary": True, "min_precision": min(r["precision"] for r in results),
                      "min_recall": min(r["recall"] for r in results)}))


if __name__ == "__main__":
    sys.exit(main())
