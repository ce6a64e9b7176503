#!/usr/bin/env python3
"""Re-trains the main job's runs (a)-(d') of a finished work folder (other seeds, policy).

    PYTHONPATH=build/python /usr/bin/python3 examples/demo/retrain.py --workdir build/demo \
        [--seeds 3] [--runs a,b,c] [--policy P] [--out FILE] [--winnow build/bin/winnow]

Trains the job's plans again (main_job.training_plans and train_runs: the same
data, labels, model and budget) without curating again, with seeds seed,
seed + 1, ... and optionally another policy for (c), (d) and (d'), and writes
one JSON object (WORKDIR/retrain.json or --out): per run the accuracies, their
mean and standard deviation and the forward passes; with (a) and (c), (c)'s
gain over (a) in points and its share of (a)'s passes.
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import main_job  # noqa: E402  (sets OMP_WAIT_POLICY before torch loads)
import winnow  # noqa: E402
import generate_batches  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402


def main(argv=None):
    repo = os.path.dirname(os.path.dirname(HERE))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", required=True, help="a work folder main_job.py finished in")
    parser.add_argument("--winnow", default=os.environ.get("WINNOW_BIN", os.path.join(repo, "build/bin/winnow")))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--runs", default="a,b,c,d,d'", help="which runs, comma-separated")
    parser.add_argument("--threads", type=int, default=None, help="torch threads (default: the job's)")
    parser.add_argument("--policy", default=None, help="the policy of (c), (d), (d') (default: the job's)")
    parser.add_argument("--out", default=None, help="where the JSON goes (default: WORKDIR/retrain.json)")
    args = parser.parse_args(argv)
    with open(os.path.join(args.workdir, "results.json")) as f:
        results = json.load(f)
    config = results["config"]
    torch.set_num_threads(args.threads or config["threads"])
    truth = main_job.read_jsonl(os.path.join(args.workdir, "truth.jsonl"))
    records = np.load(os.path.join(args.workdir, "records.npz"))
    db = os.path.join(args.workdir, "pass2.db")
    exported = main_job.Winnow(args.winnow, args.workdir).export(db)
    # The samples and labels the job trained on: pass 2 at the revision it pinned.
    dataset = winnow.CuratedDataset(db, revision=results.get("training_revision"))
    policy = args.policy or config["policy"]
    plans, _ = main_job.training_plans(records, truth, dataset, exported, policy, config["seed"])
    images, labels = generate_batches.load_split(config["data"], "t10k")
    test_x, test_y = main_job.as_input(images.reshape(len(images), -1)), torch.from_numpy(labels)
    seeds = [config["seed"] + i for i in range(args.seeds)]
    runs = main_job.train_runs(plans, config["model"], config["epochs"], seeds, test_x, test_y,
                               wanted=args.runs.split(","))
    out = {"workdir": args.workdir, "model": config["model"], "epochs": config["epochs"], "policy": policy,
           "runs": runs}
    if "a" in runs and "c" in runs:
        out["c_against_a"] = main_job.c_against_a(runs)
    path = args.out or os.path.join(args.workdir, "retrain.json")
    with open(path, "w") as f:
        json.dump(out, f, indent=2)
        f.write("\n")
    main_job.progress(f"done; results in {path}")


if __name__ == "__main__":
    main()
