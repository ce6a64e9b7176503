#!/usr/bin/python3
"""Annotations over time: a second round of annotations on items already stored.

Writes a first export (ITEMS items x 4 annotators) and a second one (the same items x 4
other annotators: ITEMS x 4 annotations, all on existing items), imports both with
`winnow import-annotations` and prints, per seed, one JSON line with the second
import's wall and CPU seconds and its annotation_rounds counts (docs/benchmarks.md,
"Annotation rounds").

    /usr/bin/python3 bench/annotation_rounds.py --items 250000 --seeds 1 2
"""
import argparse
import json
import os
import random
import resource
import time

from cli_runs import add_common_options, print_seeds, remove_database, winnow


def write_round(path, items, annotators, rng):
    with open(path, "w") as f:
        f.write("item,annotator,label\n")
        for i in range(items):
            for a in annotators:
                f.write(f"item{i:07d},{a},{rng.choice('abcdefghij')}\n")


def run_seed(args, seed):
    rng = random.Random(seed)
    os.makedirs(args.work, exist_ok=True)
    db = os.path.join(args.work, "rounds.db")
    remove_database(db)
    first, second = os.path.join(args.work, "r1.csv"), os.path.join(args.work, "r2.csv")
    write_round(first, args.items, ["a1", "a2", "a3", "a4"], rng)
    write_round(second, args.items, ["b1", "b2", "b3", "b4"], rng)
    winnow(args, "init", "--db", db, *args.init_arg)
    winnow(args, "import-annotations", "--json", "--db", db, first)
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    out = json.loads(winnow(args, "import-annotations", "--json", "--db", db, second))
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return {"seed": seed, "items": args.items, "annotations_on_existing_items": args.items * 4,
            "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "annotation_rounds": out.get("annotation_rounds"), "new_samples": out["counts"]["total"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_common_options(parser, "/tmp/winnow-annotation-rounds")
    parser.add_argument("--items", type=int, default=250000)
    print_seeds(parser.parse_args(), run_seed)


if __name__ == "__main__":
    main()
