#!/usr/bin/python3
"""Which copy of a duplicate group of image files winnow keeps, through the CLI.

Per seed: --groups distinct clip-art pictures from Debian's openclipart-png (at least
--min-side pixels a side), each as a group of copies: the PNG itself, JPEG re-encodings
resized to 75% and 50% of its sides, and one at full size (quality 85). Every file of
every group goes into one manifest in an order drawn from the seed, then `winnow init`
(no options but --init-arg's), `winnow ingest`, `winnow export`.

  groups_found   duplicate groups as winnow made them: a kept sample with every copy whose
                 duplicate_of leads to it (near-identical pictures of the set merge groups)
  kept_largest   groups found whose one kept copy (accepted or label_issue) has the largest
                 decoded size of the group (the PNG and its full-size JPEG tie)
  one_kept       groups found with exactly one copy kept

One JSON line per seed.

  bench/keep_largest.py --seeds 1 2 3
"""
import argparse
import json
import os
import random
import sys

from cli_runs import add_common_options, print_seeds, remove_database, winnow

from clip_art import distinct_clip_art, on_white

SCALES = (1.0, 0.75, 0.5)



def make_groups(args, rng, folder):
    """[(key, path, area, group)] for --groups pictures."""
    from PIL import Image
    files = []
    group = 0
    for path in distinct_clip_art(rng, 2_000_000):
        if group == args.groups:
            break
        image = on_white(path, args.min_side)
        if image is None:
            continue
        w, h = image.size
        files.append((f"g{group}-png", path, w * h, group))
        for scale in SCALES:
            size = (max(1, round(w * scale)), max(1, round(h * scale)))
            copy = image if scale == 1.0 else image.resize(size, Image.LANCZOS)
            name = os.path.join(folder, f"g{group}-{int(scale * 100)}.jpg")
            copy.save(name, quality=85)
            files.append((f"g{group}-{int(scale * 100)}", name, size[0] * size[1], group))
        group += 1
    return files


def run_seed(args, seed):
    rng = random.Random(seed)
    work = os.path.join(args.work, f"seed{seed}")
    os.makedirs(work, exist_ok=True)
    files = make_groups(args, rng, work)
    rng.shuffle(files)
    manifest = os.path.join(work, "m.jsonl")
    with open(manifest, "w") as out:
        for key, path, _, _ in files:
            out.write(json.dumps({"key": key, "path": path}) + "\n")
    db = os.path.join(work, "keep.db")
    remove_database(db)
    winnow(args, "init", "--db", db, *args.init_arg)
    winnow(args, "ingest", "--quiet", "--db", db, manifest)
    rows = [json.loads(line) for line in winnow(args, "export", "--db", db).splitlines()]
    # Duplicate groups as winnow made them: a sample and, through duplicate_of, every copy
    # that leads to it (the clip-art set holds some near-identical pictures, whose groups
    # become one).
    parent = {r["id"]: r["duplicate_of"] for r in rows}
    def root(i):
        while parent.get(i) is not None:
            i = parent[i]
        return i
    area = {key: a for key, _, a, _ in files}
    groups = {}
    for r in rows:
        groups.setdefault(root(r["id"]), []).append(r)
    made = {}
    for _, _, _, group in files:
        made[group] = made.get(group, 0) + 1
    kept_largest = one_kept = split = 0
    for members in groups.values():
        kept = [r for r in members if r["status"] in ("accepted", "label_issue")]
        largest = max(area[r["key"]] for r in members)
        one_kept += len(kept) == 1
        split += len(kept) > 1
        kept_largest += len(kept) == 1 and area[kept[0]["key"]] == largest
    return {"seed": seed, "groups_made": len(made), "files": len(files),
            "groups_found": len(groups), "kept_largest": kept_largest, "one_kept": one_kept,
            "rejected": sum(r["status"] == "rejected" for r in rows)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_options(parser, "/tmp/winnow-keep-largest")
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--min-side", type=int, default=128)
    print_seeds(parser.parse_args(), run_seed)


if __name__ == "__main__":
    sys.exit(main())
