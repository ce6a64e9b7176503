#!/usr/bin/env python3
"""How right are the label issues a bench/ingest_growth.py store holds at the end? A
trial's script (its run is in docs/history/), not a figure of the results page.

The generator draws its cluster centres first from default_rng(seed); a record's true
class is its nearest centre (clusters of noise 0.35 in 64 or 128 dimensions do not
overlap), and its label is wrong when it differs. Prints the precision and recall of the
store's `label_issue` samples among its judged ones (accepted and label_issue), read with
`winnow export`.

  bench/ingest_growth_labels.py --work /tmp/ig --dim 128 --batch-size 40000
"""
import argparse, csv, io, json, subprocess
from pathlib import Path

import numpy as np

LABELS = 20  # as bench/ingest_growth.py


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--work", default="/tmp/winnow-ingest-growth",
                    help="the --work of ingest_growth.py: its manifests and growth.db")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--batch-size", type=int, default=40000)
    a = ap.parse_args()
    work = Path(a.work)
    centres = np.random.default_rng(a.seed).normal(0.0, 1.0, (LABELS, a.dim))
    manifests = sorted(work.glob(f"s{a.seed}-d{a.dim}-b{a.batch_size}-*.jsonl"))
    if not manifests:
        raise SystemExit(f"no manifests s{a.seed}-d{a.dim}-b{a.batch_size}-*.jsonl in {work}")
    wrong = {}
    for path in manifests:
        records = [json.loads(line) for line in open(path)]
        v = np.asarray([r["embedding"] for r in records], dtype=np.float64)
        d = (v * v).sum(1)[:, None] - 2.0 * v @ centres.T + (centres * centres).sum(1)[None, :]
        for r, truth in zip(records, d.argmin(1)):
            wrong[r["key"]] = r["label"] != int(truth)
    status = {}
    for st in ("accepted", "label_issue"):
        out = subprocess.run([a.winnow, "export", "--db", str(work / "growth.db"), "--status", st,
                              "--format", "csv"], capture_output=True, text=True, check=True).stdout
        for row in csv.DictReader(io.StringIO(out)):
            status[row["key"]] = st
    flagged = [k for k, s in status.items() if s == "label_issue"]
    true_flags = sum(wrong[k] for k in flagged)
    wrong_judged = sum(wrong[k] for k in status)
    print(json.dumps({"judged": len(status), "flagged": len(flagged), "wrong_judged": wrong_judged,
                      "precision": round(true_flags / max(1, len(flagged)), 4),
                      "recall": round(true_flags / max(1, wrong_judged), 4)}))


if __name__ == "__main__":
    main()
