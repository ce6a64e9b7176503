#!/usr/bin/python3
"""A simulated annotation campaign: winnow's annotate-next against random tasks and ActiveLab.

About 10,000 Fashion-MNIST images (pixels), each with one label from a pool of simulated
annotators with per-class skills and costs; then ROUNDS rounds of BUDGET tasks, each
answered by the simulated annotators, and the consensus taken after each round. Side by
side on the same simulator, seed and budget:

  winnow    `winnow annotate-next --budget B --annotators pool.csv`, the answers imported
            with `import-annotations`, the consensus by `rejudge --consensus`;
  winnow-trained  the same, and before each request a model trained on the dataset's
            current labels (winnow.CuratedDataset, an MLP, --train-epochs, one thread)
            with a winnow.TrainingRecord of its losses and predictions, imported with
            `winnow import-training`: the class it predicted most is one more voter in
            annotate-next and in the consensus;
  random    random items (not yet asked of that annotator) with random annotators, through
            the same import and consensus;
  activelab cleanlab's ActiveLab (`get_active_learning_scores`, out-of-fold kNN
            probabilities on the pixels) for the items, random annotators, and CROWDLAB's
            consensus (`get_label_quality_multiannotator`);
  activelab-mlp  the same with 5-fold out-of-fold probabilities of winnow-trained's MLP
            (the same model and epochs), so that both sides have the same classifier.

Each line printed is one pipeline's round: consensus accuracy against the truth and the
campaign's cost so far. cleanlab is not a dependency of winnow: pass its source folder
with --cleanlab (e.g. a checkout of github.com/cleanlab/cleanlab) and have scikit-learn
(Debian: python3-sklearn); without it the activelab pipeline is skipped.

    /usr/bin/python3 bench/annotation_campaign.py --cleanlab /tmp/cleanlab --seeds 1 2 3
"""
import argparse
import csv
import gzip
import json
import os
import random
import sys

import numpy as np

from cli_runs import remove_database, winnow

FMNIST = "/usr/share/datasets/fashion-mnist"
TOPS, FOOTWEAR = {0, 2, 3, 4, 6}, {5, 7, 9}
GROUPS = [TOPS, FOOTWEAR, {1, 8}]


def pool(name):
    """Simulated annotators: per-class accuracy and cost per label."""
    tops = lambda t, f, o: [t if c in TOPS else f if c in FOOTWEAR else o for c in range(10)]
    pools = {
        "default": {
            "tops_expert": (tops(0.95, 0.55, 0.8), 2.0),
            "footwear_expert": (tops(0.55, 0.95, 0.8), 2.0),
            "generalist": ([0.8] * 10, 1.0),
            "careful": ([0.93] * 10, 3.0),
            "cheap": ([0.65] * 10, 0.3),
            "spammer": ([0.1] * 10, 0.5),
        },
        "flat": {  # no specialists: skills differ only overall
            "a": ([0.9] * 10, 2.0),
            "b": ([0.75] * 10, 1.0),
            "c": ([0.6] * 10, 0.5),
            "d": ([0.6] * 10, 0.5),
            "spammer": ([0.1] * 10, 0.5),
        },
    }
    return pools[name]


def answer(rng, skill, truth):
    """The annotator's label: right with his skill on the class, else a confusable class
    (the same group) seven times in ten, any other class otherwise."""
    if rng.random() < skill[truth]:
        return truth
    group = next(g for g in GROUPS if truth in g)
    near = [c for c in group if c != truth]
    if near and rng.random() < 0.7:
        return rng.choice(near)
    return rng.choice([c for c in range(10) if c != truth])


def read_fmnist(n):
    with gzip.open(f"{FMNIST}/t10k-images-idx3-ubyte.gz") as f:
        images = np.frombuffer(f.read(), np.uint8, offset=16).reshape(-1, 784)[:n]
    with gzip.open(f"{FMNIST}/t10k-labels-idx1-ubyte.gz") as f:
        labels = np.frombuffer(f.read(), np.uint8, offset=8)[:n].astype(int)
    return images, labels


