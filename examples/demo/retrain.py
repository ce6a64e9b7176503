#!/usr/bin/env python3
"""Re-trains the main job's runs (a)-(d') of a finished work folder over several seeds.

    PYTHONPATH=build/python /usr/bin/python3 examples/demo/retrain.py --workdir build/demo \
        [--seeds 3] [--runs a,b,c] [--winnow build/bin/winnow]

One training run moves by 0.1-0.2 points of test accuracy from one torch seed
to the next, as large as the margins the main job's targets are about. This
trains the same plans (main_job.training_plans: the same data, labels, model,
budget and policy as the job) with seeds seed, seed + 1, ... and prints one
JSON object: per run the accuracies, their mean and sample standard deviation
and the forward passes; and (c) - (a) in points, mean over the seeds.
"""
import argparse
import json
import os
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import main_job  # noqa: E402  (sets OMP_WAIT_POLICY before torch loads)
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
    args = parser.parse_args(argv)
    with open(os.path.join(args.workdir, "results.json")) as f:
        config = json.load(f)["config"]
    torch.set_num_threads(args.threads or config["threads"])
    truth = main_job.read_jsonl(os.path.join(args.workdir, "truth.jsonl"))
    records = np.load(os.path.join(args.workdir, "records.npz"))
    exported = main_job.Winnow(args.winnow, args.workdir).export(os.path.join(args.workdir, "pass2.db"))
    plans, _ = main_job.training_plans(records, truth, exported, config["policy"], config["seed"])
    images, labels = generate_batches.load_split(config["data"], "t10k")
    test_x, test_y = main_job.as_input(images.reshape(len(images), -1)), torch.from_numpy(labels)
    wanted = args.runs.split(",")
    seeds = [config["seed"] + i for i in range(args.seeds)]
    runs = {}
    for run_id, what, x, y, policy in plans:
        if run_id not in wanted:
            continue
        accuracies, forward = [], []
        for seed in seeds:
            model, _, stats = main_job.train(config["model"], x, y, config["epochs"], policy, seed)
            accuracies.append(main_job.accuracy(model, test_x, test_y))
            forward.append(stats["forward_samples"])
            print(f"({run_id}) seed {seed}: test accuracy {accuracies[-1]:.4f}", file=sys.stderr, flush=True)
        runs[run_id] = {"description": what, "samples": len(x), "seeds": seeds, "test_accuracy": accuracies,
                        "mean": round(statistics.mean(accuracies), 4),
                        "sd": round(statistics.stdev(accuracies), 4) if len(accuracies) > 1 else None,
                        "forward_samples": forward}
    out = {"workdir": args.workdir, "model": config["model"], "epochs": config["epochs"], "runs": runs}
    if "a" in runs and "c" in runs:
        out["c_minus_a_points"] = round(100 * (runs["c"]["mean"] - runs["a"]["mean"]), 2)
        out["c_forward_share_of_a"] = round(statistics.mean(runs["c"]["forward_samples"])
                                            / statistics.mean(runs["a"]["forward_samples"]), 3)
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
