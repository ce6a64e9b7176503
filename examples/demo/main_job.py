#!/usr/bin/env python3
"""winnow's main job, end to end: curate a stream of noisy batches, then train less, better.

    PYTHONPATH=build/python /usr/bin/python3 examples/demo/main_job.py --workdir build/demo \
        [--winnow build/bin/winnow] [--model mlp|cnn] [--epochs E] [--quick]

(`scripts/demo` and `winnow demo --workdir DIR` run exactly this.) The steps,
each announced by a `[demo MM:SS]` progress line:

1. generate   examples/demo/generate_batches.py: Fashion-MNIST's 60,000 training
              images plus 5% re-submissions, labelled by four vendors of
              stated quality, cut into 6 manifests; the planted truth beside.
2. serve      `winnow init` twice (default pixel embedder) and two `winnow
              serve` daemons: every batch is dropped into both inboxes; each is
              deduplicated and label-checked as it lands. Pass 1 keeps the
              pixel embedder to the end (the baseline); pass 2 co-evolves.
3. co-evolve  after batch --coevolve-after (3): `winnow rejudge --consensus`
              gives pass 2's samples so far their consensus labels, the model
              is trained for a few epochs on the accepted ones (read with
              winnow.CuratedDataset), its penultimate layer is exported with
              TorchScript, and `winnow rejudge --embedder
              torchscript:embedder.pt` (daemon still running) re-embeds every
              stored sample, rebuilds the index and re-judges every label with
              it; the daemon curates the later batches with the new embedder.
              At the end `winnow rejudge --consensus` gives both passes'
              annotated samples their Dawid-Skene consensus label (the
              annotators' votes and the label the neighbours suggest), flags
              those whose consensus is unsure, and recomputes the gains
              against the complete dataset.
4. figures    both passes' planted label errors caught (flagged or
              relabelled: precision/recall/F1) and duplicates caught, against
              the planted truth.
5. review     the samples pass 2 left flagged go back to one vendor
              (--review-vendor, default vendor_a, the 0.98 one) for one more
              label: what a data team does with a review queue. Its answers
              come back as batches/review.csv (item, annotator, label), and
              `winnow import-annotations` adds each to its sample's
              annotations; `winnow rejudge --consensus` then settles most of
              them. (--review-vendor none skips the round.)
              Then `winnow report` of pass 2 as it ends (Dawid-Skene
              per-source accuracy and consensus labels).
6. train      the same model, optimiser and epoch budget on the clean test set:
              (a) every ingested record with its raw (majority) label;
              (b) pass 2's accepted samples with their consensus labels, read
                  with winnow.CuratedDataset pinned at the revision the job
                  ends at (results.json: training_revision);
              (c) (b) with the infobatch sampler (CuratedDataset.sampler);
              (d) (c) on the 50% of accepted samples of highest gain, and
              (d') (c) on a random 50%.
   feedback   run (c) again with a winnow.TrainingRecord and `winnow
              import-training` its per-sample losses: the mean training loss
              judges each label it trained on; pass 2's label-error figures
              after it ("pass2 + training").
7. results    a table on stdout and WORKDIR/results.json (+ report.html/.json).

Targets checked (and recorded in results.json): (c) >= (a) + 1 point with <= 60%
of (a)'s forward passes; per-source estimated accuracy within 0.03 of the truth
for sources with >= 1,000 labels; pass 2's label-error F1 > pass 1's. One
training run per setting is noisy (about 0.1-0.2 points between torch seeds);
examples/demo/retrain.py re-trains a finished work folder's runs over several
seeds.
"""
import argparse
import json
import math
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

# libgomp spins while waiting by default, which slows training 10-25x when
# anything else shares the 2 cores (docs: build-environment.md, gotcha 6). It
# reads this when torch loads it, so it is set before the import.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import winnow  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import generate_batches  # noqa: E402  (the generator lives beside this file)

MEAN, STD = 0.2860, 0.3530  # Fashion-MNIST training pixel mean / standard deviation
# Per model: the epoch budget of every run and the pruning policy of (c) and
# (d), which go together: InfoBatch trains its last 12.5% of epochs on
# everything, a whole epoch of the CNN's 5, so the CNN prunes harder to stay
# within 60% of (a)'s passes (docs/benchmarks.md, "The main job").
MODEL_DEFAULTS = {"mlp": {"epochs": 15, "policy": "infobatch(r=0.6)"},
                  "cnn": {"epochs": 5, "policy": "infobatch(r=0.75)"}}
START = time.monotonic()


def progress(message):
    elapsed = int(time.monotonic() - START)
    print(f"[demo {elapsed // 60:02d}:{elapsed % 60:02d}] {message}", flush=True)


# --- models -----------------------------------------------------------------------

class Normalize(torch.nn.Module):
    """[B,1,28,28] pixels in [0,1] -> standardised; inside the model so the
    exported embedder takes what winnow's torchscript embedder feeds it."""

    def forward(self, x):
        return (x - MEAN) / STD


