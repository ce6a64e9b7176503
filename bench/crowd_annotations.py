#!/usr/bin/python3
"""A simulated crowd through `winnow import-annotations` and through `winnow
ingest` with content: the report's figures from both (docs/benchmarks.md,
"Annotations and Dawid-Skene").

Per seed: N items with a true class each (K classes, uniform); annotators of
the given accuracies label every item, right with their accuracy, else one of
the other classes at random. The rows are written as the long CSV
(item,annotator,label) sorted by annotator, as crowd-kit's files often are,
and, for the comparison, as a JSON Lines manifest of text records (twelve
random words each, so no two are near duplicates) carrying the same
annotations, items in the CSV's first-appearance order. Two datasets, each
`winnow init --embedder hashed-ngrams(n=3,dim=64) --flag-below 0` (kNN never
flags, so both keep every sample accepted), one with `import-annotations`,
one with `ingest`; then `winnow report --samples`. Per seed it prints each
annotator's observed accuracy (its share of right labels) and Dawid-Skene
estimated accuracy from both, the majority vote's and
the consensus's accuracy against the truth from both, and whether every
annotator row, the dataset figures and every sample's labels are equal.
Prints JSON.
"""
import argparse, csv, json, os, random, subprocess, tempfile


def simulate(items, classes, accuracies, seed):
    rng = random.Random(seed)
    truth = {f"img-{i}": rng.randrange(classes) for i in range(items)}
    rows = []
    for a, accuracy in enumerate(accuracies):
        for item, t in truth.items():
            label = t if rng.random() < accuracy else (t + 1 + rng.randrange(classes - 1)) % classes
            rows.append((item, f"w{a + 1}", f"class-{label}"))
    return {k: f"class-{v}" for k, v in truth.items()}, rows


def cli(winnow, *args):
    return subprocess.run([winnow, *args], check=True, capture_output=True, text=True).stdout


def report(winnow, db, work, tag):
    samples_path = os.path.join(work, f"{tag}-samples.jsonl")
    r = json.loads(cli(winnow, "report", "--db", db, "--samples", samples_path))
    with open(samples_path) as f:
        samples = {s["key"]: s for s in map(json.loads, f)}
    return r, samples


def accuracy(samples, truth, field):
    return sum(samples[k][field] == truth[k] for k in truth) / len(truth)


def run_seed(a, seed, work):
    truth, rows = simulate(a.items, a.classes, a.accuracies, seed)
    csv_path = os.path.join(work, f"crowd-{seed}.csv")
    with open(csv_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["item", "annotator", "label"])
        w.writerows(rows)
    annotations = {}
    for item, annotator, label in rows:
        annotations.setdefault(item, []).append({"annotator": annotator, "label": label})
    rng = random.Random(seed + 1000)
    manifest = os.path.join(work, f"crowd-{seed}.jsonl")
    with open(manifest, "w") as f:
        for item, anns in annotations.items():  # first-appearance order, as the importer
            text = " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(5))
                            for _ in range(12))
            f.write(json.dumps({"key": item, "text": text, "annotations": anns}) + "\n")
    dbs = {"import_annotations": os.path.join(work, f"a-{seed}.db"),
           "ingest_with_content": os.path.join(work, f"c-{seed}.db")}
    for db in dbs.values():
        cli(a.winnow, "init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)", "--flag-below", "0")
    summary = json.loads(cli(a.winnow, "import-annotations", "--db", dbs["import_annotations"], csv_path))
    cli(a.winnow, "ingest", "--db", dbs["ingest_with_content"], manifest)
    observed = {}
    for item, annotator, label in rows:
        right, total = observed.get(annotator, (0, 0))
        observed[annotator] = (right + (label == truth[item]), total + 1)
    out = {"seed": seed, "import_seconds": summary["seconds"],
           "observed_accuracy": {k: r / n for k, (r, n) in sorted(observed.items())}}
    reports = {}
    for tag, db in dbs.items():
        r, samples = report(a.winnow, db, work, f"{tag}-{seed}")
        reports[tag] = (r, samples)
        annotators = {s["name"]: s["estimated_accuracy"] for s in r["sources"] if s["kind"] == "annotator"}
        out[tag] = {"accepted": r["dataset"]["by_status"]["accepted"],
                    "estimated_accuracy": dict(sorted(annotators.items())),
                    "majority_vote_accuracy": accuracy(samples, truth, "given_label"),
                    "consensus_accuracy": accuracy(samples, truth, "consensus_label"),
                    "krippendorff_alpha": r["dataset"]["krippendorff_alpha"]}
    (ra, sa), (rc, sc) = reports["import_annotations"], reports["ingest_with_content"]
    rows_a = [s for s in ra["sources"] if s["kind"] == "annotator"]
    rows_c = [s for s in rc["sources"] if s["kind"] == "annotator"]
    out["equal"] = {"annotator_rows": rows_a == rows_c, "dataset": ra["dataset"] == rc["dataset"],
                    "samples": sa == sc}
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--accuracies", type=float, nargs="+", default=[0.9, 0.8, 0.7])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3, 4, 5])
    ap.add_argument("--work", help="keep the files here (default: a temporary folder)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="winnow-crowd-")
    os.makedirs(work, exist_ok=True)
    runs = [run_seed(a, seed, work) for seed in a.seeds]
    print(json.dumps({"items": a.items, "classes": a.classes, "true_accuracies": a.accuracies,
                      "runs": runs}, indent=1))


if __name__ == "__main__":
    main()
