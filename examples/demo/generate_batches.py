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
   submitting 10%, 20%, 30% and 40% of the records (the cheap vendors do the
   bulk of the volume, the near-expert one a small share). Every record is
   labelled by its submitting vendor (its `source`); a second and a third
   opinion come from vendors drawn without replacement among the other three,
   and are bought where they are needed: the two premium vendors' records are
   spot-checked (1, 2, 3 annotations with probability 0.80, 0.15, 0.05),
   vendor_c's are reviewed about half the time (0.40, 0.45, 0.15) and nearly
   every record of the 0.60 vendor is reviewed (0.10, 0.70, 0.20).
   Re-submissions are labelled afresh, like any record.

   A vendor's mistakes are not uniform, because real annotators' are not (the
   human relabelling of CIFAR-10, CIFAR-10N, puts most errors between
   look-alike classes: cat/dog, automobile/truck). Each vendor answers from a
   10 x 10 confusion matrix built as follows:
     how often   class c is mislabelled (1 - accuracy) * DIFFICULTY[c], the
                 difficulties having mean 1, so the vendor's accuracy over the
                 balanced classes is its stated accuracy: shirts are the
                 hardest class, trousers the easiest;
     where to    80% of the mistakes go to a look-alike class (SIMILAR[c],
                 weights rounded from the confusion matrix of a 1-nearest-
                 neighbour pixel classifier on Fashion-MNIST: the five tops
                 T-shirt/top, Pullover, Dress, Coat, Shirt among themselves,
                 Sandal/Sneaker/Ankle boot among themselves, Trouser with
                 Dress), 20% are slips, uniform over the other 9 classes;
     bias        vendor_d's guideline folds classes: its look-alike mistakes on
                 a Shirt are all "T-shirt/top", on a Coat all "Pullover", on an
                 Ankle boot all "Sneaker" (a weak vendor's systematic error).
   The stored label is the majority of the annotations with ties broken
   toward the smallest label (winnow's rule for a record without `label`).
   A reviewed record with two disagreeing annotations is such a tie, and the
   three folds point to a smaller label (T-shirt/top 0 < Shirt 6, Pullover 2
   < Coat 4, Sneaker 7 < Ankle boot 9), so when vendor_d folds and its
   reviewer does not, the raw label is vendor_d's: the raw labels keep most of
   vendor_d's bias even on reviewed records. Dawid-Skene, which weighs each
   vendor by its estimated confusion matrix (a model this noise fits: errors
   depend on the vendor and the true class only), undoes it where a second
   opinion exists.
4. Batches. The stream of N + R records is cut into `--batches` (default 6)
   manifests of equal size, batch-1.jsonl .. batch-6.jsonl.

5. Review (optional, `review_round`, called by the main job after curation):
   the records curation left flagged go back to one vendor (the main job asks
   vendor_a, 0.98), which labels each once more from its confusion matrix.
   Its answers arrive as batches/review.csv (item, annotator, label): one
   more annotation of each stored sample, as an annotation tool exports them.
   The draws come from their own stream (seed, 1), so the six batches are the
   same with or without a review.

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
                      brightness, noise; review for a review answer) and
                      edit_detail.
  truth_summary.json  the seed and parameters, per-vendor stated and true
                      accuracy on the labels it actually gave and its planted
                      confusion matrix, planted re-submissions by kind,
                      planted label errors (overall and per true class).
  records.npz         the same records as arrays (pixels uint8 [M, 784],
                      true_label, stored_label, batch) for the training runs.
"""
import argparse
import json
import os
import sys

import numpy as np

# The IDX reader is shared with the Python examples.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from fashion_mnist_idx import DEFAULT_DATA, load_split  # noqa: E402

# (name, stated label accuracy, share of the records it submits, probabilities
# of 1, 2 and 3 annotations on the records it submits)
VENDORS = [("vendor_a", 0.98, 0.10, (0.80, 0.15, 0.05)),
           ("vendor_b", 0.95, 0.20, (0.80, 0.15, 0.05)),
           ("vendor_c", 0.85, 0.30, (0.40, 0.45, 0.15)),
           ("vendor_d", 0.60, 0.40, (0.10, 0.70, 0.20))]
CLASS_NAMES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
               "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"]
# Where a vendor's look-alike mistakes on a true class go: {class: weight}.
# Rounded from the confusions of a 1-nearest-neighbour pixel classifier
# (20,000 training images, 3,000 test images of Fashion-MNIST).
SIMILAR = {
    0: {6: 0.60, 3: 0.15, 2: 0.15, 4: 0.10},   # T-shirt/top: Shirt, Dress, Pullover, Coat
    1: {3: 0.70, 0: 0.20, 6: 0.10},             # Trouser: Dress, T-shirt/top, Shirt
    2: {4: 0.50, 6: 0.40, 0: 0.10},             # Pullover: Coat, Shirt, T-shirt/top
    3: {4: 0.30, 6: 0.30, 0: 0.25, 1: 0.15},   # Dress: Coat, Shirt, T-shirt/top, Trouser
    4: {2: 0.55, 6: 0.30, 3: 0.15},             # Coat: Pullover, Shirt, Dress
    5: {7: 0.60, 9: 0.35, 8: 0.05},             # Sandal: Sneaker, Ankle boot, Bag
    6: {0: 0.45, 2: 0.30, 4: 0.15, 3: 0.10},   # Shirt: T-shirt/top, Pullover, Coat, Dress
    7: {9: 0.70, 5: 0.30},                      # Sneaker: Ankle boot, Sandal
    8: {6: 0.30, 0: 0.20, 2: 0.20, 3: 0.15, 4: 0.15},  # Bag: the tops
    9: {7: 0.70, 5: 0.30},                      # Ankle boot: Sneaker, Sandal
}
# How often each class is mislabelled relative to the average (mean 1): the
# same 1-NN classifier's per-class error, tempered (its shirts are wrong 2.3x
# as often as the average class; human annotators' spread is assumed milder).
DIFFICULTY = [1.0, 0.5, 1.1, 1.1, 1.2, 1.0, 1.5, 0.8, 0.8, 1.0]
SLIP_SHARE = 0.2  # share of a vendor's mistakes that are slips: uniform over the other classes
# A vendor's systematic bias: {vendor: {true class: the class all its look-alike
# mistakes on that class go to}}. vendor_d folds Shirt into T-shirt/top, Coat
# into Pullover and Ankle boot into Sneaker.
FOLDS = {"vendor_d": {6: 0, 4: 2, 9: 7}}
RESUBMISSION_SHARE = 0.05
EDITS = ["shift", "brightness", "noise"]
NUM_CLASSES = 10


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


def confusion_matrix(vendor, accuracy):
    """P(the vendor answers k | true class c) as a [10, 10] array (rows sum to 1)."""
    matrix = np.zeros((NUM_CLASSES, NUM_CLASSES))
    for c in range(NUM_CLASSES):
        error = (1.0 - accuracy) * DIFFICULTY[c]
        look_alikes = SIMILAR[c]
        if c in FOLDS.get(vendor, {}):
            look_alikes = {FOLDS[vendor][c]: 1.0}
        for k, weight in look_alikes.items():
            matrix[c, k] += error * (1.0 - SLIP_SHARE) * weight
        for k in range(NUM_CLASSES):
            if k != c:
                matrix[c, k] += error * SLIP_SHARE / (NUM_CLASSES - 1)
        matrix[c, c] = 1.0 - error
    return matrix


def noisy_label(true_label, cumulative_rows, rng):
    """One answer drawn from the vendor's confusion row of the true class
    (`cumulative_rows`: the row-wise cumulative sums of its matrix)."""
    drawn = int(np.searchsorted(cumulative_rows[true_label], rng.random(), side="right"))
    return min(drawn, NUM_CLASSES - 1)  # guards against a last cumulative sum of 0.9999...


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
    cumulative = [np.cumsum(confusion_matrix(name, accuracy), axis=1) for name, accuracy, _, _ in VENDORS]
    submit_p = np.array([v[2] for v in VENDORS])

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
        count = int(rng.choice([1, 2, 3], p=np.array(VENDORS[submitter][3])))
        others = [j for j in range(len(names)) if j != submitter]
        annotators = [submitter] + [others[j] for j in rng.permutation(len(others))[:count - 1]]
        annotations = [{"annotator": names[a], "label": noisy_label(true_label, cumulative[a], rng)}
                       for a in annotators]
        stored = majority(np.array([a["label"] for a in annotations]))
        records.append({"key": key, "batch": i // batch_size + 1, "train_index": train_index,
                        "true_label": true_label, "source": names[submitter],
                        "annotations": annotations, "stored_label": stored,
                        "label_error": stored != true_label, "resubmission_of": of,
                        "edit": edit, "edit_detail": detail})
    return records, pixels


def labels_by_vendor(records):
    """Per annotator: (labels it gave, of them right) over the records' annotations."""
    given, right = {}, {}
    for rec in records:
        for a in rec["annotations"]:
            given[a["annotator"]] = given.get(a["annotator"], 0) + 1
            right[a["annotator"]] = right.get(a["annotator"], 0) + int(a["label"] == rec["true_label"])
    return {name: (given[name], right[name]) for name in given}


def summarize(records, seed, num_batches):
    vendors = {}
    for name, stated, share, counts in VENDORS:
        vendors[name] = {"stated_accuracy": stated, "submit_share": share,
                         "annotation_count_probabilities": list(counts), "submitted": 0,
                         "labels": 0, "correct": 0,
                         "confusion": np.round(confusion_matrix(name, stated), 4).tolist()}
    for rec in records:
        vendors[rec["source"]]["submitted"] += 1
    for name, (given, right) in labels_by_vendor(records).items():
        vendors[name]["labels"], vendors[name]["correct"] = given, right
    for v in vendors.values():
        v["true_accuracy"] = v["correct"] / v["labels"] if v["labels"] else None
    edits = {kind: sum(1 for r in records if r["edit"] == kind) for kind in ["exact"] + EDITS}
    counts = {str(c): sum(1 for r in records if len(r["annotations"]) == c) for c in (1, 2, 3)}
    errors_by_class = {}
    for c, name in enumerate(CLASS_NAMES):
        of_class = [r for r in records if r["true_label"] == c]
        errors_by_class[name] = {"records": len(of_class),
                                 "label_errors": sum(1 for r in of_class if r["label_error"])}
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
        "label_errors_by_true_class": errors_by_class,
        "error_model": {"difficulty": DIFFICULTY, "slip_share": SLIP_SHARE,
                        "similar": {str(c): {str(k): w for k, w in m.items()} for c, m in SIMILAR.items()},
                        "folds": {v: {str(c): k for c, k in m.items()} for v, m in FOLDS.items()}},
        "vendors": vendors,
    }


