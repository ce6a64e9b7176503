#!/usr/bin/python3
"""How fast winnow.CuratedDataset feeds a PyTorch DataLoader (issue 60's target: >= 20,000
samples/s over a 60k Fashion-MNIST store and >= 1,000 images/s over 2,000 clip-art files,
2 spawn workers, one core, decode included).

Two scenarios, each on a store built once through the CLI and kept in --workdir (building
is not timed; a rerun reuses it):

  fmnist   `winnow init` (defaults) + `winnow import-idx` of Fashion-MNIST's training
           images (/usr/share/datasets/fashion-mnist; --limit N: the first N only), read as
           CuratedDataset(db): 28 x 28 grey.
  clipart  --images distinct PNG files of Debian's openclipart-png (bench/clip_art.py),
           linked as DIR/<category>/<n>.png, `winnow init` + `winnow import-folder DIR`,
           read as CuratedDataset(db, size=(28, 28)), CuratedDataset(db, colour=True,
           size=(32, 32)) (both from the working images the store keeps) and
           CuratedDataset(db, colour=True, size=(64, 64)) (each file decoded again).

Each dataset (the accepted samples) goes through torch.utils.data.DataLoader(num_workers=
--workers, multiprocessing_context="spawn", persistent_workers=True, shuffle=True) with a
transform that makes a float tensor in [0, 1], [C, H, W], as a training loop gets it. The
first epoch includes starting the workers; then --runs steady epochs on the same workers.
With --cores the whole run (main process and workers) is confined to those cores.
One JSON line per result: samples/s = samples / epoch seconds, the median of the steady
epochs, and the first epoch's.

  PYTHONPATH=build/python nice -n 19 /usr/bin/python3 bench/curated_dataset_throughput.py \\
      --scenario both --images 2000 --workers 2 --batch-size 256 --runs 3 --cores 0 \\
      --workdir /tmp/winnow-curated-throughput
"""
import argparse
import json
import os
import random
import statistics
import subprocess
import time
import warnings

# One thread per process, before torch is imported (spawned workers inherit the environment).
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch
import torch.utils.data

import winnow

from clip_art import distinct_clip_art
from cli_runs import remove_database
from machine import machine

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"
CLIP_ART = "/usr/share/openclipart/png"


def to_float_tensor(pixels):
    """uint8 [H, W] or [H, W, 3] -> float32 [C, H, W] in [0, 1] (what ToTensor gives).
    At module level so that spawned workers can unpickle it."""
    x = torch.from_numpy(pixels)
    x = x.unsqueeze(0) if x.dim() == 2 else x.permute(2, 0, 1)
    return x.float().div_(255)