class Campaign:
    """One pipeline's state: who labelled what, and what it cost."""

    def __init__(self, annotators, initial):
        self.names = list(annotators)
        self.given = {i: dict(a) for i, a in initial.items()}  # item -> {annotator: label}
        self.cost = 0.0


def write_answers(path, tasks, truth, annotators, campaign, rng):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "annotator", "label"])
        for item, who in tasks:
            label = answer(rng, annotators[who][0], truth[item])
            campaign.given[item][who] = label
            campaign.cost += annotators[who][1]
            w.writerow([f"i{item:05d}", who, str(label)])


def winnow_accuracy(args, db, truth):
    winnow(args, "rejudge", "--consensus", "--db", db)
    samples = [json.loads(l) for l in winnow(args, "export", "--db", db).splitlines()]
    label = {s["key"]: s["label"] for s in samples}
    right = 0
    for s in samples:
        own = label[s["duplicate_of_key"]] if s["duplicate_of_key"] else s["label"]
        right += own is not None and int(own) == truth[int(s["key"][1:])]
    return right / len(samples)


def train_and_import(args, db, round_, seed):
    """Trains an MLP on the dataset's labels as they stand (accepted and label_issue
    samples, read with winnow.CuratedDataset) and imports its TrainingRecord."""
    import torch
    import torch.nn.functional as F
    import winnow as winnow_py  # the package; `winnow` here runs the CLI
    torch.set_num_threads(1)
    torch.manual_seed(seed * 100 + round_)
    ds = winnow_py.CuratedDataset(db, status=("accepted", "label_issue"))
    x = torch.from_numpy(np.stack([ds[i][0].reshape(-1) for i in range(len(ds))])).float() / 255
    y = torch.tensor(ds.targets, dtype=torch.int64)
    model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                                weight_decay=5e-4)
    sampler = ds.sampler(args.train_epochs, seed=seed)
    record = winnow_py.TrainingRecord(ds)
    for epoch in range(args.train_epochs):
        plan = torch.tensor(list(sampler), dtype=torch.int64)
        for begin in range(0, len(plan), 128):
            ids = plan[begin:begin + 128]
            logits = model(x[ids])
            per_sample = F.cross_entropy(logits, y[ids], reduction="none")
            record.add(epoch, ids, per_sample.detach(), predicted=logits.detach().argmax(1))
            loss = sampler.update(ids, per_sample)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    path = os.path.join(args.work, f"training-r{round_}.jsonl")
    record.write(path, ds.keys, [ds.classes[t] for t in ds.targets], classes=ds.classes)
    winnow(args, "import-training", "--db", db, "--run", f"round-{round_}", path)


def random_tasks(rng, campaign, n, budget):
    items = rng.sample(range(n), budget)
    tasks = []
    for i in items:
        free = [a for a in campaign.names if a not in campaign.given[i]]
        if free:
            tasks.append((i, rng.choice(free)))
    return tasks


def activelab_round(cl, campaign, images, rng, budget, n, model="knn", epochs=15):
    """ActiveLab's items, random annotators; returns the tasks."""
    matrix, probs = crowd_matrix_and_probs(cl, campaign, images, n, model, epochs)
    scores, _ = cl.multiannotator.get_active_learning_scores(matrix, probs)
    order = np.argsort(scores, kind="stable")[:budget]
    tasks = []
    for i in order:
        free = [a for a in campaign.names if a not in campaign.given[int(i)]]
        if free:
            tasks.append((int(i), rng.choice(free)))
    return tasks


