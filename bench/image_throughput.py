#!/usr/bin/python3
"""Decode + embed + dedup throughput of image files through the `winnow` CLI
with its defaults (docs/benchmarks.md, "Image decoding").

Typical web-sized JPEGs: N distinct clip-art PNGs from Debian's
openclipart-png (bench/clip_art.py: symbolic links and byte copies skipped), composited on white and resized so
that the longer side is uniform in [256, 500] px, saved as JPEG at quality
80-95. `winnow init --db D` (defaults) then one `winnow ingest` of a manifest
of all of them, timed: wall seconds and the ingest process's CPU seconds
(user + system, from the kernel) and page faults, each run several times;
images/s = N / seconds. `--threads T` is passed to `winnow ingest` when given.
"""
import argparse, json, os, random, resource, statistics, subprocess, tempfile, time

from PIL import Image

from clip_art import distinct_clip_art, longer_side_to, on_white
from machine import machine

Image.MAX_IMAGE_PIXELS = None


def make_jpegs(work, count, seed):
    rng = random.Random(seed)
    folder = os.path.join(work, "jpeg")
    os.makedirs(folder, exist_ok=True)
    paths, sides = [], []
    for f in distinct_clip_art(rng, 2_000_000):
        if len(paths) == count:
            break
        im = on_white(f, 16)
        if im is None:
            continue
        im = longer_side_to(im, rng.randint(256, 500))
        out = os.path.join(folder, f"{len(paths):05d}.jpg")
        im.save(out, "JPEG", quality=rng.randint(80, 95))
        paths.append(out)
        sides.append(im.size)
    return paths, sides


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--images", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--init-arg", action="append", default=[],
                    help="an extra `winnow init` argument (to measure other settings)")
    a = ap.parse_args()
    work = a.work or tempfile.mkdtemp(prefix="winnow-imgthroughput-")
    os.makedirs(work, exist_ok=True)
    manifest = os.path.join(work, "manifest.jsonl")
    cache = os.path.join(work, f"set-{a.images}-{a.seed}.json")
    if os.path.exists(cache):
        paths, sides = json.load(open(cache))
    else:
        paths, sides = make_jpegs(work, a.images, a.seed)
        json.dump([paths, sides], open(cache, "w"))
    with open(manifest, "w") as out:
        for i, p in enumerate(paths):
            out.write(json.dumps({"key": f"img{i}", "path": p}) + "\n")
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    walls, cpus, faults = [], [], []
    for run in range(a.runs):
        db = os.path.join(work, "data.db")
        for f in (db, db + ".index", db + "-wal", db + "-shm"):
            if os.path.exists(f):
                os.remove(f)
        subprocess.run([a.winnow, "init", "--db", db, *a.init_arg], check=True, env=env,
                       stdout=subprocess.DEVNULL)
        command = [a.winnow, "ingest", "--db", db, manifest]
        if a.threads:
            command[2:2] = ["--threads", str(a.threads)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, check=True, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        faults.append(after.ru_minflt - before.ru_minflt + after.ru_majflt - before.ru_majflt)
        summary = json.loads(done.stdout)
    n = len(paths)
    print(json.dumps({
        "images": n, "seed": a.seed, "threads": a.threads,
        "median_side": statistics.median(max(s) for s in sides),
        "wall_seconds": [round(w, 2) for w in walls], "cpu_seconds": [round(c, 2) for c in cpus],
        "images_per_second_wall": round(n / min(walls), 1),
        "images_per_cpu_second": round(n / min(cpus), 1),
        "page_faults_per_image": round(statistics.median(faults) / n, 1),
        "counts": summary["counts"],
        "load_average": os.getloadavg(),
        "machine": machine(),
    }))


if __name__ == "__main__":
    main()
