#!/usr/bin/env python3
"""Runs the main job's smoke mode (main_job.py --quick) and checks its results.json.

    PYTHONPATH=build/python /usr/bin/python3 tests/demo/check_quick_demo.py \
        --winnow build/bin/winnow --workdir /tmp/demo-quick

Exits non-zero, naming the failed check, when the job fails or a figure is
missing or impossible.
"""
import argparse
import json
import os
import subprocess
import sys

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--winnow", required=True)
    parser.add_argument("--workdir", required=True)
    args = parser.parse_args()
    job = os.path.join(REPO, "examples", "demo", "main_job.py")
    subprocess.run([sys.executable, job, "--quick", "--threads", "1", "--winnow", args.winnow,
                    "--workdir", args.workdir], check=True)
    with open(os.path.join(args.workdir, "results.json")) as f:
        results = json.load(f)
    failures = []

    def check(condition, what):
        if not condition:
            failures.append(what)

    planted = results["planted"]
    runs = results["runs"]
    check(set(runs) == {"a", "b", "c", "d", "d'"}, f"runs a, b, c, d, d' (got {sorted(runs)})")
    for run_id, r in runs.items():
        check(0.3 < r["test_accuracy"] <= 1.0, f"run {run_id}: test accuracy {r['test_accuracy']} after 1 epoch")
        check(r["forward_samples"] >= r["samples"] * r["epochs"] * 0.3,
              f"run {run_id}: {r['forward_samples']} forward samples for {r['samples']} samples")
    review = results.get("review")
    if review is None:
        sys.exit("check_quick_demo: FAILED: results.json has no review round")
    check(review["sent"] == results["curation"]["pass2"]["by_status"].get("label_issue", 0),
          f"the review round asks about every sample pass 2 left flagged ({review})")
    check(runs["a"]["samples"] == planted["records"], "run a trains on every record")
    check(runs["b"]["samples"] < runs["a"]["samples"], "run b trains on fewer samples than a")
    check(runs["d"]["samples"] == runs["b"]["samples"] // 2, "run d keeps half of the accepted samples")
    check(runs["c"]["forward_samples"] <= runs["b"]["forward_samples"], "infobatch never trains more than full")

    for name in ("pass1", "pass2"):
        c = results["curation"][name]
        check(sum(c["by_status"].values()) == planted["records"], f"{name}: every record has a status")
        d = c["duplicates"]
        check(d["planted"] == planted["resubmissions"]["total"], f"{name}: planted duplicates counted")
        exact = d["by_kind"]["exact"]
        check(exact["planted"] > 0 and exact["caught"] == exact["planted"],
              f"{name}: every exact re-submission caught ({exact})")
        li = c["label_issues"]
        check(li["planted"] > 0 and li["acted_on"] >= li["true_positives"] >= li["fixed"],
              f"{name}: label-error counts ({li})")

    # The review's answers are one more annotation of each sample sent, and
    # settle some of them: fewer flagged samples, none added or lost.
    reviewed = results["curation"]["pass2_reviewed"]
    rounds = review["annotation_rounds"]
    check(rounds["added"] + rounds["replaced"] + rounds["unchanged"] == review["sent"],
          f"every review answer taken into its sample's annotations ({rounds})")
    check(sum(review["counts"].get(s, 0) for s in ("accepted", "label_issue", "rejected")) == 0,
          f"the review created no sample ({review['counts']})")
    check(sum(reviewed["by_status"].values()) == planted["records"],
          "after the review, every record has a status")
    check(reviewed["by_status"].get("label_issue", 0) < review["sent"] or review["sent"] == 0,
          f"the review settles some flagged samples ({reviewed['by_status']})")

    # Training feeds curation back: run (c)'s losses imported for every sample
    # it trained on, on the dataset pinned at the revision the runs read.
    feedback = results["training_feedback"]
    check(feedback["import"]["imported"] == runs["c"]["samples"],
          f"run c's statistics imported for each of its samples ({feedback['import']})")
    check(feedback["import"]["revision"] > results["training_revision"],
          "the training revision was pinned before the feedback changed the dataset")
    trained = results["curation"]["pass2_trained"]
    check(sum(trained["by_status"].values()) == planted["records"],
          "after the training feedback, every record has a status")

    # Co-evolution: pass 2 switched to the exported model by `regain --embedder`.
    regain = results["regain"]
    co = regain.get("coevolve", {})
    check(str(co.get("embedder", "")).startswith("torchscript"), f"pass 2 re-embedded with the model ({co})")
    check(co.get("re_embedded", 0) > 0 and co.get("labels", {}).get("judged", 0) > 0,
          f"pass 2's stored samples re-embedded and re-judged ({co})")
    for name in ("pass1", "pass2"):
        r = regain.get(name, {})  # the final regain of the pass
        check(r.get("gains_updated") == results["curation"][name]["accepted"],
              f"{name}: the final regain updated every accepted sample's gain ({r})")
        consensus = r.get("consensus", {})
        voters = consensus.get("neighbour_voters", [])
        check(consensus.get("neighbour_votes", 0) > 0 and len(voters) == 3
              and all(0 <= v["accuracy"] <= 1 for v in voters)
              and (voters[-1]["votes"] == 0 or voters[-1]["accuracy"] > 0.5),
              f"{name}: the neighbours voted in the final consensus, with plausible accuracies ({consensus})")

    sources = {s["name"]: s for s in results["sources"]}
    check(set(planted["vendors"]) <= set(sources), f"every vendor in the report ({sorted(sources)})")
    est = {n: sources[n]["estimated_accuracy"] for n in planted["vendors"] if n in sources}
    check(all(v is not None for v in est.values()), f"Dawid-Skene estimates for every vendor ({est})")
    if all(v is not None for v in est.values()) and {"vendor_a", "vendor_d"} <= set(est):
        check(est["vendor_a"] > est["vendor_d"] + 0.2, f"the 0.98 vendor estimated well above the 0.60 one ({est})")
    for name in ("report.html", "report.json", "samples.jsonl", "truth.jsonl", "embedder.pt"):
        path = os.path.join(args.workdir, name)
        check(os.path.isfile(path) and os.path.getsize(path) > 0, f"{name} written")
    check(set(results["targets"]) == {"c_beats_a_by_1_point", "source_accuracy_within_0.03",
                                      "pass2_f1_beats_pass1"}, "the three targets are evaluated")

    if failures:
        print("check_quick_demo: FAILED:\n  " + "\n  ".join(failures), file=sys.stderr)
        return 1
    print("check_quick_demo: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