def mlp_oof_probs(images, labels, epochs, folds=5, seed=0):
    """Out-of-fold predicted probabilities of the MLP winnow-trained trains (784-256-10,
    SGD, `epochs` epochs, every sample every epoch), `folds`-fold."""
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(1)
    x = torch.from_numpy(np.ascontiguousarray(images)).float() / 255
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    order = np.random.default_rng(seed).permutation(len(x))
    probs = np.zeros((len(x), 10))
    for f in range(folds):
        held = order[f::folds]
        train = torch.from_numpy(np.setdiff1d(order, held))
        torch.manual_seed(seed * 10 + f)
        model = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10))
        optimizer = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, nesterov=True,
                                    weight_decay=5e-4)
        for _ in range(epochs):
            for batch in train[torch.randperm(len(train))].split(128):
                loss = F.cross_entropy(model(x[batch]), y[batch])
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
        with torch.no_grad():
            probs[held] = torch.softmax(model(x[torch.from_numpy(held)]), 1).numpy()
    return probs


def crowd_matrix_and_probs(cl, campaign, images, n, model="knn", epochs=15):
    import pandas as pd
    from sklearn.model_selection import cross_val_predict
    from sklearn.neighbors import KNeighborsClassifier
    matrix = pd.DataFrame(np.nan, index=range(n), columns=campaign.names)
    for i, given in campaign.given.items():
        for a, label in given.items():
            matrix.at[i, a] = label
    majority = np.array([max(sorted(set(g.values())), key=list(g.values()).count) for g in
                         (campaign.given[i] for i in range(n))])
    consensus = majority
    try:
        result = cl.multiannotator.get_label_quality_multiannotator(matrix, np.full((n, 10), 0.1), verbose=False)
        consensus = result["label_quality"]["consensus_label"].to_numpy()
    except Exception:  # before any item has two labels, CROWDLAB may refuse: the majority
        pass
    if model == "mlp":
        return matrix, mlp_oof_probs(images, consensus, epochs)
    knn = KNeighborsClassifier(n_neighbors=15)
    probs = cross_val_predict(knn, images / 255.0, consensus, cv=5, method="predict_proba")
    return matrix, probs


def crowdlab_accuracy(cl, campaign, images, truth, n, model="knn", epochs=15):
    matrix, probs = crowd_matrix_and_probs(cl, campaign, images, n, model, epochs)
    if (matrix.notna().sum(axis=1) == 1).all():  # one label each: CROWDLAB refuses; it is the label
        consensus = matrix.max(axis=1).to_numpy()
    else:
        result = cl.multiannotator.get_label_quality_multiannotator(matrix, probs, verbose=False)
        consensus = result["label_quality"]["consensus_label"].to_numpy()
    return float((consensus == truth[:n]).mean())


