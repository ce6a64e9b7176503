#!/usr/bin/python3
"""`winnow import-folder` on a large folder tree (docs/benchmarks.md, "Folder import").

Writes FILES distinct 16 x 16 grey PNGs (random pixels) into 10 class folders,
then through the CLI with `winnow init` defaults: the first import, a second
one after NEW more files were added (only they are ingested; the rest are
looked up and skipped), and a third with nothing new. Prints JSON: wall
seconds, files per second and the peak resident memory of each import.
"""
import argparse
import json
import os
import random
import resource
import shutil
import subprocess
import tempfile
import time

from PIL import Image


def write_pngs(root, first, count, rng):
    for i in range(first, first + count):
        folder = os.path.join(root, f"class{i % 10}")
        os.makedirs(folder, exist_ok=True)
        pixels = bytes(rng.getrandbits(8) for _ in range(256))
        Image.frombytes("L", (16, 16), pixels).save(os.path.join(folder, f"{i:07d}.png"))


def timed_import(winnow, db, root):
    """One import as its own process: (summary, wall seconds, peak RSS in MiB)."""
    start = time.perf_counter()
    pid = os.posix_spawn(winnow, [winnow, "import-folder", "--db", db, root], os.environ,
                         file_actions=[(os.POSIX_SPAWN_OPEN, 1, db + ".out",
                                        os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)])
    _, status, usage = os.wait4(pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"import-folder failed ({status})")
    with open(db + ".out") as out:
        summary = json.loads(out.read())
    return summary, seconds, usage.ru_maxrss / 1024


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--new", type=int, default=1_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--work", default=None, help="folder to use (default: a temporary one)")
    a = ap.parse_args()
    winnow = os.path.abspath(a.winnow)
    work = a.work or tempfile.mkdtemp(prefix="winnow-folder-")
    root, db = os.path.join(work, "tree"), os.path.join(work, "data.db")
    shutil.rmtree(root, ignore_errors=True)
    for stale in (db, db + ".index"):
        if os.path.exists(stale):
            os.remove(stale)
    rng = random.Random(a.seed)
    write_pngs(root, 0, a.files, rng)
    subprocess.run([winnow, "init", "--db", db], check=True, stdout=subprocess.DEVNULL)
    runs = {}
    for name, added in (("first", 0), ("grown", a.new), ("nothing_new", 0)):
        if added:
            write_pngs(root, a.files, added, rng)
        summary, seconds, rss = timed_import(winnow, db, root)
        runs[name] = {"ingested": summary["counts"]["total"],
                      "already_imported": summary["already_imported"],
                      "wall_seconds": round(seconds, 2),
                      "files_per_second": round(summary["counts"]["total"] / seconds, 1),
                      "peak_rss_mib": round(rss, 1)}
    print(json.dumps({"files": a.files, "new": a.new, "seed": a.seed, "runs": runs,
                      "load_average": [round(x, 2) for x in os.getloadavg()]}))
    if not a.work:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
