#!/usr/bin/env python3
"""What can two cores give a late batch on this host? (issue 16; docs/benchmarks.md,
"Two threads").

Copies of one grown store (for example the 1M store that `ingest_growth.py --one-process`
leaves) each get the same further batches through one `winnow ingest` process, three ways
a round, in an order that turns from round to round:

- alone: one process, `--threads 1`;
- two threads: one process, `--threads 2`;
- side by side: two processes, `--threads 1` each, on two copies at once.

Two processes side by side share nothing but the machine (its cores, caches and memory),
so their combined rate over one process alone is what two cores give this work with no
cost of splitting it: a two-thread process, which must split one batch and keep one
writer, can come near it but not past it. Single runs on a shared host differ by up to
20% from one minute to the next, so the summary gives medians over the rounds, each ratio
taken within its round. Prints one JSON line per process and a summary line.

  bench/parallel_ceiling.py --store /tmp/ig/growth.db --rounds 8 b25.jsonl b26.jsonl
"""
import argparse, json, os, shutil, statistics, subprocess, sys, time
from pathlib import Path

from ingest_growth import wait_for  # this folder's

MODES = ("alone", "two_threads", "side_by_side")


def store_files(store):
    """The database and its index snapshot (the spare snapshot is never read)."""
    return [f for f in store.parent.glob(store.name + "*") if not f.name.endswith(".spare")]


def fresh_copy(store, folder):
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for f in store_files(store):
        shutil.copyfile(f, folder / f.name)
    return folder / store.name


def start(a, db, threads, out):
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    with open(out, "w") as stdout:
        proc = subprocess.Popen([a.winnow, "ingest", "--db", str(db), "--quiet", "--threads",
                                 str(threads), *a.manifests], stdout=stdout, env=env)
    return proc, time.perf_counter()


def finish(proc, began, out, round_, mode, copy):
    """Waits for `proc` and returns its row: its batches' seconds and status counts from
    its summary lines, and its own CPU time and peak RSS."""
    usage = wait_for(proc, f"winnow ingest ({mode}, copy {copy}, output in {out})")
    wall = time.perf_counter() - began
    batches = [json.loads(line) for line in open(out)]
    return {"round": round_, "mode": mode, "copy": copy,
            "batch_seconds": [round(b["seconds"], 3) for b in batches],
            "seconds": round(sum(b["seconds"] for b in batches), 3),
            "counts": [b["counts"] for b in batches], "process_wall_s": round(wall, 2),
            # where the batches' time went (winnow ingest's seconds_by_phase, summed;
            # empty from a winnow older than it)
            "seconds_by_phase": {p: round(sum(b["seconds_by_phase"][p] for b in batches), 3)
                                 for p in batches[0].get("seconds_by_phase", {})},
            "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024)}


def run_mode(a, round_, mode):
    copies = 2 if mode == "side_by_side" else 1
    dbs = [fresh_copy(a.store, a.work / f"copy{c}") for c in range(copies)]
    subprocess.run(["sync"], check=True)
    threads = 2 if mode == "two_threads" else 1
    started = [start(a, db, threads, db.parent / "out.jsonl") for db in dbs]
    return [finish(proc, began, db.parent / "out.jsonl", round_, mode, c)
            for c, ((proc, began), db) in enumerate(zip(started, dbs))]


def summary(rows, rounds, modes):
    """Ratios within each round: two threads over one alone, and the two side-by-side
    processes' combined rate over one alone (each where its mode ran)."""
    two, side = [], []
    for r in range(1, rounds + 1):
        of = {m: [row["seconds"] for row in rows if row["round"] == r and row["mode"] == m]
              for m in modes}
        alone = of["alone"][0]
        if "two_threads" in of: two.append(alone / of["two_threads"][0])
        if "side_by_side" in of: side.append(sum(alone / s for s in of["side_by_side"]))
    spread = lambda xs: [round(min(xs), 2), round(max(xs), 2)]
    out = {"rounds": rounds,
           # every copy starts from the same store: one thread or two, alone or not,
           # the batches' decisions must be the same
           "same_decisions": all(row["counts"] == rows[0]["counts"] for row in rows)}
    for name, ratios in (("two_threads_over_alone", two), ("side_by_side_over_alone", side)):
        if ratios:
            out[name] = {"median": round(statistics.median(ratios), 2), "range": spread(ratios)}
    if two and side:
        out["two_threads_over_side_by_side"] = round(statistics.median(two) /
                                                     statistics.median(side), 2)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("manifests", nargs="+", help="the further batches, in order")
    ap.add_argument("--store", type=Path, required=True, help="the grown store's database file")
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--work", type=Path, default=Path("/tmp/winnow-parallel-ceiling"))
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--no-side-by-side", action="store_true",
                    help="alone and two threads only (half the time a round)")
    a = ap.parse_args()
    if not a.store.is_file():
        sys.exit(f"--store {a.store}: no such database file")
    modes = MODES[:2] if a.no_side_by_side else MODES
    rows = []
    for r in range(1, a.rounds + 1):
        turn = (r - 1) % len(modes)
        for mode in modes[turn:] + modes[:turn]:
            for row in run_mode(a, r, mode):
                rows.append(row)
                print(json.dumps(row), flush=True)
    print(json.dumps(summary(rows, a.rounds, modes)))


if __name__ == "__main__":
    main()
