#!/usr/bin/python3
"""Label issues from winnow's training statistics against cleanlab's find_label_issues with
the same model's out-of-fold probabilities (docs/benchmarks.md, "Training feedback").

Fashion-MNIST's 60,000 training images, a share of their labels flipped (seeded); the MLP
of examples/ (784-256-10, SGD with Nesterov momentum, cosine learning rate, 15 epochs,
batch 128), in PyTorch on one thread:
  * winnow: one run on all images with winnow.Sampler's default (40% of forward samples
    saved) and a winnow.TrainingRecord; a sample is flagged when its mean training loss is
    above ln(10), the rule `winnow import-training` applies;
  * cleanlab: the same model trained on K-1 folds predicts the held-out fold (out-of-fold
    probabilities, full data, no pruning), then cleanlab.filter.find_label_issues.
Prints precision, recall and F1 against the flipped labels, and each method's training time.
cleanlab is a peer, run from outside the tree: PYTHONPATH=build/python:CLEANLAB_SRC.

  PYTHONPATH=build/python:/tmp/cleanlab-src bench/training_feedback_cleanlab.py --flip 0.1
"""
import argparse, gzip, itertools, json, math, os, struct, time

import numpy as np
import torch
import torch.nn.functional as F

import winnow

DATA = "/usr/share/datasets/fashion-mnist"


def load():
    with gzip.open(os.path.join(DATA, "train-images-idx3-ubyte.gz")) as f:
        _, n, rows, cols = struct.unpack(">IIII", f.read(16))
        x = np.frombuffer(f.read(), dtype=np.uint8).reshape(n, rows * cols)
    with gzip.open(os.path.join(DATA, "train-labels-idx1-ubyte.gz")) as f:
        f.read(8)
        y = np.frombuffer(f.read(), dtype=np.uint8).astype(np.int64)
    return torch.from_numpy(x.astype(np.float32) / 255.0), y


def mlp():
    return torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))


def _batches(indices, size=128):
    """The sampler's indices of an epoch, served lazily, `size` at a time."""
    while True:
        chunk = list(itertools.islice(indices, size))
        if not chunk:
            return
        yield torch.tensor(chunk, dtype=torch.int64)


def train(x, y, epochs, seed, sampler_policy=None, record=None):
    """Trains the MLP on (x, y); with a policy, through winnow.Sampler (and `record`)."""
    torch.manual_seed(seed)
    model = mlp()
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                          weight_decay=5e-4)
    labels = torch.from_numpy(y)
    n = len(y)
    sampler = winnow.Sampler(n, epochs, seed=seed) if sampler_policy else None
    for epoch in range(epochs):
        for group in opt.param_groups:
            group["lr"] = 0.5 * 0.05 * (1 + math.cos(math.pi * epoch / epochs))
        batches = (_batches(iter(sampler)) if sampler
                   else torch.randperm(n).split(128))
        for ids in batches:
            per_sample = F.cross_entropy(model(x[ids]), labels[ids], reduction="none")
            if sampler:
                if record is not None:
                    record.add(epoch, ids, per_sample.detach())
                loss = sampler.update(ids, per_sample)
            else:
                loss = per_sample.mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    return model


def scores(flagged, flipped):
    tp = len(flagged & flipped)
    p, r = tp / max(1, len(flagged)), tp / max(1, len(flipped))
    return {"precision": round(p, 3), "recall": round(r, 3),
            "f1": round(2 * p * r / max(1e-9, p + r), 3), "flagged": len(flagged)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--flip", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--folds", type=int, default=4)
    a = ap.parse_args()
    torch.set_num_threads(1)
    from cleanlab.filter import find_label_issues
    x, y = load()
    rng = np.random.default_rng(a.seed + 1000)
    n = len(y)
    flip = rng.choice(n, int(round(a.flip * n)), replace=False)
    given = y.copy()
    given[flip] = (y[flip] + rng.integers(1, 10, len(flip))) % 10
    flipped = set(flip.tolist())

    t0 = time.time()
    record = winnow.TrainingRecord(n)
    train(x, given, a.epochs, a.seed, sampler_policy="default", record=record)
    winnow_s = time.time() - t0
    threshold = math.log(10)
    ours = {i for i in range(n) if record.stats(i)["mean_loss"] > threshold}

    t0 = time.time()
    probs = np.zeros((n, 10), dtype=np.float32)
    folds = np.array_split(np.random.default_rng(a.seed).permutation(n), a.folds)
    for k in range(a.folds):
        held = folds[k]
        rest = np.concatenate([folds[j] for j in range(a.folds) if j != k])
        model = train(x[rest], given[rest], a.epochs, a.seed + k)
        with torch.no_grad():
            probs[held] = F.softmax(model(x[held]), dim=1).numpy()
    issues = find_label_issues(given, probs)
    cleanlab_s = time.time() - t0
    theirs = set(np.flatnonzero(issues).tolist())
    print(json.dumps({"flip": a.flip, "seed": a.seed, "flipped": len(flipped),
                      "winnow_training": {**scores(ours, flipped), "seconds": round(winnow_s, 1)},
                      "cleanlab_out_of_fold": {**scores(theirs, flipped),
                                               "seconds": round(cleanlab_s, 1)}}))


if __name__ == "__main__":
    main()
