#!/usr/bin/python3
"""Label issues on clip-art class folders nobody prepared, through the `winnow` CLI.

Per seed: --per-class distinct PNG files (each byte content once) from each of the
--classes largest category folders of Debian's openclipart-png ("unsorted" and "special"
left out), laid out as DIR/<category>/<file> with symbolic links to the package's
files, as a user points winnow at a folder. With --misfile, that share of the files is
moved into another category's folder drawn at random (the only wrong labels: the
package's own categories are taken as right). Then `winnow init --db D` (no options but
--init-arg's), `winnow import-folder --db D DIR`, and `winnow export`:

  flagged     samples whose status is label_issue / samples imported
  caught      misfiled samples flagged / misfiled samples (with --misfile)
  precision   misfiled samples flagged / samples flagged (with --misfile)
  abstained   the classes the label check abstained on, from `winnow status --json`

One JSON line per seed.

  bench/clip_art_labels.py --seeds 1 2 3
  bench/clip_art_labels.py --seeds 1 2 3 --misfile 0.05
"""
import argparse
import glob
import hashlib
import json
import os
import random
import shutil
import sys

from cli_runs import add_common_options, print_seeds, remove_database, winnow

ROOT = "/usr/share/openclipart/png"



def categories(count):
    """The `count` categories with the most PNG files, largest first."""
    sizes = {}
    for folder in sorted(os.listdir(ROOT)):
        if folder in ("unsorted", "special"):
            continue
        sizes[folder] = len(glob.glob(os.path.join(ROOT, folder, "**/*.png"), recursive=True))
    return sorted(sizes, key=lambda f: -sizes[f])[:count]


def pick_files(rng, classes, per_class, max_bytes):
    """{category: [path]}: regular files under max_bytes, each content once overall."""
    seen = set()
    picked = {}
    for category in classes:
        files = sorted(f for f in glob.glob(os.path.join(ROOT, category, "**/*.png"),
                                            recursive=True)
                       if not os.path.islink(f) and os.path.getsize(f) < max_bytes)
        rng.shuffle(files)
        picked[category] = []
        for f in files:
            if len(picked[category]) == per_class:
                break
            digest = hashlib.sha1(open(f, "rb").read()).hexdigest()
            if digest not in seen:
                seen.add(digest)
                picked[category].append(f)
    return picked


def lay_out(rng, picked, folder, misfile):
    """Links DIR/<category>/<n>.png; returns the keys (paths under DIR) misfiled."""
    shutil.rmtree(folder, ignore_errors=True)
    classes = sorted(picked)
    for category in classes:
        os.makedirs(os.path.join(folder, category))
    everything = [(c, f) for c in classes for f in picked[c]]
    misfiled_at = set(rng.sample(range(len(everything)), int(round(misfile * len(everything)))))
    misfiled = set()
    for i, (category, path) in enumerate(everything):
        into = category
        if i in misfiled_at:
            into = rng.choice([c for c in classes if c != category])
        key = f"{into}/{i:05d}.png"
        os.symlink(path, os.path.join(folder, key))
        if into != category:
            misfiled.add(key)
    return len(everything), misfiled


def run_seed(args, seed):
    rng = random.Random(seed)
    picked = pick_files(rng, categories(args.classes), args.per_class, args.max_bytes)
    work = os.path.join(args.work, f"seed{seed}")
    os.makedirs(work, exist_ok=True)
    folder = os.path.join(work, "clip-art")
    total, misfiled = lay_out(rng, picked, folder, args.misfile)
    db = os.path.join(work, "labels.db")
    remove_database(db)
    winnow(args, "init", "--db", db, *args.init_arg)
    winnow(args, "import-folder", "--quiet", "--db", db, folder)
    rows = [json.loads(line) for line in winnow(args, "export", "--db", db).splitlines()]
    flagged = {r["key"] for r in rows if r["status"] == "label_issue"}
    status = json.loads(winnow(args, "status", "--db", db, "--json"))
    result = {"seed": seed, "classes": len(picked), "files": total,
              "statuses": {s: sum(r["status"] == s for r in rows)
                           for s in sorted({r["status"] for r in rows})},
              "flagged": len(flagged), "flagged_share": round(len(flagged) / max(1, total), 4),
              "label_check": status.get("label_check")}
    if misfiled:
        caught = len(flagged & misfiled)
        result.update({"misfiled": len(misfiled), "caught": caught,
                       "recall": round(caught / len(misfiled), 4),
                       "precision": round(caught / max(1, len(flagged)), 4)})
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_options(parser, "/tmp/winnow-clip-art-labels")
    parser.add_argument("--classes", type=int, default=12)
    parser.add_argument("--per-class", type=int, default=250)
    parser.add_argument("--max-bytes", type=int, default=2_000_000)
    parser.add_argument("--misfile", type=float, default=0.0)
    print_seeds(parser.parse_args(), run_seed)


if __name__ == "__main__":
    sys.exit(main())
