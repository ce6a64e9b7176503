#!/usr/bin/env python3
"""Does the cost per record grow with the store? (issue 16; docs/benchmarks.md,
"1M records").

Batches of records (a short text and a provided embedding, 64-d unless --dim, from a seeded
Gaussian mixture: one cluster per label, 5% of labels flipped, 1% re-submitted
copies with a little noise) each ingested by its own `winnow ingest` process
into one growing store, as a user running the CLI per batch would. Prints one
JSON line per batch (wall and CPU seconds of the process, records/s, the index
size, the sizes of the database and index files) and a summary.

  bench/ingest_growth.py --batches 8 --batch-size 40000 --index hnsw
  bench/ingest_growth.py --batches 25 --batch-size 40000 --dim 128 --index ivf
  bench/ingest_growth.py ... --one-process   # one long-lived `winnow ingest` of every
                                             # batch, its index kept in memory (as the daemon)
  bench/ingest_growth.py --batches 27 --dim 128 --manifests-only   # the manifests alone
  bench/ingest_growth.py ... --one-process --reopen-batches 2
      # then 2 more batches through a new `winnow ingest` process, which opens the
      # grown store's index: its seconds and its own peak RSS (a user per batch pays that)
"""
import argparse, json, os, resource, subprocess, sys, time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples" / "demo"))
from winnow_cli import children_cpu_seconds, run_winnow  # noqa: E402

LABELS = 20