PIXEL_TEXT = [str(v) for v in range(256)]  # pixel value -> its decimal text


def manifest_line(rec, row):
    """The manifest record of one truth record and its pixels (uint8 [784])."""
    annotations = json.dumps(rec["annotations"], separators=(",", ":"))
    return (f'{{"key":"{rec["key"]}","width":28,"height":28,"source":"{rec["source"]}",'
            f'"annotations":{annotations},"pixels":[{",".join(map(PIXEL_TEXT.__getitem__, row.tolist()))}]}}\n')


def write_outputs(workdir, records, pixels, summary, num_batches):
    batch_dir = os.path.join(workdir, "batches")
    os.makedirs(batch_dir, exist_ok=True)
    files = [open(os.path.join(batch_dir, f"batch-{b}.jsonl"), "w") for b in range(1, num_batches + 1)]
    try:
        for rec, row in zip(records, pixels):
            files[rec["batch"] - 1].write(manifest_line(rec, row))
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


def review_round(workdir, truth, keys, vendor, seed):
    """Step 5: `vendor` labels the records `keys` once more. Writes its answers
    as batches/review.csv (item,annotator,label: one more annotation of each
    stored sample, for `winnow import-annotations`) and their truth as
    review_answers.jsonl; returns those truth records (key: the item, one
    annotation each)."""
    names = [v[0] for v in VENDORS]
    if vendor not in names:
        raise SystemExit(f"review: vendor '{vendor}' is not one of {', '.join(names)}")
    rng = np.random.default_rng([seed, 1])
    cumulative = np.cumsum(confusion_matrix(vendor, VENDORS[names.index(vendor)][1]), axis=1)
    row_of_key = {t["key"]: i for i, t in enumerate(truth)}
    answers = []
    for key in sorted(keys, key=row_of_key.__getitem__):  # in stream order
        original = truth[row_of_key[key]]
        label = noisy_label(original["true_label"], cumulative, rng)
        answers.append({"key": key, "true_label": original["true_label"],
                        "annotations": [{"annotator": vendor, "label": label}],
                        "label_error": label != original["true_label"]})
    with open(os.path.join(workdir, "batches", "review.csv"), "w") as f:
        f.write("item,annotator,label\n")
        for a in answers:
            f.write(f"{a['key']},{vendor},{a['annotations'][0]['label']}\n")
    with open(os.path.join(workdir, "review_answers.jsonl"), "w") as f:
        for a in answers:
            f.write(json.dumps(a, separators=(",", ":")) + "\n")
    return answers


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