def run_seed(args, seed, cl):
    rng = random.Random(seed)
    annotators = pool(args.pool)
    images, truth = read_fmnist(args.items)
    n = len(truth)
    initial = {}
    for i in range(n):
        who = rng.choice(list(annotators))
        initial[i] = {who: answer(rng, annotators[who][0], truth[i])}
    os.makedirs(args.work, exist_ok=True)
    pool_csv = os.path.join(args.work, "pool.csv")
    with open(pool_csv, "w") as f:
        f.write("annotator,cost\n" + "".join(f"{a},{c}\n" for a, (_, c) in annotators.items()))

    pipelines = [p for p in args.pipelines if not p.startswith("activelab") or cl is not None]
    model_of = {"activelab": "knn", "activelab-mlp": "mlp"}  # the probabilities ActiveLab takes
    dbs = {}
    for name in pipelines:
        if name in model_of:
            continue
        db = dbs[name] = os.path.join(args.work, f"{name}.db")
        remove_database(db)
        manifest = os.path.join(args.work, "initial.jsonl")
        with open(manifest, "w") as f:
            for i in range(n):
                (who, label), = initial[i].items()
                f.write(json.dumps({"key": f"i{i:05d}", "pixels": images[i].tolist(), "width": 28,
                                    "height": 28, "annotations": [{"annotator": who, "label": str(label)}]}) + "\n")
        winnow(args, "init", "--db", db, *args.init_arg)
        winnow(args, "ingest", "--db", db, manifest)
    campaigns = {name: Campaign(annotators, initial) for name in pipelines}
    answer_rng = {name: random.Random(seed * 1000 + k) for k, name in enumerate(pipelines)}
    choice_rng = random.Random(seed + 7)
    mlp_choice_rng = random.Random(seed + 8)  # its own: the other pipelines draw as without it

    def report(name, round_, accuracy):
        print(json.dumps({"seed": seed, "pool": args.pool, "pipeline": name, "round": round_,
                          "spend": args.winnow_spend if name.startswith("winnow") else "random",
                          "calibration": args.calibration if name.startswith("winnow") else None,
                          "accuracy": round(accuracy, 4), "cost": round(campaigns[name].cost, 1),
                          "budget": args.budget}), flush=True)

    for name in pipelines:
        if name == "winnow-trained":
            winnow(args, "rejudge", "--consensus", "--db", dbs[name])
            train_and_import(args, dbs[name], 0, seed)
        acc = crowdlab_accuracy(cl, campaigns[name], images, truth, n, model_of[name],
                                args.train_epochs) if name in model_of \
            else winnow_accuracy(args, dbs[name], truth)
        report(name, 0, acc)
    for round_ in range(1, args.rounds + 1):
        for name in pipelines:
            c = campaigns[name]
            answers = os.path.join(args.work, f"{name}-r{round_}.csv")
            if name == "winnow-trained" and round_ > 1:  # a model of the labels as they stand
                train_and_import(args, dbs[name], round_ - 1, seed)
            if name in ("winnow", "winnow-trained"):
                tasks_csv = os.path.join(args.work, f"{name}-tasks-r{round_}.csv")
                spend = [] if args.winnow_spend == "per-cost" else [
                    "--max-cost", str(args.budget * sum(c for _, c in annotators.values()) / len(annotators))]
                winnow(args, "annotate-next", "--db", dbs[name], "--budget", str(args.budget),
                       "--annotators", pool_csv, "--out", tasks_csv, "--calibration",
                       str(args.calibration), *spend)
                with open(tasks_csv) as f:
                    tasks = [(int(r["item"][1:]), r["annotator"]) for r in csv.DictReader(f)]
            elif name == "random":
                tasks = random_tasks(choice_rng, c, n, args.budget)
            else:
                rng = choice_rng if name == "activelab" else mlp_choice_rng
                tasks = activelab_round(cl, c, images, rng, args.budget, n, model_of[name],
                                        args.train_epochs)
            write_answers(answers, tasks, truth, annotators, c, answer_rng[name])
            if name in model_of:
                report(name, round_, crowdlab_accuracy(cl, c, images, truth, n, model_of[name],
                                                       args.train_epochs))
            else:
                winnow(args, "import-annotations", "--db", dbs[name], answers)
                report(name, round_, winnow_accuracy(args, dbs[name], truth))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--winnow", default="build/bin/winnow")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--work", default="/tmp/winnow-annotation-campaign")
    parser.add_argument("--init-arg", action="append", default=[])
    parser.add_argument("--items", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--pool", default="default", choices=["default", "flat"])
    parser.add_argument("--winnow-spend", default="per-cost", choices=["mean", "per-cost"],
                        help="mean: annotate-next --max-cost BUDGET x the pool's mean cost (what "
                             "random annotators cost); per-cost: no --max-cost (gain per cost)")
    parser.add_argument("--calibration", type=float, default=0.1)
    parser.add_argument("--pipelines", nargs="+", default=["winnow", "random", "activelab"],
                        help="of winnow, winnow-trained, random, activelab, activelab-mlp")
    parser.add_argument("--train-epochs", type=int, default=15,
                        help="winnow-trained: epochs of each round's model")
    parser.add_argument("--cleanlab", help="cleanlab's source folder (not a dependency of winnow)")
    args = parser.parse_args()
    cl = None
    if args.cleanlab:
        sys.path.insert(0, args.cleanlab)
        import cleanlab.multiannotator  # noqa: F401
        import cleanlab as cl
    for seed in args.seeds:
        run_seed(args, seed, cl)


if __name__ == "__main__":
    main()
