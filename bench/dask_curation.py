#!/usr/bin/env python3
"""winnow.dask on the 60k Fashion-MNIST training images against `winnow ingest`
(docs/distributed-curation.md; the figures: docs/benchmarks.md, "winnow.dask").

One manifest of the 60,000 training images as pixels records in arrival order, with
planted exact copies, near copies (a one-pixel shift), flipped labels and bad lines
(tests/python/curation_data.py). Measures, each into a fresh database made by `winnow
init` with its defaults:
  - `winnow ingest` of the manifest (one process, its default threads): wall seconds;
  - winnow.dask's job on a LocalCluster of 1 and of 2 worker processes (one thread
    each, loopback): wall seconds of curate(), the cluster's start-up apart, and the
    share of samples whose status equals the single-process one;
  - the per-part costs in this process: a worker's read (parse, hash, embed) per
    record, a part's pickled size and unpickling time per record, and the writer's
    rate on parts already read (records/s).
Prints one JSON object.

  PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/dask_curation.py \
      --winnow build/bin/winnow --count 60000
"""
import argparse
import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

from distributed import Client, LocalCluster

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from curation_data import fashion_mnist, planted_lines  # noqa: E402

import winnow.dask as wd  # noqa: E402
from winnow._curation import Writer, batch_name, file_checksum  # noqa: E402


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True).stdout


def statuses(winnow, db):
    lines = run(winnow, "export", "--db", db).splitlines()
    return {s["key"]: s["status"] for s in map(json.loads, lines)}


def fresh_db(winnow, path):
    if os.path.exists(path):
        os.remove(path)
    for suffix in (".index", "-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            os.remove(str(path) + suffix)
    run(winnow, "init", "--db", path)
    return str(path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--work", default="/tmp/winnow-dask-bench")
    ap.add_argument("--count", type=int, default=60000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--part-bytes", type=int, default=wd.DEFAULT_PART_BYTES)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2])
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    images, labels = fashion_mnist(a.count)
    manifest = work / "fashion-mnist.jsonl"
    manifest.write_text("\n".join(planted_lines(images, labels, a.seed, "fm")) + "\n")
    result = {"records": sum(1 for line in open(manifest) if line.strip()),
              "manifest_bytes": manifest.stat().st_size, "part_bytes": a.part_bytes,
              "load_average_before": os.getloadavg()}

    reference_db = fresh_db(a.winnow, work / "reference.db")
    t0 = time.monotonic()
    run(a.winnow, "ingest", "--db", reference_db, manifest)
    result["winnow_ingest_s"] = round(time.monotonic() - t0, 2)
    reference = statuses(a.winnow, reference_db)

    for n in a.workers:
        t0 = time.monotonic()
        with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                          dashboard_address=None, host="127.0.0.1") as cluster, Client(cluster) as client:
            started = time.monotonic() - t0
            db = fresh_db(a.winnow, work / f"dask-{n}.db")
            t1 = time.monotonic()
            report = wd.curate(client, db, [str(manifest)], part_bytes=a.part_bytes)
            wall = time.monotonic() - t1
        ours = statuses(a.winnow, db)
        same = sum(ours.get(k) == v for k, v in reference.items())
        result[f"dask_{n}_workers"] = {
            "cluster_start_s": round(started, 2), "curate_s": round(wall, 2),
            "parts": report["parts"], "same_status_fraction": same / len(reference),
            "exact_duplicates_by_shuffle": report["exact_duplicates"]}

    # Per-part costs, in this process: the workers' read, then the writer alone.
    config = Writer(fresh_db(a.winnow, work / "writer.db")).config_json()
    parts = wd.plan_parts([str(manifest.resolve())], a.part_bytes)
    t0 = time.process_time()
    partitions = [wd.read_part(p, config) for p in parts]
    read_cpu = time.process_time() - t0
    records = sum(len(p) for p in partitions)  # before the writer consumes them
    # What moving a part costs: its pickled size, and unpickling it (on the writer).
    pickled = [pickle.dumps(p) for p in partitions]
    t0 = time.process_time()
    partitions = [pickle.loads(b) for b in pickled]
    unpickle_cpu = time.process_time() - t0
    result["pickled_bytes_per_record"] = round(sum(map(len, pickled)) / records)
    result["writer_unpickle_us_per_record"] = round(1e6 * unpickle_cpu / records, 1)
    del pickled
    writer_db = fresh_db(a.winnow, work / "writer.db")
    writer = Writer(writer_db)
    t0 = time.monotonic()
    writer.ingest(batch_name(str(manifest.resolve())), file_checksum(str(manifest)), iter(partitions))
    writer_s = time.monotonic() - t0
    result["worker_read_us_per_record"] = round(1e6 * read_cpu / records, 1)
    result["worker_read_cpu_s_per_part"] = round(read_cpu / len(parts), 3)
    result["writer_s"] = round(writer_s, 2)
    result["writer_records_per_s"] = round(records / writer_s)
    result["load_average_after"] = os.getloadavg()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
