#!/usr/bin/env python3
"""Generates the main job's data: Fashion-MNIST arriving from annotation vendors.

    /usr/bin/python3 examples/demo/generate_batches.py --workdir build/demo [--seed 2026]

What it plants (all draws from one numpy Generator seeded with --seed, in the
order below, so the same seed gives byte-identical files):

1. Originals. The 60,000 Fashion-MNIST training images (Debian's
   dataset-fashion-mnist), in a seeded random order.
2. Re-submissions. R = round(0.05 * N / 0.95) extra records (5% of all N + R
   records) that copy an earlier original: half exact copies, half edited
   copies, the edit chosen uniformly from
     shift       1 pixel in one of the 8 directions (zero fill),
     brightness  pixels x U[0.9, 1.1] (rounded, clipped to 0..255),
     noise       Gaussian noise with sigma U[2, 5] (rounded, clipped).
   Each re-submission is inserted at a uniform position after its original,
   so a copy always arrives after the image it copies (possibly in the same
   batch).
3. Labels. Four annotation vendors with stated label accuracies
     vendor_a 0.98, vendor_b 0.95, vendor_c 0.85, vendor_d 0.60,
   submitting 30%, 30%, 25% and 15% of the records. A wrong label is uniform
   over the other 9 classes (the confusion model Dawid-Skene assumes). Every
   record is labelled by its submitting vendor (its `source`); 60% of the
   records carry that one annotation, 30% a second one and 10% a third one, from
   vendors drawn without replacement among the other three. Re-submissions are
   labelled afresh, like any record.
4. Batches. The stream of N + R records is cut into `--batches` (default 6)
   manifests of equal size, batch-1.jsonl .. batch-6.jsonl.

A manifest record carries key, pixels, width, height, source and
annotations, and no `label`: winnow stores the majority of the annotations
(ties: the smallest label), exactly what a plain ingest of such data does.
Keys (`rec-000001`, ...) are in stream order and say nothing about the truth.

Beside the batches, the truth, so every figure of the demo can be checked:
  truth.jsonl         per record: key, batch, train_index (the Fashion-MNIST
                      image), true_label, source, annotations, stored_label
                      (their majority, as winnow computes it), label_error
                      (stored_label != true_label), resubmission_of (the key of
                      the original, or null), edit (null, exact, shift,
                      brightness, noise) and edit_detail.
  truth_summary.json  the seed and parameters, per-vendor stated and true
                      accuracy on the labels it actually gave, planted
                      re-submissions by kind, planted label errors.
  records.npz         the same records as arrays (pixels uint8 [M, 784],
                      true_label, stored_label, batch) for the training runs.
"""
import argparse
import gzip
import json
import os
import sys

import numpy as np

DEFAULT_DATA = os.environ.get("WINNOW_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")

# (name, stated label accuracy, share of the records it submits)
VENDORS = [("vendor_a", 0.98, 0.30), ("vendor_b", 0.95, 0.30),
           ("vendor_c", 0.85, 0.25), ("vendor_d", 0.60, 0.15)]
ANNOTATION_COUNTS = [(1, 0.6), (2, 0.3), (3, 0.1)]  # annotations per record: probability
RESUBMISSION_SHARE = 0.05
EDITS = ["shift", "brightness", "noise"]
NUM_CLASSES = 10


