"""What the CLI benchmarks share: running `winnow`, a fresh database, one JSON line a seed."""
import argparse
import json
import os
import subprocess


def winnow(args, *argv):
    """stdout of `args.winnow ARGV...`; raises when it fails."""
    out = subprocess.run([args.winnow, *argv], check=True, capture_output=True, text=True)
    return out.stdout


def remove_database(db):
    """The database `db` and its files (WAL, shared memory, index) gone."""
    for suffix in ("", "-wal", "-shm", ".index"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)


def add_common_options(parser: argparse.ArgumentParser, work: str):
    parser.add_argument("--winnow", default="build/bin/winnow")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1])
    parser.add_argument("--work", default=work)
    parser.add_argument("--init-arg", action="append", default=[])


def print_seeds(args, run_seed):
    """run_seed(args, seed) for every seed, each result as one JSON line."""
    for seed in args.seeds:
        print(json.dumps(run_seed(args, seed)), flush=True)
