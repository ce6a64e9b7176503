#!/usr/bin/python3
"""Near-duplicate recall and false flags through the `winnow` CLI, as a user measures them.

Per seed: the Fashion-MNIST test images (or --split train) as originals in file order,
plus --copies re-submitted copies of randomly chosen originals. A copy is the original
shifted by 1 pixel in one of the 8 directions (the 4 axis neighbours and the 4 diagonals;
--directions 4 for axis shifts only; the verifier's max_shift 1 covers both), brightness
scaled by a factor uniform in [1 - B, 1 + B], plus Gaussian pixel noise with sigma uniform
in [--noise-min, --noise-max] (0-255 scale), rounded and clipped to 0..255. It carries its
original's label. Each copy arrives at a uniformly random position after its original, in
one manifest (JSON Lines `pixels` records). Then `winnow init --db D` (no options but
--init-arg's), `winnow ingest`, and `winnow export --details` reads the decisions:

  recall             copies decided duplicate_near or duplicate_exact / copies
  recall_own         ... of their own original
  false_flag_rate    untouched originals (no planted copy) decided duplicate_near /
                     untouched originals
  lost               the copies not caught, by why: their original is not in the index
                     (it was not accepted: label_issue), not a candidate (below the
                     cosine floor or outside the top candidates), or verified below the
                     threshold; and their own decision
  false_flags_same_label  false flags whose match has the same label (mostly genuine
                     near-identical Fashion-MNIST images)

One JSON line per seed, then a summary line (min recall, max false flag rate).

  OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 bench/near_duplicates_cli.py --seeds 1 2 3
"""
import argparse
import gzip
import json
import os
import struct
import subprocess
import sys
import time

import numpy as np