def read_idx(path, magic):
    """A gzipped (or plain) IDX file as a numpy uint8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    found = int.from_bytes(data[0:4], "big")
    if found != magic:
        sys.exit(f"'{path}' is not an IDX file of the expected kind (magic {found:#010x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def find(data_dir, stem):
    for name in (stem, stem + ".gz"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    sys.exit(f"no {stem}(.gz) in '{data_dir}' (install dataset-fashion-mnist or pass --data)")


def load_split(data_dir, prefix):
    """(images uint8 [n, 28, 28], labels int64 [n]) of the train or t10k split."""
    images = read_idx(find(data_dir, f"{prefix}-images-idx3-ubyte"), 0x00000803)
    labels = read_idx(find(data_dir, f"{prefix}-labels-idx1-ubyte"), 0x00000801)
    return images, labels.astype(np.int64)


def shifted(image, dy, dx):
    """The image moved by (dy, dx) pixels, zero fill (no wrap-around)."""
    out = np.zeros_like(image)
    h, w = image.shape
    out[max(dy, 0):h + min(dy, 0), max(dx, 0):w + min(dx, 0)] = \
        image[max(-dy, 0):h + min(-dy, 0), max(-dx, 0):w + min(-dx, 0)]
    return out


def edit_image(image, edit, rng):
    """An edited copy of `image` and a description of the edit."""
    if edit == "shift":
        directions = [(dy, dx) for dy in (-1, 0, 1) for dx in (-1, 0, 1) if (dy, dx) != (0, 0)]
        dy, dx = directions[rng.integers(len(directions))]
        return shifted(image, dy, dx), {"dy": int(dy), "dx": int(dx)}
    if edit == "brightness":
        factor = float(rng.uniform(0.9, 1.1))
        return np.clip(np.rint(image * factor), 0, 255).astype(np.uint8), {"factor": round(factor, 4)}
    sigma = float(rng.uniform(2.0, 5.0))
    noisy = image + rng.normal(0.0, sigma, size=image.shape)
    return np.clip(np.rint(noisy), 0, 255).astype(np.uint8), {"sigma": round(sigma, 4)}


def noisy_label(true_label, accuracy, rng):
    """The true label with probability `accuracy`, else one of the other classes, uniformly."""
    if rng.random() < accuracy:
        return int(true_label)
    wrong = int(rng.integers(NUM_CLASSES - 1))
    return wrong + 1 if wrong >= true_label else wrong


def majority(labels):
    """winnow's rule for a record without `label`: the most frequent annotation, ties the smallest."""
    counts = np.bincount(labels, minlength=NUM_CLASSES)
    return int(np.argmax(counts))  # argmax returns the first (smallest) of the tied maxima