def run_cli(winnow_bin, *argv):
    """Runs `winnow ARGV...` quietly; on failure, says what it printed."""
    done = subprocess.run([winnow_bin, *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"winnow {' '.join(argv)} failed ({done.returncode}):\n"
                         f"{done.stdout}{done.stderr}")


def cached_store(db, build):
    """`db`, built by build(db) unless a finished build is already there. A marker file
    written after the build tells a finished store from one a killed run left behind."""
    done = db + ".built"
    if os.path.exists(done):
        return db
    remove_database(db)
    start = time.perf_counter()
    build(db)
    with open(done, "w") as f:
        json.dump({"build_seconds": round(time.perf_counter() - start, 1)}, f)
    return db


def fmnist_store(args):
    """The Fashion-MNIST training images (the first --limit when given) as a store."""
    def build(db):
        run_cli(args.winnow, "init", "--db", db)
        run_cli(args.winnow, "import-idx", "-q", "--db", db, "--limit", str(args.limit),
                os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz"),
                os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte.gz"))
    return cached_store(os.path.join(args.workdir, f"fmnist-{args.limit or 'all'}.db"), build)


def clipart_store(args):
    """--images distinct clip-art PNGs, linked under their category folder, as a store."""
    name = f"clipart-{args.images}-{args.seed}"
    tree = os.path.join(args.workdir, name)

    def build(db):
        if os.path.exists(tree):
            subprocess.run(["rm", "-rf", tree], check=True)
        files = distinct_clip_art(random.Random(args.seed), args.max_bytes)
        for n, path in zip(range(args.images), files):
            # The package's category folder is the label: png/<category>/.../<file>.png
            category = os.path.relpath(path, CLIP_ART).split(os.sep)[0]
            os.makedirs(os.path.join(tree, category), exist_ok=True)
            os.symlink(path, os.path.join(tree, category, f"{n:05d}.png"))
        run_cli(args.winnow, "init", "--db", db)
        run_cli(args.winnow, "import-folder", "-q", "--db", db, tree)
    return cached_store(os.path.join(args.workdir, name + ".db"), build)


def epochs(dataset, args):
    """Seconds of the first epoch (workers starting included) and of --runs steady ones."""
    workers = {}
    if args.workers > 0:
        workers = {"multiprocessing_context": "spawn", "persistent_workers": True}
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.batch_size, shuffle=True, num_workers=args.workers,
        generator=torch.Generator().manual_seed(args.seed), **workers)
    seconds = []
    for _ in range(1 + args.runs):
        start = time.perf_counter()
        seen = 0
        for x, y in loader:
            seen += len(y)
        seconds.append(time.perf_counter() - start)
        assert seen == len(dataset), (seen, len(dataset))
    del loader  # stops the persistent workers before the next dataset's
    return seconds[0], seconds[1:]


def measure(scenario, dataset, args, extra):
    first, steady = epochs(dataset, args)
    n = len(dataset)
    result = {
        "scenario": scenario, "samples": n, **extra, "workers": args.workers,
        "batch_size": args.batch_size,
        "epoch_seconds": [round(s, 3) for s in steady],
        "samples_per_second": round(n / statistics.median(steady), 1),
        "first_epoch_seconds": round(first, 3),
        "first_epoch_samples_per_second": round(n / first, 1),
        "cores": sorted(os.sched_getaffinity(0)),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "machine": machine(),
    }
    print(json.dumps(result), flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", choices=("fmnist", "clipart", "both"), default="both")
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--workdir", default="/tmp/winnow-curated-throughput",
                    help="where the stores (and the clip-art links) are kept between runs")
    ap.add_argument("--limit", type=int, default=0,
                    help="fmnist: only the first N training images (0: all 60,000)")
    ap.add_argument("--images", type=int, default=2000, help="clipart: PNG files")
    ap.add_argument("--max-bytes", type=int, default=2_000_000,
                    help="clipart: only PNG files smaller than this")
    ap.add_argument("--seed", type=int, default=1, help="clipart: which files; the shuffle")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=256)
    ap.add_argument("--runs", type=int, default=3, help="steady epochs after the first")
    ap.add_argument("--cores", default=None,
                    help="comma-separated CPU ids to confine the run to, workers included "
                         "(e.g. 0); default: not confined")
    args = ap.parse_args()
    args.winnow = os.path.abspath(args.winnow)
    os.makedirs(args.workdir, exist_ok=True)

    # Build (or find) the stores first, on every core: building is not what is measured.
    stores = {}
    if args.scenario in ("fmnist", "both"):
        stores["fmnist"] = fmnist_store(args)
    if args.scenario in ("clipart", "both"):
        stores["clipart"] = clipart_store(args)

    # Then confine this process; spawned workers inherit its affinity.
    if args.cores is not None:
        os.sched_setaffinity(0, {int(c) for c in args.cores.split(",")})
    torch.set_num_threads(1)
    # More workers than cores is what the one-core figure asks for: not worth a warning.
    warnings.filterwarnings("ignore", message="This DataLoader will create")

    if "fmnist" in stores:
        dataset = winnow.CuratedDataset(stores["fmnist"], transform=to_float_tensor)
        measure("fmnist", dataset, args, {"size": [28, 28], "colour": False})
    if "clipart" in stores:
        # 32 x 32 grey and colour and 28 x 28 come from the working images the store
        # keeps (32 x 32 at the defaults); 64 x 64 decodes every file again.
        for size, colour in (((28, 28), False), ((32, 32), True), ((64, 64), True)):
            dataset = winnow.CuratedDataset(stores["clipart"], transform=to_float_tensor,
                                            size=size, colour=colour)
            measure("clipart", dataset, args,
                    {"files": args.images, "size": list(size), "colour": colour})


if __name__ == "__main__":
    main()
