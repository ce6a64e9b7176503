#!/usr/bin/env python3
"""winnow.dask on 1M synthetic records with 1 and 2 worker processes (issue 17;
docs/benchmarks.md, "winnow.dask").

The records are bench/ingest_growth.py's (a short text and a provided 128-d embedding from
a seeded Gaussian mixture, 5% of labels flipped, 1% re-submitted copies with a little
noise), one manifest per batch of 40,000: write them first with

  /usr/bin/python3 bench/ingest_growth.py --work /tmp/ig-ivf --batches 25 \\
      --batch-size 40000 --dim 128 --index ivf ...

(or reuse its cached manifests). Each run curates them into a fresh database (`winnow
init --embedder "provided(dim=128)" --index ivf`) on a LocalCluster of N worker processes
with winnow.dask's defaults. Prints one JSON object per N: wall seconds, when the writer
took its first part (reading and the neighbour search before it), the writer's records
per second after that, and the job's neighbour counts.

  PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/dask_scale.py \\
      --manifests /tmp/ig-ivf --batches 25 --workers 1 2
"""
import argparse
import glob
import json
import os
import subprocess
import time

from distributed import Client, LocalCluster

import winnow.dask as wd


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--manifests", default="/tmp/ig-ivf")
    ap.add_argument("--batches", type=int, default=25)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--search", default="clusters")
    ap.add_argument("--db", default="/tmp/winnow-dask-scale.db")
    a = ap.parse_args()
    manifests = sorted(glob.glob(os.path.join(a.manifests, "s1-d128-b40000-*.jsonl")))[:a.batches]
    records = sum(1 for m in manifests for _ in open(m))
    for n in a.workers:
        for suffix in ("", ".index", "-wal", "-shm"):
            if os.path.exists(a.db + suffix):
                os.remove(a.db + suffix)
        subprocess.run([a.winnow, "init", "--db", a.db, "--embedder", "provided(dim=128)",
                        "--index", "ivf"], check=True, capture_output=True)
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=None, host="127.0.0.1",
                          memory_limit=0) as cluster, Client(cluster) as client:
            t0 = time.monotonic()
            report = wd.curate(client, a.db, manifests, search=a.search)
            wall = time.monotonic() - t0
        writing = wall - report["first_part_s"]
        print(json.dumps({
            "workers": n, "records": records, "batches": len(manifests), "search": report["search"],
            "curate_s": round(wall, 1), "first_part_s": round(report["first_part_s"], 1),
            "writer_records_per_s_after": round(records / writing),
            "listed": sum(b["job_neighbours"]["listed"] for b in report["batches"]),
            "searched_by_writer": sum(b["job_neighbours"]["searched"] for b in report["batches"]),
            "parts": report["parts"], "load_average": os.getloadavg()}), flush=True)


if __name__ == "__main__":
    main()