def write_batch(path, rng, centres, start, count, earlier, write=True):
    """`count` records keyed from `start`; 1% copies of an earlier record. With
    write=False the same random draws are made and nothing is written, so that the
    batches after a manifest kept from an earlier run are those of a run from scratch."""
    dim = centres.shape[1]
    labels = rng.integers(0, LABELS, count)
    vectors = centres[labels] + rng.normal(0.0, 0.35, (count, dim))
    flipped = rng.random(count) < 0.05
    labels = np.where(flipped, (labels + rng.integers(1, LABELS, count)) % LABELS, labels)
    copies = rng.random(count) < 0.01
    with open(path if write else os.devnull, "w") as out:
        for i in range(count):
            v, label = vectors[i], int(labels[i])
            if copies[i] and earlier:
                v0, label = earlier[int(rng.integers(len(earlier)))]
                v = v0 + rng.normal(0.0, 0.01, dim)
            if len(earlier) < 200_000:
                earlier.append((vectors[i], label))
            if not write:
                continue
            record = {"key": f"r{start + i}", "label": label, "source": f"s{i % 7}",
                      "text": f"record {start + i} of class {label}",
                      "embedding": [round(float(x), 4) for x in v]}
            out.write(json.dumps(record) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--work", default="/tmp/winnow-ingest-growth")
    ap.add_argument("--batches", type=int, default=8)
    ap.add_argument("--batch-size", type=int, default=40000)
    ap.add_argument("--index", default="hnsw")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dim", type=int, default=64, help="embedding dimension")
    ap.add_argument("--one-process", action="store_true",
                    help="one `winnow ingest` of all batches (per-batch seconds from its summary "
                         "lines, RSS and peak RSS read from /proc as each batch ends)")
    ap.add_argument("--reopen-batches", type=int, default=0,
                    help="with --one-process: this many more batches through one new process "
                         "that opens the grown store (its peak RSS measured alone)")
    ap.add_argument("--ingest-arg", action="append", default=[],
                    help="one more argument for winnow ingest (repeat)")
    ap.add_argument("--manifests-only", action="store_true",
                    help="write the batches' manifests (those missing) and stop, e.g. further "
                         "batches for bench/parallel_ceiling.py")
    ap.add_argument("--init-arg", action="append", default=[],
                    help="one more argument for winnow init (repeat), e.g. --init-arg=--micro-batch")
    a = ap.parse_args()
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(a.seed)
    centres = rng.normal(0.0, 1.0, (LABELS, a.dim))
    manifests, earlier = [], []
    if a.reopen_batches and not a.one_process:
        sys.exit("--reopen-batches needs --one-process")
    for b in range(a.batches + a.reopen_batches):
        path = work / f"s{a.seed}-d{a.dim}-b{a.batch_size}-{b:03d}.jsonl"
        write_batch(path, rng, centres, b * a.batch_size, a.batch_size, earlier,
                    write=not path.exists())
        manifests.append(path)
    if a.manifests_only:
        return
    db = work / "growth.db"
    for f in work.glob("growth.db*"):
        f.unlink()
    run_winnow(a.winnow, "init", "--db", db, "--embedder", f"provided(dim={a.dim})", "--index", a.index,
               *a.init_arg)
    if a.one_process:
        one_process(a, db, manifests[:a.batches])
        if a.reopen_batches:
            reopened(a, db, manifests[a.batches:])
        return
    rows, total_wall = [], 0.0
    for b, manifest in enumerate(manifests):
        load = load_average()
        start, cpu = time.perf_counter(), children_cpu_seconds()
        summary = json.loads(run_winnow(a.winnow, "ingest", "--db", db, *a.ingest_arg, manifest)
                             .splitlines()[-1])
        wall, cpu = time.perf_counter() - start, children_cpu_seconds() - cpu
        total_wall += wall
        status = json.loads(run_winnow(a.winnow, "status", "--db", db, "--json"))
        row = {"batch": b + 1, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
               "records_per_s": round(a.batch_size / wall), "ingest_s": summary.get("seconds"),
               "index_vectors": status["index"]["vectors"], "load": load,
               "db_mb": files_mb(work, "growth.db"), "index_mb": files_mb(work, "growth.db.index*"),
               "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    print(json.dumps(run_summary(a, rows, total_wall)))


def load_average():
    return float(open("/proc/loadavg").read().split()[0])


def files_mb(folder, pattern):
    return round(sum(f.stat().st_size for f in folder.glob(pattern)) / 2**20, 1)


def run_summary(a, rows, seconds):
    """The last line: the run's settings, its overall rate and its first and last batch's."""
    return {"index": a.index, "dim": a.dim, "batches": a.batches, "batch_size": a.batch_size,
            "records_per_s_overall": round(a.batches * a.batch_size / seconds),
            "first_to_last": [rows[0]["records_per_s"], rows[-1]["records_per_s"]],
            "ingest_args": a.ingest_arg, "init_args": a.init_arg}


def proc_status_mb(pid, field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024)
    return None


def wait_for(proc, what):
    """Waits for `proc` and returns its own resource usage (its peak RSS and CPU time,
    not those of the children before it); exits if it failed."""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{what} exited with {proc.returncode}")
    return usage


def one_process(a, db, manifests):
    """All batches through one process: what a daemon pays per batch."""
    start = time.perf_counter()
    proc = subprocess.Popen([a.winnow, "ingest", "--db", str(db), "--quiet", *a.ingest_arg,
                             *map(str, manifests)], stdout=subprocess.PIPE, text=True)
    rows, total, stored = [], 0.0, 0
    for line in proc.stdout:
        summary = json.loads(line)
        rss, peak = proc_status_mb(proc.pid, "VmRSS"), proc_status_mb(proc.pid, "VmHWM")
        seconds = summary["seconds"]
        total += seconds
        stored += summary["counts"]["total"]
        rows.append({"batch": summary["batch"], "ingest_s": round(seconds, 2),
                     "records_per_s": round(a.batch_size / seconds),
                     "stored_after": stored, "rss_mb": rss, "peak_rss_mb": peak,
                     "load": load_average(),
                     "counts": summary["counts"],
                     "labels_rejudged": summary.get("labels_rejudged"),
                     "index_saved": summary.get("index_saved")})
        print(json.dumps(rows[-1]), flush=True)
    usage = wait_for(proc, "winnow ingest")
    wall = time.perf_counter() - start
    status = json.loads(run_winnow(a.winnow, "status", "--db", db, "--json"))
    print(json.dumps({**run_summary(a, rows, total), "one_process": True,
                      "process_wall_s": round(wall, 2),
                      "process_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
                      "index_vectors": status["index"]["vectors"],
                      "index_file_mb": files_mb(Path(db).parent, "growth.db.index*")}))


def reopened(a, db, manifests):
    """The further batches through one new process: it loads the index snapshot and the
    store's state first, as every `winnow ingest` run per batch does."""
    start = time.perf_counter()
    proc = subprocess.Popen([a.winnow, "ingest", "--db", str(db), "--quiet", *a.ingest_arg,
                             *map(str, manifests)], stdout=subprocess.PIPE, text=True)
    output = proc.stdout.read()
    usage = wait_for(proc, "winnow ingest (reopened)")
    wall = time.perf_counter() - start
    summaries = [json.loads(line) for line in output.splitlines()]
    print(json.dumps({"reopened": True, "batches": len(summaries),
                      "batch_seconds": [round(s["seconds"], 2) for s in summaries],
                      "wall_s": round(wall, 2),
                      "peak_rss_mb": round(usage.ru_maxrss / 1024),
                      "index_file_mb": files_mb(Path(db).parent, "growth.db.index")}))


if __name__ == "__main__":
    main()