def generate(images, true_labels, seed, num_batches):
    """The record stream: a list of dicts (truth) and the pixel array, in stream order."""
    rng = np.random.default_rng(seed)
    n = len(images)
    order = rng.permutation(n)
    num_resubmissions = int(round(RESUBMISSION_SHARE * n / (1.0 - RESUBMISSION_SHARE)))

    # Re-submissions: which original (position in `order`), exact or which edit,
    # and where in the stream (after the original). Sorting by (slot, draw)
    # interleaves them deterministically.
    originals = rng.integers(0, n, size=num_resubmissions)
    exact = rng.random(num_resubmissions) < 0.5
    edits = rng.integers(0, len(EDITS), size=num_resubmissions)
    # slot s means "right after original position s" (s >= the original's position)
    slots = originals + np.floor(rng.random(num_resubmissions) * (n - originals)).astype(np.int64)
    after = [[] for _ in range(n)]
    for r in np.lexsort((np.arange(num_resubmissions), slots)):
        after[slots[r]].append(int(r))

    stream = []  # (train_index, resubmission index or -1)
    for position in range(n):
        stream.append((int(order[position]), -1))
        stream.extend((int(order[originals[r]]), r) for r in after[position])

    names = [v[0] for v in VENDORS]
    accuracy = {v[0]: v[1] for v in VENDORS}
    submit_p = np.array([v[2] for v in VENDORS])
    count_values = [c for c, _ in ANNOTATION_COUNTS]
    count_p = np.array([p for _, p in ANNOTATION_COUNTS])

    total = len(stream)
    batch_size = -(-total // num_batches)
    pixels = np.empty((total, 28 * 28), dtype=np.uint8)
    records = []
    key_of_train_index = {}
    for i, (train_index, r) in enumerate(stream):
        key = f"rec-{i + 1:06d}"
        image = images[train_index]
        edit, detail, of = None, None, None
        if r >= 0:
            of = key_of_train_index[train_index]
            if exact[r]:
                edit = "exact"
            else:
                edit = EDITS[edits[r]]
                image, detail = edit_image(image, edit, rng)
        else:
            key_of_train_index[train_index] = key
        pixels[i] = image.reshape(-1)
        true_label = int(true_labels[train_index])
        submitter = int(rng.choice(len(names), p=submit_p))
        count = int(rng.choice(count_values, p=count_p))
        others = [j for j in range(len(names)) if j != submitter]
        annotators = [submitter] + [others[j] for j in rng.permutation(len(others))[:count - 1]]
        annotations = [{"annotator": names[a], "label": noisy_label(true_label, accuracy[names[a]], rng)}
                       for a in annotators]
        stored = majority(np.array([a["label"] for a in annotations]))
        records.append({"key": key, "batch": i // batch_size + 1, "train_index": train_index,
                        "true_label": true_label, "source": names[submitter],
                        "annotations": annotations, "stored_label": stored,
                        "label_error": stored != true_label, "resubmission_of": of,
                        "edit": edit, "edit_detail": detail})
    return records, pixels


def summarize(records, seed, num_batches):
    vendors = {}
    for name, stated, share in VENDORS:
        vendors[name] = {"stated_accuracy": stated, "submit_share": share, "submitted": 0,
                         "labels": 0, "correct": 0}
    for rec in records:
        vendors[rec["source"]]["submitted"] += 1
        for a in rec["annotations"]:
            v = vendors[a["annotator"]]
            v["labels"] += 1
            v["correct"] += int(a["label"] == rec["true_label"])
    for v in vendors.values():
        v["true_accuracy"] = v["correct"] / v["labels"] if v["labels"] else None
    edits = {kind: sum(1 for r in records if r["edit"] == kind) for kind in ["exact"] + EDITS}
    counts = {str(c): sum(1 for r in records if len(r["annotations"]) == c) for c, _ in ANNOTATION_COUNTS}
    return {
        "seed": seed,
        "records": len(records),
        "batches": num_batches,
        "batch_sizes": [sum(1 for r in records if r["batch"] == b) for b in range(1, num_batches + 1)],
        "originals": sum(1 for r in records if r["edit"] is None),
        "resubmissions": {"total": sum(edits.values()), **edits},
        "label_errors": sum(1 for r in records if r["label_error"]),
        "label_error_rate": sum(1 for r in records if r["label_error"]) / len(records),
        "annotations_per_record": counts,
        "error_model": "uniform over the other 9 classes",
        "vendors": vendors,
    }


def write_outputs(workdir, records, pixels, summary, num_batches):
    batch_dir = os.path.join(workdir, "batches")
    os.makedirs(batch_dir, exist_ok=True)
    as_text = [str(v) for v in range(256)]  # pixel value -> its decimal text
    files = [open(os.path.join(batch_dir, f"batch-{b}.jsonl"), "w") for b in range(1, num_batches + 1)]
    try:
        for rec, row in zip(records, pixels):
            annotations = json.dumps(rec["annotations"], separators=(",", ":"))
            files[rec["batch"] - 1].write(
                f'{{"key":"{rec["key"]}","width":28,"height":28,"source":"{rec["source"]}",'
                f'"annotations":{annotations},"pixels":[{",".join(map(as_text.__getitem__, row.tolist()))}]}}\n')
    finally:
        for f in files:
            f.close()
    with open(os.path.join(workdir, "truth.jsonl"), "w") as f:
        for rec in records:
            f.write(json.dumps(rec, separators=(",", ":")) + "\n")
    with open(os.path.join(workdir, "truth_summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
        f.write("\n")
    np.savez(os.path.join(workdir, "records.npz"), pixels=pixels,
             true_label=np.array([r["true_label"] for r in records], dtype=np.int64),
             stored_label=np.array([r["stored_label"] for r in records], dtype=np.int64),
             batch=np.array([r["batch"] for r in records], dtype=np.int64))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--batches", type=int, default=6)
    parser.add_argument("--limit", type=int, default=0,
                        help="use only the first LIMIT training images (smoke runs)")
    parser.add_argument("--data", default=DEFAULT_DATA, help="folder with the Fashion-MNIST IDX files")
    args = parser.parse_args(argv)
    images, labels = load_split(args.data, "train")
    if args.limit:
        images, labels = images[:args.limit], labels[:args.limit]
    records, pixels = generate(images, labels, args.seed, args.batches)
    summary = summarize(records, args.seed, args.batches)
    write_outputs(args.workdir, records, pixels, summary, args.batches)
    return summary


if __name__ == "__main__":
    s = main()
    print(json.dumps({"records": s["records"], "resubmissions": s["resubmissions"],
                      "label_errors": s["label_errors"]}))
