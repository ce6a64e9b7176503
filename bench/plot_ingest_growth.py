#!/usr/bin/python3
"""Plot and extrapolate an ingest_growth.py --one-process run (issue 16).

Reads the JSON lines that `bench/ingest_growth.py --one-process` printed (one per batch,
then a summary), fits

  seconds per record at n stored records   t(n) = a + b * g(n)
      g = sqrt (--model sqrt, the default): an IVF index whose cells hold about sqrt(n)
      vectors each, a fixed number of them scanned (`ivf(cellCap=0)`);
      g = ln (--model log): cells capped (`ivf`), so the vectors scanned per query stop
      growing; what still grows is where they are read from (cache, then memory) and the
      depth of the store's B-trees
  resident memory at n stored records      rss(n) = c + d * n

by least squares, writes a PNG of records/s and RSS per batch with the fitted curves
(python3-matplotlib), and prints one JSON line: the fits, their largest relative
residual, and the extrapolation to --extrapolate sizes (records/s at that size, hours
to ingest that many from empty, RSS).

  bench/plot_ingest_growth.py run.jsonl --png docs/images/ingest_growth_ivf.png
  bench/plot_ingest_growth.py run.jsonl --fit-from 3   # the default index: IVF from batch 3

--fit-from leaves the first batches out of the time fit: with the default index (`auto`),
the batches before it holds 65,536 vectors search exactly (flat), whose cost is another
curve; they are still drawn.
"""
import argparse
import json
import sys

import numpy as np


def read_rows(path):
    rows = []
    with open(path) as f:
        for line in f:
            row = json.loads(line)
            if "batch" in row and "stored_after" in row:
                rows.append(row)
    if len(rows) < 3:
        sys.exit(f"{path}: fewer than 3 batch lines with stored_after (an --one-process run?)")
    return rows


def fit(x, y):
    """Least-squares [p0, p1] of y = p0 + p1 * x."""
    design = np.column_stack([np.ones_like(x), x])
    coef, *_ = np.linalg.lstsq(design, y, rcond=None)
    return coef


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("run", help="JSON lines of ingest_growth.py --one-process")
    parser.add_argument("--png", help="write the plot here")
    parser.add_argument("--title", default="winnow ingest, one process")
    parser.add_argument("--extrapolate", type=float, nargs="+", default=[1e7, 1e8])
    parser.add_argument("--model", choices=["sqrt", "log"], default="sqrt",
                        help="how the seconds per record grow with n (see above)")
    parser.add_argument("--fit-from", type=int, default=1,
                        help="first batch of the time fit (earlier ones are drawn, not fitted)")
    args = parser.parse_args()

    rows = read_rows(args.run)
    after = np.array([r["stored_after"] for r in rows], dtype=float)
    size = np.array([r["counts"]["total"] for r in rows], dtype=float)
    middle = after - size / 2  # the store's size halfway through the batch
    per_record = np.array([r["ingest_s"] for r in rows]) / size
    rss = np.array([r["rss_mb"] for r in rows], dtype=float)

    fitted = np.array([r["batch"] >= args.fit_from for r in rows])
    if fitted.sum() < 3:
        sys.exit(f"--fit-from {args.fit_from} leaves fewer than 3 batches to fit")
    g = np.sqrt if args.model == "sqrt" else np.log
    a, b = fit(g(middle[fitted]), per_record[fitted])
    c, d = fit(after, rss)
    t_fit = a + b * g(middle[fitted])
    rss_fit = c + d * after
    out = {
        "seconds_per_record": {"model": f"a + b * {args.model}(n)", "a": a, "b": b,
                               "fitted_from_batch": args.fit_from,
                               "max_rel_residual":
                                   float(np.max(np.abs(t_fit / per_record[fitted] - 1)))},
        "rss_mb": {"c": c, "d_bytes_per_record": d * 1e6,
                   "max_rel_residual": float(np.max(np.abs(rss_fit / rss - 1)))},
        "measured": {"records": int(after[-1]), "first_records_per_s": round(1 / per_record[0]),
                     "last_records_per_s": round(1 / per_record[-1])},
        "extrapolated": [],
    }
    for n in args.extrapolate:
        # The integral of t from 0 to n.
        total = (a * n + (2.0 / 3.0) * b * n ** 1.5 if args.model == "sqrt"
                 else a * n + b * (n * np.log(n) - n))
        hours = total / 3600
        out["extrapolated"].append({"records": int(n),
                                    "records_per_s": round(1 / (a + b * g(n))),
                                    "hours_from_empty": round(hours, 1),
                                    "rss_gb": round((c + d * n) / 1024, 1)})
    print(json.dumps(out))

    if args.png:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
        grid = np.linspace(1, after[-1], 200)
        left.plot(after[fitted] / 1e6, 1 / per_record[fitted], "o", label="measured, per batch")
        if not fitted.all():
            left.plot(after[~fitted] / 1e6, 1 / per_record[~fitted], "x", color="grey",
                      label=f"measured, not fitted (batches < {args.fit_from})")
        left.plot(grid / 1e6, 1 / (a + b * g(grid)), "-", label=f"fit 1 / (a + b {args.model}(n))")
        left.set_xlabel("records stored (millions)")
        left.set_ylabel("records / s")
        left.set_ylim(bottom=0)
        left.legend()
        right.plot(after / 1e6, rss, "o", label="measured, end of batch")
        right.plot(grid / 1e6, c + d * grid, "-", label=f"fit {c:.0f} MB + {d * 1e6:.0f} B/record")
        right.set_xlabel("records stored (millions)")
        right.set_ylabel("resident memory (MB)")
        right.set_ylim(bottom=0)
        right.legend()
        fig.suptitle(args.title)
        fig.tight_layout()
        fig.savefig(args.png, dpi=100)


if __name__ == "__main__":
    sys.exit(main())