def make_model(kind):
    """(model, feature extractor sharing its layers) for 'mlp' or 'cnn'."""
    if kind == "mlp":  # the model of examples/train_fashion_mnist.cpp
        features = torch.nn.Sequential(Normalize(), torch.nn.Flatten(), torch.nn.Linear(784, 256),
                                       torch.nn.ReLU())
        head = torch.nn.Linear(256, 10)
    elif kind == "cnn":  # cnn_small of docs (build-environment.md section 7)
        features = torch.nn.Sequential(
            Normalize(), torch.nn.Conv2d(1, 16, 5), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
            torch.nn.Flatten(), torch.nn.Linear(512, 128), torch.nn.ReLU())
        head = torch.nn.Linear(128, 10)
    else:
        raise SystemExit(f"--model '{kind}' is not mlp or cnn")
    return torch.nn.Sequential(features, head), features


def as_input(pixels_u8):
    """uint8 [n, 784] -> float [n, 1, 28, 28] in [0, 1]."""
    if not pixels_u8.flags.writeable:  # torch warns about read-only numpy arrays
        pixels_u8 = pixels_u8.copy()
    return torch.from_numpy(pixels_u8).float().div_(255.0).reshape(-1, 1, 28, 28)


def train(kind, pixels_u8, labels, epochs, policy, seed, batch_size=128, lr=0.05, dataset=None,
          record=None):
    """Trains one model with winnow.Sampler serving the epochs; returns (model, stats).

    Every run, pruned or not, goes through the sampler ('full' for the
    unpruned ones), so forward passes are counted the same way for all. A
    run on a winnow.CuratedDataset (`dataset`, whose items pixels_u8 and labels
    are) takes its sampler from it, with curation's verdicts; `record` (a
    winnow.TrainingRecord) keeps each sample's losses for `winnow import-training`."""
    torch.manual_seed(seed)
    x = as_input(pixels_u8)
    y = torch.from_numpy(np.asarray(labels, dtype=np.int64))
    model, features = make_model(kind)
    if dataset is not None:
        sampler = dataset.sampler(epochs, policy=policy, seed=seed)
    else:
        sampler = winnow.Sampler(len(x), epochs, policy=policy, seed=seed)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9, nesterov=True,
                                weight_decay=5e-4)
    start = time.perf_counter()
    model.train()
    for epoch in range(epochs):
        for group in optimizer.param_groups:  # cosine decay by epoch
            group["lr"] = 0.5 * lr * (1.0 + math.cos(math.pi * epoch / epochs))
        plan = torch.tensor(list(sampler), dtype=torch.int64)
        for begin in range(0, len(plan), batch_size):
            ids = plan[begin:begin + batch_size]
            per_sample = F.cross_entropy(model(x[ids]), y[ids], reduction="none")
            if record is not None:
                record.add(epoch, ids, per_sample.detach())
            loss = sampler.update(ids, per_sample)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    wall = time.perf_counter() - start
    totals = sampler.totals()
    model.eval()
    return model, features, {"policy": sampler.policy_spec, "samples": len(x), "epochs": epochs,
                             "forward_samples": int(totals["forward_samples"]),
                             "wall_seconds": round(wall, 2)}


def accuracy(model, test_x, test_y):
    with torch.no_grad():
        correct = sum(int((model(test_x[i:i + 2000]).argmax(1) == test_y[i:i + 2000]).sum())
                      for i in range(0, len(test_x), 2000))
    return correct / len(test_x)


# --- the winnow CLI and its daemon ------------------------------------------------

