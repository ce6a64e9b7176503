#!/usr/bin/python3
"""Label issues from training signals against the kNN vote alone (docs/benchmarks.md,
"Training feedback").

Fashion-MNIST's training set with a share of its labels flipped: the MLP example trains
15 epochs with the default sampler and writes each image's loss statistics
(train_fashion_mnist --training-record); the same images with the same labels go into a
winnow dataset (init, import-idx: the kNN vote flags label issues); then
`winnow import-training` takes the statistics back. Prints the precision, recall and F1
of the label issues against the flipped labels, before and after.

  bench/training_feedback.py --build build --flip 0.1 --seed 0 --work /tmp/tf
"""
import argparse, gzip, json, os, sqlite3, struct, subprocess

DATA = "/usr/share/datasets/fashion-mnist"


def scores(db, flipped):
    with sqlite3.connect(db) as c:
        status = dict(c.execute("SELECT external_key, status FROM samples"))
    judged = {k for k, s in status.items() if s in ("accepted", "label_issue")}
    flagged = {k for k, s in status.items() if s == "label_issue"}
    truth = flipped & judged
    tp = len(flagged & truth)
    p, r = tp / max(1, len(flagged)), tp / max(1, len(truth))
    return {"precision": round(p, 3), "recall": round(r, 3),
            "f1": round(2 * p * r / max(1e-9, p + r), 3), "flagged": len(flagged)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--flip", type=float, default=0.1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--work", default="/tmp/winnow-training-feedback")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    record = os.path.join(a.work, f"record-{a.flip}-{a.seed}.jsonl")
    env = dict(os.environ, OMP_NUM_THREADS="1")
    subprocess.run([os.path.join(a.build, "bin/train_fashion_mnist"), "--model", "mlp",
                    "--epochs", str(a.epochs), "--threads", "1", "--seed", str(a.seed),
                    "--flip-labels", str(a.flip), "--training-record", record],
                   check=True, env=env, capture_output=True)
    rows = [json.loads(line) for line in open(record)]
    flipped = {r["key"] for r in rows if r["flipped"]}
    labels = os.path.join(a.work, "labels-idx1-ubyte.gz")
    with gzip.open(labels, "wb") as f:
        f.write(struct.pack(">II", 2049, len(rows)) + bytes(r["label"] for r in rows))
    winnow = os.path.join(a.build, "bin/winnow")
    db = os.path.join(a.work, "d.db")
    for f in os.listdir(a.work):
        if f.startswith("d.db"):
            os.remove(os.path.join(a.work, f))
    subprocess.run([winnow, "init", "--db", db], check=True, capture_output=True)
    subprocess.run([winnow, "import-idx", "-q", "--db", db, "--prefix", "train",
                    os.path.join(DATA, "train-images-idx3-ubyte.gz"), labels],
                   check=True, capture_output=True, env=env)
    knn = scores(db, flipped)
    subprocess.run([winnow, "import-training", "--db", db, record], check=True,
                   capture_output=True)
    print(json.dumps({"flip": a.flip, "seed": a.seed, "flipped": len(flipped),
                      "knn_vote": knn, "with_training": scores(db, flipped)}))


if __name__ == "__main__":
    main()