DATA = os.environ.get("WINNOW_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
DIRECTIONS_8 = [(-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]
DIRECTIONS_4 = [(0, -1), (-1, 0), (1, 0), (0, 1)]


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic = struct.unpack(">I", data[:4])[0]
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4 : 4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def shifted(img, dx, dy):
    """img moved by (dx, dy): out(x, y) = img(x - dx, y - dy), zero where it came from outside."""
    h, w = img.shape
    out = np.zeros_like(img, dtype=np.float64)
    ys, ye = max(0, dy), min(h, h + dy)
    xs, xe = max(0, dx), min(w, w + dx)
    out[ys:ye, xs:xe] = img[ys - dy : ye - dy, xs - dx : xe - dx]
    return out


def shifted_pearson(a, b, max_shift=1):
    """The verifier's measure: max over shifts of the Pearson correlation of the overlap."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    h, w = a.shape
    best = -1.0
    for dy in range(-max_shift, max_shift + 1):
        for dx in range(-max_shift, max_shift + 1):
            pa = a[max(0, -dy) : min(h, h - dy), max(0, -dx) : min(w, w - dx)].ravel()
            pb = b[max(0, dy) : min(h, h + dy), max(0, dx) : min(w, w + dx)].ravel()
            if pa.std() > 0 and pb.std() > 0:
                best = max(best, float(np.corrcoef(pa, pb)[0, 1]))
    return best


def plant(images, args, seed):
    """The arrival order: a list of (kind, original index, copy number, pixels)."""
    rng = np.random.default_rng(seed)
    n = len(images)
    directions = DIRECTIONS_8 if args.directions == 8 else DIRECTIONS_4
    originals = rng.choice(n, size=args.copies, replace=False)
    copies = []
    for c, o in enumerate(originals):
        dx, dy = directions[rng.integers(len(directions))]
        f = rng.uniform(1.0 - args.brightness, 1.0 + args.brightness)
        sigma = rng.uniform(args.noise_min, args.noise_max)
        v = shifted(images[o], dx, dy) * f + rng.normal(0.0, sigma, images[o].shape)
        copies.append(np.clip(np.rint(v), 0, 255).astype(np.uint8))
    # Each copy goes after its original, at a uniformly random later slot.
    after = {}
    for c, o in enumerate(originals):
        after.setdefault(int(rng.integers(o, n)), []).append(c)
    order = []
    for i in range(n):
        order.append(("original", i, -1))
        for c in after.get(i, []):
            order.append(("copy", int(originals[c]), c))
    return order, copies, originals


def write_manifest(path, images, labels, order, copies, split):
    with open(path, "w") as f:
        for kind, o, c in order:
            if kind == "original":
                key, px = f"{split}-{o}", images[o]
            else:
                key, px = f"copy-{c}-of-{split}-{o}", copies[c]
            rec = {"key": key, "pixels": px.reshape(-1).tolist(), "width": 28, "height": 28,
                   "label": int(labels[o])}
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")


def winnow(args, *cmd):
    return subprocess.run([args.winnow, *cmd], check=True, capture_output=True, text=True).stdout


def measure(args, images, labels, seed):
    order, copies, originals = plant(images, args, seed)
    os.makedirs(args.workdir, exist_ok=True)
    manifest = os.path.join(args.workdir, f"nd-{args.split}-seed{seed}.jsonl")
    write_manifest(manifest, images, labels, order, copies, args.split)
    db = os.path.join(args.workdir, f"nd-seed{seed}.db")
    for suffix in ("", ".index", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    winnow(args, "init", "--db", db, *args.init_arg)
    t0 = time.monotonic()
    winnow(args, "ingest", "--db", db, manifest)
    ingest_s = time.monotonic() - t0
    config = json.loads(winnow(args, "status", "--db", db, "--json"))
    rows = [json.loads(line) for line in winnow(args, "export", "--db", db, "--details").splitlines()]
    by_key = {r["key"]: r for r in rows}
    by_id = {r["id"]: r for r in rows}

    caught = own = 0
    lost = {}
    lost_status = {}
    for c, o in enumerate(originals):
        r = by_key[f"copy-{c}-of-{args.split}-{o}"]
        orig = by_key[f"{args.split}-{o}"]
        if r["status"] in ("duplicate_near", "duplicate_exact"):
            caught += 1
            own += r["duplicate_of"] == orig["id"]
            continue
        lost_status[r["status"]] = lost_status.get(r["status"], 0) + 1
        if orig["status"] != "accepted":
            why = f"original_{orig['status']}"
        elif shifted_pearson(copies[c], images[o]) < args.threshold:
            why = "verifier_below_threshold"
        else:
            why = "not_a_candidate"  # below the cosine floor or outside the top candidates
        lost[why] = lost.get(why, 0) + 1

    copied = set(int(o) for o in originals)
    untouched = [i for i in range(len(images)) if i not in copied]
    flagged = [by_key[f"{args.split}-{i}"] for i in untouched]
    flagged = [r for r in flagged if r["status"] == "duplicate_near"]
    same_label = sum(1 for r in flagged if by_id[r["duplicate_of"]]["label"] == r["label"])
    flagged_all = sum(1 for i in range(len(images)) if by_key[f"{args.split}-{i}"]["status"] == "duplicate_near")
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return {
        "seed": seed,
        "split": args.split,
        "originals": len(images),
        "copies": len(originals),
        "directions": args.directions,
        "brightness": args.brightness,
        "noise_sigma": [args.noise_min, args.noise_max],
        "embedder": config.get("embedder"),
        "init_args": args.init_arg,
        "recall": caught / len(originals),
        "recall_own": own / len(originals),
        "false_flag_rate": len(flagged) / len(untouched),
        "false_flags": len(flagged),
        "false_flags_same_label": same_label,
        "originals_flagged_near": flagged_all,
        "lost_why": lost,
        "lost_as": lost_status,
        "counts": counts,
        "ingest_s": round(ingest_s, 2),
        "load": float(open("/proc/loadavg").read().split()[0]),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--winnow", default="build/bin/winnow")
    p.add_argument("--workdir", default="/tmp/winnow-nd-cli")
    p.add_argument("--split", choices=["test", "train"], default="test")
    p.add_argument("--limit", type=int, default=0, help="first N images only (0: all)")
    p.add_argument("--copies", type=int, default=1000)
    p.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    p.add_argument("--directions", type=int, choices=[4, 8], default=8)
    p.add_argument("--brightness", type=float, default=0.10)
    p.add_argument("--noise-min", type=float, default=2.0)
    p.add_argument("--noise-max", type=float, default=5.0)
    p.add_argument("--threshold", type=float, default=0.99,
                   help="the verifier threshold in use (only to sort the lost copies)")
    p.add_argument("--init-arg", action="append", default=[],
                   help="extra `winnow init` argument (repeat; e.g. --init-arg=--min-candidate=0.95)")
    args = p.parse_args()
    prefix = "t10k" if args.split == "test" else "train"
    images = read_idx(f"{DATA}/{prefix}-images-idx3-ubyte.gz")
    labels = read_idx(f"{DATA}/{prefix}-labels-idx1-ubyte.gz")
    if args.limit:
        images, labels = images[: args.limit], labels[: args.limit]
    results = []
    for seed in args.seeds:
        r = measure(args, images, labels, seed)
        results.append(r)
        print(json.dumps(r), flush=True)
    print(json.dumps({"summary": True, "seeds": args.seeds,
                      "recall_min": min(r["recall"] for r in results),
                      "recall_mean": sum(r["recall"] for r in results) / len(results),
                      "false_flag_rate_max": max(r["false_flag_rate"] for r in results)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