class Winnow:
    def __init__(self, binary, workdir):
        self.binary = binary
        self.workdir = workdir
        self.env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", OMP_NUM_THREADS="1")

    def run(self, *args, capture=False):
        result = subprocess.run([self.binary, *args], env=self.env, text=True,
                                stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        if result.returncode != 0:
            raise SystemExit(f"demo: `winnow {' '.join(args)}` failed ({result.returncode}):\n"
                             f"{result.stderr.strip()}")
        return result.stdout

    def export(self, db):
        return {r["key"]: r for r in map(json.loads, self.run("export", "--db", db, capture=True).splitlines())}


class Daemon:
    """One `winnow serve` process watching its own inbox."""

    def __init__(self, winnow_cli, db, inbox, name):
        self.db, self.inbox, self.name = db, inbox, name
        self.heartbeat = db + ".serve.json"
        self.dropped = 0
        os.makedirs(inbox, exist_ok=True)
        self.log = open(os.path.join(winnow_cli.workdir, f"{name}.serve.log"), "w")
        self.process = subprocess.Popen(
            [winnow_cli.binary, "serve", "--db", db, "--inbox", inbox, "--http-port", "0",
             "--poll-ms", "100"], env=winnow_cli.env, stdout=self.log, stderr=subprocess.STDOUT)

    def drop(self, manifest):
        """Puts a manifest into the inbox the way the protocol asks: under a
        hidden name first, then renamed to *.jsonl (the daemon never sees half a file)."""
        name = os.path.basename(manifest)
        hidden = os.path.join(self.inbox, "." + name + ".part")
        try:
            os.link(manifest, hidden)
        except OSError:
            shutil.copyfile(manifest, hidden)
        os.rename(hidden, os.path.join(self.inbox, name))
        self.dropped += 1

    def status(self):
        try:
            with open(self.heartbeat) as f:
                return json.load(f)
        except (OSError, ValueError):
            return None  # not written yet, or being replaced

    def wait(self):
        """Blocks until every dropped manifest is handled; returns the heartbeat."""
        while True:
            if self.process.poll() is not None:
                self.log.flush()
                with open(self.log.name) as f:
                    tail = f.read()[-2000:]
                raise SystemExit(f"demo: the {self.name} daemon exited ({self.process.returncode}):\n{tail}")
            s = self.status()
            if s:
                m = s["manifests"]
                handled = m["ingested"] + m["skipped"] + m["failed"]
                if handled >= self.dropped and s.get("state") != "processing":
                    if m["failed"]:
                        raise SystemExit(f"demo: the {self.name} daemon failed a manifest: "
                                         f"{json.dumps(s.get('last'))}")
                    return s
            time.sleep(0.1)

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def describe(status):
    d = status.get("dataset") or {}
    return ", ".join(f"{k} {d.get(k, 0)}" for k in
                     ("accepted", "duplicate_exact", "duplicate_near", "label_issue", "rejected"))


# --- curation figures against the truth --------------------------------------------

DUPLICATE = ("duplicate_exact", "duplicate_near")


def prf(tp, flagged, planted):
    p = tp / flagged if flagged else None
    r = tp / planted if planted else None
    f1 = 2 * p * r / (p + r) if p and r else None
    return {"true_positives": tp, "acted_on": flagged, "planted": planted,
            "precision": p, "recall": r, "f1": f1}


def curation_figures(truth, exported):
    """Duplicates and label issues of one pass against the planted truth."""
    by_status = {}
    for r in exported.values():
        by_status[r["status"]] = by_status.get(r["status"], 0) + 1
    planted_dups = [t for t in truth if t["resubmission_of"] and t["edit"] != "review"]
    caught = [t for t in planted_dups if exported[t["key"]]["status"] in DUPLICATE]
    per_kind = {}
    for kind in ("exact", "shift", "brightness", "noise"):
        of_kind = [t for t in planted_dups if t["edit"] == kind]
        per_kind[kind] = {"planted": len(of_kind),
                          "caught": sum(1 for t in of_kind if exported[t["key"]]["status"] in DUPLICATE)}
    # A near copy of an image that was not accepted cannot be found: only
    # accepted samples' vectors are indexed.
    unfindable = sum(1 for t in planted_dups if t["edit"] != "exact"
                     and exported[t["resubmission_of"]]["status"] != "accepted"
                     and exported[t["key"]]["status"] not in DUPLICATE)
    false_dups = sum(1 for t in truth if not t["resubmission_of"]
                     and exported[t["key"]]["status"] in DUPLICATE)
    # Label issues: over the records label quality judged (accepted or
    # label_issue). Planted errors are the wrong majority labels the generator
    # wrote (label_error). Curation acts on a record by flagging it
    # (label_issue) or by relabelling it (a final consensus label other than
    # the majority label); an action on a planted error catches it, an action
    # on a right label is a false alarm. (Scored against the final labels
    # instead, a relabelled error would count as no error at all, and a flag
    # on a label the consensus made right as a false alarm: `residual` below.)
    judged = [t for t in truth if exported[t["key"]]["status"] in ("accepted", "label_issue")]
    flagged = {t["key"] for t in judged if exported[t["key"]]["status"] == "label_issue"}
    relabelled = {t["key"] for t in judged if int(exported[t["key"]]["label"]) != t["stored_label"]}
    wrong = {t["key"] for t in judged if int(exported[t["key"]]["label"]) != t["true_label"]}
    acted = flagged | relabelled
    issues = prf(sum(1 for t in judged if t["label_error"] and t["key"] in acted), len(acted),
                 sum(1 for t in judged if t["label_error"]))
    issues["fixed"] = sum(1 for t in judged if t["label_error"] and t["key"] not in flagged | wrong)
    issues["flagged"] = len(flagged)
    issues["relabelled"] = len(relabelled)
    issues["residual"] = prf(len(flagged & wrong), len(flagged), len(wrong))
    accepted = [t for t in judged if exported[t["key"]]["status"] == "accepted"]
    return {"by_status": by_status,
            "duplicates": {"planted": len(planted_dups), "caught": len(caught), "by_kind": per_kind,
                           "near_copies_of_unaccepted_originals_missed": unfindable,
                           "false_positives": false_dups},
            "label_issues": issues,
            "accepted": len(accepted),
            "accepted_label_errors": sum(1 for t in accepted if t["key"] in wrong)}


def read_jsonl(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


# --- the job ------------------------------------------------------------------------

# What the job writes into the work folder: removed before a run, so the
# databases and inboxes start empty. Nothing else there is touched (other
# scenarios may share the folder, e.g. build/demo/text).
OUTPUTS = ["batches", "inbox1", "inbox2", "truth.jsonl", "truth_summary.json", "records.npz",
           "review_answers.jsonl", "embedder.pt", "report.json", "report.html", "samples.jsonl", "results.json",
           "pass1.serve.log", "pass2.serve.log"]
DATABASE_SUFFIXES = ["", "-journal", "-wal", "-shm", ".index", ".serve.json"]


def clear_outputs(workdir):
    os.makedirs(workdir, exist_ok=True)
    names = OUTPUTS + [db + suffix for db in ("pass1.db", "pass2.db") for suffix in DATABASE_SUFFIXES]
    for name in names:
        path = os.path.join(workdir, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.remove(path)


def parse_args(argv):
    repo = os.path.dirname(os.path.dirname(HERE))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", required=True,
                        help="everything is written here (the job's own files are replaced)")
    parser.add_argument("--winnow", default=os.environ.get("WINNOW_BIN", os.path.join(repo, "build/bin/winnow")),
                        help="the winnow executable")
    parser.add_argument("--model", choices=["mlp", "cnn"], default="mlp")
    parser.add_argument("--epochs", type=int, default=None,
                        help="epoch budget of every run (default: "
                             + ", ".join(f"{m} {d['epochs']}" for m, d in MODEL_DEFAULTS.items()) + ")")
    parser.add_argument("--coevolve-after", type=int, default=3, help="batch after which the embedder is trained")
    parser.add_argument("--coevolve-epochs", type=int, default=3)
    parser.add_argument("--pass2-min-candidate", type=float, default=0.6,
                        help="pass 2's --min-candidate (index cosine of the learned embedding)")
    parser.add_argument("--flag-below", type=float, default=None,
                        help="both passes' --flag-below (label quality under which a label is an "
                             "issue; default: winnow init's 0.1)")
    parser.add_argument("--consensus-flag-below", type=float, default=0.7,
                        help="the final regain --consensus's --consensus-flag-below (consensus "
                             "posterior under which an annotated sample is a label issue)")
    parser.add_argument("--review-vendor", default="vendor_a",
                        choices=[v[0] for v in generate_batches.VENDORS] + ["none"],
                        help="the vendor that labels pass 2's flagged samples once more after "
                             "curation (step 5); 'none': no review round")
    parser.add_argument("--policy", default=None,
                        help="the pruning policy of runs (c) and (d) (default: "
                             + ", ".join(f"{m} {d['policy']}" for m, d in MODEL_DEFAULTS.items()) + ")")
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--train-seeds", type=int, default=3,
                        help="train every run with this many seeds (--seed, --seed + 1, ...) and "
                             "report the mean: one run varies by 0.1-0.2 points between seeds")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--data", default=generate_batches.DEFAULT_DATA)
    parser.add_argument("--quick", action="store_true",
                        help="smoke run: 3,000 images in 2 batches, 1 epoch (for the test)")
    args = parser.parse_args(argv)
    if args.epochs is None:
        args.epochs = 1 if args.quick else MODEL_DEFAULTS[args.model]["epochs"]
    if args.policy is None:
        args.policy = MODEL_DEFAULTS[args.model]["policy"]
    if args.quick:
        args.coevolve_after, args.coevolve_epochs, args.train_seeds = 1, 1, 1
    elif not 1 <= args.coevolve_after <= 6:
        parser.error(f"--coevolve-after {args.coevolve_after} is not a batch (1..6)")
    return args


def main(argv=None):
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    workdir = os.path.abspath(args.workdir)
    if not os.path.exists(args.winnow):
        raise SystemExit(f"demo: no winnow executable at '{args.winnow}' (build it, or pass --winnow)")
    clear_outputs(workdir)
    cli = Winnow(args.winnow, workdir)
    timings = {}
    mark = time.monotonic()

    def lap(name):
        nonlocal mark
        now = time.monotonic()
        timings[name] = round(now - mark, 1)
        mark = now

    # 1. The data.
    num_batches = 2 if args.quick else 6
    progress(f"generating {num_batches} batches from Fashion-MNIST (seed {args.seed})")
    gen_args = ["--workdir", workdir, "--seed", str(args.seed), "--batches", str(num_batches),
                "--data", args.data] + (["--limit", "3000"] if args.quick else [])
    planted = generate_batches.main(gen_args)
    truth = read_jsonl(os.path.join(workdir, "truth.jsonl"))
    records = np.load(os.path.join(workdir, "records.npz"))
    progress(f"  {planted['records']} records, {planted['resubmissions']['total']} re-submissions, "
             f"{planted['label_errors']} wrong majority labels ({100 * planted['label_error_rate']:.1f}%)")
    batches = [os.path.join(workdir, "batches", f"batch-{b}.jsonl") for b in range(1, num_batches + 1)]
    lap("generate")

    # 2-3. Two datasets served side by side, batch by batch: pass 1 keeps the
    # pixel embedder throughout (the baseline); pass 2 is the co-evolving
    # dataset, whose embedder becomes the model after --coevolve-after batches.
    db1, db2 = os.path.join(workdir, "pass1.db"), os.path.join(workdir, "pass2.db")
    flag = [] if args.flag_below is None else ["--flag-below", str(args.flag_below)]
    cli.run("init", "--db", db1, *flag)
    cli.run("init", "--db", db2, *flag)
    daemons = []  # stopped whatever happens, so no daemon outlives the job
    regains = {}
    try:
        daemon1 = Daemon(cli, db1, os.path.join(workdir, "inbox1"), "pass1")
        daemons.append(daemon1)
        daemon2 = Daemon(cli, db2, os.path.join(workdir, "inbox2"), "pass2")
        daemons.append(daemon2)
        progress(f"winnow serve started twice (pixel embedder): pass 1 (baseline) inbox {daemon1.inbox}, "
                 f"pass 2 (co-evolving) inbox {daemon2.inbox}")
        for b, manifest in enumerate(batches, start=1):
            daemon1.drop(manifest)
            daemon2.drop(manifest)
            for name, daemon in (("pass 1", daemon1), ("pass 2", daemon2)):
                progress(f"batch {b}/{num_batches} curated by {name}: {describe(daemon.wait())}")
            if b == args.coevolve_after:
                lap("serving_until_coevolution")
                # The model learns from the data as curation has improved it:
                # the consensus labels of the samples so far.
                regains["coevolve_consensus"] = regain_consensus(cli, db2, "pass 2, before co-evolution",
                                                                 args.consensus_flag_below)
                lap("coevolution_consensus")
                embedder = os.path.join(workdir, "embedder.pt")
                coevolve(db2, args, embedder)
                lap("coevolution_training")
                # The daemon keeps running: rejudge commits in one transaction
                # and the daemon reloads the new embedder at its next batch.
                regains["coevolve"] = json.loads(cli.run(
                    "rejudge", "--db", db2, "--embedder", f"torchscript:{embedder}",
                    "--min-candidate", str(args.pass2_min_candidate), capture=True))
                r = regains["coevolve"]
                progress(f"pass 2: winnow regain --embedder torchscript:{os.path.basename(embedder)}: "
                         f"{r['re_embedded']} samples re-embedded, {r['labels']['newly_flagged']} newly "
                         f"flagged, {r['labels']['cleared']} label issues cleared ({r['seconds']:.1f} s)")
                lap("coevolution_regain")
    finally:
        for daemon in daemons:
            daemon.stop()
    lap("serving")
    # Both passes end the same way: every annotated sample takes the
    # Dawid-Skene consensus of its annotations and of the label its nearest
    # neighbours suggest (one more annotator, weighed by its estimated
    # accuracy per class), and is kept when that consensus is confident
    # (--consensus-flag-below); gains are recomputed against the complete
    # dataset (ingest judged each sample against what came before it).
    for name, db in (("pass1", db1), ("pass2", db2)):
        regains[name] = regain_consensus(cli, db, name, args.consensus_flag_below)
    lap("final_regain")

    # 4. Both passes' curation figures against the planted truth.
    exported1, exported2 = cli.export(db1), cli.export(db2)
    curation = {"pass1": curation_figures(truth, exported1), "pass2": curation_figures(truth, exported2)}
    for name, c in curation.items():
        li, d = c["label_issues"], c["duplicates"]
        progress(f"{name}: planted label errors caught (flagged or relabelled): precision "
                 f"{fmt_num(li['precision'])} recall {fmt_num(li['recall'])} F1 {fmt_num(li['f1'])}, "
                 f"{li['fixed']} fixed; duplicates caught {d['caught']}/{d['planted']}")
    lap("curation_figures")

    # 5. Review: pass 2's flagged samples go back to one vendor for one more label.
    review, answers = None, []
    queue = [key for key, r in exported2.items() if r["status"] == "label_issue"]
    if args.review_vendor != "none" and queue:
        review, answers = review_round(cli, db2, workdir, truth, queue, args)
        exported2 = cli.export(db2)
        curation["pass2_reviewed"] = curation_figures(truth, exported2)
        c = curation["pass2_reviewed"]
        progress(f"pass 2 after the review: {c['accepted']} accepted ({c['accepted_label_errors']} with a "
                 f"wrong label), {c['by_status'].get('label_issue', 0)} still flagged")
        lap("review")

    # The quality report of pass 2 as it ends (the review's answers included).
    for fmt in ("json", "html"):
        extra = ["--samples", os.path.join(workdir, "samples.jsonl")] if fmt == "json" else []
        cli.run("report", "--db", db2, "--format", fmt, "--out", os.path.join(workdir, f"report.{fmt}"), *extra)
    with open(os.path.join(workdir, "report.json")) as f:
        report = json.load(f)
    sources = source_figures(report, planted, truth + answers)
    lap("report")

    # 6. Training runs on the clean test set.
    images, labels = generate_batches.load_split(args.data, "t10k")
    test_x, test_y = as_input(images.reshape(len(images), -1)), torch.from_numpy(labels)
    # (b)-(d') read pass 2 with winnow.CuratedDataset, pinned at the revision
    # the job ends at, so retrain.py trains on the same samples and labels
    # whatever came after (the training feedback below, say).
    dataset = winnow.CuratedDataset(db2)
    plans, label_noise = training_plans(records, truth, dataset, exported2, args.policy, args.seed)
    seeds = [args.seed + i for i in range(args.train_seeds)]
    runs = train_runs(plans, args.model, args.epochs, seeds, test_x, test_y)
    lap("training")

    # 6b. Training feeds curation back: run (c)'s per-sample losses judge its labels.
    feedback = training_feedback(cli, db2, dataset, plans, args, workdir, test_x, test_y)
    curation["pass2_trained"] = curation_figures(truth, cli.export(db2))
    li = curation["pass2_trained"]["label_issues"]
    progress(f"pass 2 after the training feedback: planted label errors caught: precision "
             f"{fmt_num(li['precision'])} recall {fmt_num(li['recall'])} F1 {fmt_num(li['f1'])}")
    lap("training_feedback")

    # 7. Results.
    targets = check_targets(runs, sources, curation)
    results = {"config": {k: v for k, v in vars(args).items()}, "planted": planted,
               "curation": curation, "regain": regains, "review": review, "sources": sources, "runs": runs,
               "training_revision": dataset.revision, "training_feedback": feedback,
               "training_label_noise": label_noise, "targets": targets, "timings": timings,
               "total_seconds": round(time.monotonic() - START, 1)}
    with open(os.path.join(workdir, "results.json"), "w") as f:
        json.dump(results, f, indent=2)
        f.write("\n")
    print_table(results)
    progress(f"done; results in {os.path.join(workdir, 'results.json')}, report in "
             f"{os.path.join(workdir, 'report.html')}")
    return results


def train_runs(plans, model_kind, epochs, seeds, test_x, test_y, wanted=None):
    """Trains every plan (of `wanted`, default all) once per seed; per run the
    mean test accuracy and forward passes over the seeds, and each seed's."""
    runs = {}
    for run_id, what, x, y, policy, dataset in plans:
        if wanted is not None and run_id not in wanted:
            continue
        progress(f"training run ({run_id}) {what}: {len(x)} samples, {epochs} epochs, {model_kind}, "
                 f"seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))}")
        accuracies, forward, wall = [], [], []
        for seed in seeds:
            model, _, stats = train(model_kind, x, y, epochs, policy, seed, dataset=dataset)
            accuracies.append(accuracy(model, test_x, test_y))
            forward.append(stats["forward_samples"])
            wall.append(stats["wall_seconds"])
        runs[run_id] = {"description": what, "policy": stats["policy"], "samples": len(x), "epochs": epochs,
                        "seeds": seeds, "test_accuracies": accuracies,
                        "test_accuracy": round(statistics.mean(accuracies), 4),
                        "test_accuracy_sd": round(statistics.stdev(accuracies), 4) if len(seeds) > 1 else None,
                        "forward_samples": round(statistics.mean(forward)),
                        "wall_seconds": round(statistics.mean(wall), 2)}
        r = runs[run_id]
        spread = f" (sd {r['test_accuracy_sd']:.4f} over {len(seeds)} seeds)" if len(seeds) > 1 else ""
        progress(f"  ({run_id}) test accuracy {r['test_accuracy']:.4f}{spread}, {r['forward_samples']} "
                 f"forward samples, {r['wall_seconds']:.1f} s per run")
    return runs


def training_plans(records, truth, dataset, exported, policy, seed):
    """The training runs (a)-(d') as (id, description, pixels, labels, policy,
    dataset), and the label noise of (a) and (b)'s training labels. (a) is
    every record with its raw label; (b)-(d') read pass 2's accepted samples
    and their consensus labels with `dataset` (a winnow.CuratedDataset, pinned
    at a revision), whose sampler serves (b) and (c); `exported` (pass 2's
    export) gives the gains (d) ranks by."""
    true_of_key = {t["key"]: t["true_label"] for t in truth}
    pixels_b, labels_b = curated_pixels(dataset)
    true_b = np.array([true_of_key[k] for k in dataset.keys], dtype=np.int64)
    gains = np.array([exported[k]["gain"] for k in dataset.keys], dtype=np.float64)
    half = len(dataset) // 2
    rng = np.random.default_rng(seed)
    top_gain = np.sort(np.argsort(-gains, kind="stable")[:half])
    random_half = np.sort(rng.permutation(len(dataset))[:half])
    pixels, stored, true_label = records["pixels"], records["stored_label"], records["true_label"]
    plans = [
        ("a", "all records, raw labels, full", pixels, stored, "full", None),
        ("b", "accepted, consensus labels, full", pixels_b, labels_b, "full", dataset),
        ("c", f"accepted, consensus labels, {policy}", pixels_b, labels_b, policy, dataset),
        ("d", f"top-50% gain of (c), {policy}", pixels_b[top_gain], labels_b[top_gain], policy, None),
        ("d'", f"random 50% of (c), {policy}", pixels_b[random_half], labels_b[random_half], policy,
         None),
    ]
    label_noise = {"a": float(np.mean(stored != true_label)),
                   "b": float(np.mean(labels_b != true_b))}
    return plans, label_noise


def regain_consensus(cli, db, name, flag_below):
    """`winnow rejudge --consensus` on db (a daemon may be serving it); its JSON report."""
    r = json.loads(cli.run("rejudge", "--db", db, "--consensus", "--consensus-flag-below", str(flag_below),
                           capture=True))
    voters = ", ".join(f"{v['votes']} at {v['accuracy']:.3f}" for v in r["consensus"]["neighbour_voters"])
    progress(f"{name}: winnow regain --consensus: {r['relabelled']} consensus labels, "
             f"{r['labels']['newly_flagged']} newly flagged, {r['labels']['cleared']} cleared; "
             f"neighbours' votes (agreement < 0.6, 0.6-0.9, >= 0.9) at estimated accuracy: {voters} "
             f"({r['seconds']:.1f} s)")
    return r


def review_round(cli, db, workdir, truth, queue, args):
    """Sends the samples of `queue` (keys) to --review-vendor for one more label
    (generate_batches.review_round simulates it), imports the answers as
    annotations of those samples and takes the consensus again. Returns the
    round's figures and the answers' truth records."""
    answers = generate_batches.review_round(workdir, truth, queue, args.review_vendor, args.seed)
    wrong = sum(1 for a in answers if a["label_error"])
    progress(f"review: the {len(queue)} samples pass 2 left flagged go to {args.review_vendor} for one more "
             f"label ({wrong} of its answers wrong); winnow import-annotations batches/review.csv")
    imported = json.loads(cli.run("import-annotations", "--db", db,
                                  os.path.join(workdir, "batches", "review.csv"),
                                  capture=True).splitlines()[-1])
    regain = regain_consensus(cli, db, "pass 2, after the review", args.consensus_flag_below)
    return {"vendor": args.review_vendor, "sent": len(queue), "answers_wrong": wrong,
            "annotation_rounds": imported["annotation_rounds"], "counts": imported["counts"],
            "regain": regain}, answers


def training_feedback(cli, db, dataset, plans, args, workdir, test_x, test_y):
    """Run (c) once more with a winnow.TrainingRecord, its per-sample losses
    imported back with `winnow import-training`: the run's mean loss judges the
    labels it trained on. Returns the import's summary and the run's accuracy."""
    run_id, _, x, y, policy, _ = next(p for p in plans if p[0] == "c")
    record = winnow.TrainingRecord(dataset)
    model, _, stats = train(args.model, x, y, args.epochs, policy, args.seed, dataset=dataset,
                            record=record)
    path = os.path.join(workdir, "training.jsonl")
    record.write(path, dataset.keys, [dataset.classes[t] for t in dataset.targets])
    summary = json.loads(cli.run("import-training", "--db", db, "--run", "demo-c", path,
                                 capture=True).splitlines()[-1])
    progress(f"training feedback: run ({run_id})'s losses back with winnow import-training: "
             f"{summary.get('imported')} samples, {summary.get('newly_flagged')} newly flagged")
    return {"import": summary, "test_accuracy": accuracy(model, test_x, test_y),
            "forward_samples": stats["forward_samples"]}


def curated_pixels(dataset):
    """A winnow.CuratedDataset's items as uint8 [n, 784] pixels and int class labels."""
    pixels = np.stack([dataset[i][0].reshape(-1) for i in range(len(dataset))]) if len(dataset) else \
        np.zeros((0, 784), dtype=np.uint8)
    labels = np.array([int(dataset.classes[t]) for t in dataset.targets], dtype=np.int64)
    return pixels, labels


def coevolve(db, args, embedder_path):
    """Trains the model on the dataset's accepted samples so far (their stored
    labels, the consensus ones), read with winnow.CuratedDataset, and saves its
    feature extractor as a TorchScript embedder."""
    dataset = winnow.CuratedDataset(db)
    pixels, labels = curated_pixels(dataset)
    progress(f"co-evolution: training the {args.model} for {args.coevolve_epochs} epoch(s) on the "
             f"{len(dataset)} accepted samples (winnow.CuratedDataset, revision {dataset.revision})")
    _, features, stats = train(args.model, pixels, labels, args.coevolve_epochs, "full", args.seed,
                               dataset=dataset)
    features.eval()
    with torch.no_grad():
        traced = torch.jit.trace(features, torch.rand(4, 1, 28, 28))
    traced.save(embedder_path)
    progress(f"co-evolution: embedder exported ({stats['wall_seconds']:.1f} s of training) -> {embedder_path}")


def source_figures(report, planted, truth):
    """The report's estimate of every vendor's accuracy next to the truth: the
    share of right labels among all it gave (`truth`: every record, and the
    review's answers)."""
    counts = generate_batches.labels_by_vendor(truth)
    out = []
    for s in report["sources"]:
        name, est = s["name"], s.get("estimated_accuracy")
        known = name in counts
        true_accuracy = counts[name][1] / counts[name][0] if known else None
        out.append({"name": name, "labels": s.get("labels"), "estimated_accuracy": est,
                    "stated_accuracy": planted["vendors"].get(name, {}).get("stated_accuracy"),
                    "true_accuracy": true_accuracy, "true_labels": counts[name][0] if known else None,
                    "error": None if est is None or not known else est - true_accuracy})
    return sorted(out, key=lambda s: s["name"])


def c_against_a(runs):
    """Run (c)'s test accuracy over (a)'s in points, and its share of (a)'s forward passes."""
    a, c = runs["a"], runs["c"]
    return {"accuracy_gain_points": round(100 * (c["test_accuracy"] - a["test_accuracy"]), 2),
            "forward_share_of_a": round(c["forward_samples"] / a["forward_samples"], 3)}


def check_targets(runs, sources, curation):
    a, c = runs["a"], runs["c"]
    judged = [s for s in sources if (s["labels"] or 0) >= 1000]
    f1_1, f1_2 = curation["pass1"]["label_issues"]["f1"], curation["pass2"]["label_issues"]["f1"]
    return {
        "c_beats_a_by_1_point": {
            **c_against_a(runs),
            "met": c["test_accuracy"] >= a["test_accuracy"] + 0.01
                   and c["forward_samples"] <= 0.6 * a["forward_samples"]},
        "source_accuracy_within_0.03": {
            "worst_error": max((abs(s["error"]) for s in judged if s["error"] is not None), default=None),
            "met": bool(judged) and all(s["error"] is not None and abs(s["error"]) <= 0.03 for s in judged)},
        "pass2_f1_beats_pass1": {"pass1_f1": f1_1, "pass2_f1": f1_2,
                                 "met": f1_1 is not None and f1_2 is not None and f1_2 > f1_1},
    }


def fmt_num(v, digits=3):
    return "n/a" if v is None else f"{v:.{digits}f}"


def print_table(results):
    runs, a = results["runs"], results["runs"]["a"]
    print()
    seeds = len(a["seeds"])
    print(f"run  data                                     samples  test acc (mean of {seeds})  forward passes  "
          f"(of a)   wall s")
    for run_id, r in runs.items():
        sd = f" ± {r['test_accuracy_sd']:.4f}" if r["test_accuracy_sd"] is not None else ""
        print(f"({run_id:<2}) {r['description']:<40} {r['samples']:>7}  {r['test_accuracy']:.4f}{sd:<9}  "
              f"{r['forward_samples']:>14}  {r['forward_samples'] / a['forward_samples']:>6.1%}  "
              f"{r['wall_seconds']:>7.1f}")
    print()
    print("curation            label errors P / R / F1       duplicates caught/planted  false dups  accepted (wrong labels)")
    for name, c in results["curation"].items():
        li, d = c["label_issues"], c["duplicates"]
        name = {"pass2_reviewed": "pass2 + review", "pass2_trained": "pass2 + training"}.get(name, name)
        print(f"{name:<19} {fmt_num(li['precision'])} / {fmt_num(li['recall'])} / {fmt_num(li['f1'])}"
              f"           {d['caught']:>6}/{d['planted']:<6}            {d['false_positives']:>6}  "
              f"{c['accepted']} ({c['accepted_label_errors']})")
    print()
    print("source     labels  stated  true    estimated  error")
    for s in results["sources"]:
        print(f"{s['name']:<10} {s['labels'] or 0:>6}  {fmt_num(s['stated_accuracy'], 2):>6}  "
              f"{fmt_num(s['true_accuracy'])}   {fmt_num(s['estimated_accuracy'])}    "
              f"{'n/a' if s['error'] is None else format(s['error'], '+.3f')}")
    print()
    for name, t in results["targets"].items():
        detail = ", ".join(f"{k} {v if not isinstance(v, float) else round(v, 4)}" for k, v in t.items() if k != "met")
        print(f"target {name}: {'MET' if t['met'] else 'MISSED'} ({detail})")
    print(f"total {results['total_seconds']:.0f} s")


if __name__ == "__main__":
    main()
