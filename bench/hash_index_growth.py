#!/usr/bin/env python3
"""What an index on a random key costs per batch as a SQLite table grows: a trial's
script (its run is in docs/history/), not a figure of the results page.

The samples table's content_hash index takes 32-character hex keys in no order, so
each batch's inserts land all over its B-tree: the pages a batch dirties (and writes
to the WAL) grow with the table until the batch touches nearly all of them. This
measures that alone, outside winnow, with the store's settings (WAL,
synchronous=FULL): --batches transactions of --batch-size rows `(id INTEGER PRIMARY
KEY, h TEXT)` into a fresh file, under one layout each:

  none      no index on h
  text      CREATE INDEX ON t (h)                    (the store's layout)
  integer   h a 64-bit integer, CREATE INDEX ON t (h)
  epoch     CREATE INDEX ON t (id >> --epoch-bits, h) (inserts land in the newest
            epoch; a lookup probes every epoch)

One JSON line per layout and batch (seconds of the transaction; the WAL file's size,
which SQLite reuses, so the largest transaction's so far),
then per indexed layout the time of --lookups lookups at the end (half of them
present).

  bench/hash_index_growth.py --layouts none text integer epoch
"""
import argparse
import json
import os
import random
import sqlite3
import sys
import time


def fresh(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    return db


def run(layout, args):
    path = os.path.join(args.work, f"hash-index-{layout}.db")
    db = fresh(path)
    column = "INTEGER" if layout == "integer" else "TEXT"
    db.execute(f"CREATE TABLE t (id INTEGER PRIMARY KEY, h {column} NOT NULL)")
    if layout in ("text", "integer"):
        db.execute("CREATE INDEX t_h ON t (h)")
    elif layout == "epoch":
        db.execute(f"CREATE INDEX t_h ON t (id >> {args.epoch_bits}, h)")
    rng = random.Random(args.seed)

    def key():
        bits = rng.getrandbits(128)
        return bits >> 65 if layout == "integer" else f"{bits:032x}"

    present = []
    for batch in range(1, args.batches + 1):
        rows = [(key(),) for _ in range(args.batch_size)]
        present.extend(r[0] for r in rows[: -(-args.lookups // (2 * args.batches))])
        start = time.perf_counter()
        db.execute("BEGIN")
        db.executemany("INSERT INTO t (h) VALUES (?)", rows)
        db.execute("COMMIT")
        seconds = time.perf_counter() - start
        print(json.dumps({"layout": layout, "batch": batch, "rows": batch * args.batch_size,
                          "seconds": round(seconds, 3),
                          "wal_mb": round(os.path.getsize(path + "-wal") / 1e6, 1)}), flush=True)

    if layout != "none":  # without an index each lookup would scan the whole table
        lookup(db, layout, present, key, args)
    db.close()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)


def lookup(db, layout, present, key, args):
    wanted = present[: args.lookups // 2] + [key() for _ in range(args.lookups // 2)]
    epochs = (args.batches * args.batch_size >> args.epoch_bits) + 1
    start = time.perf_counter()
    found = 0
    for k in wanted:
        if layout == "epoch":
            query = f"SELECT id FROM t WHERE (id >> {args.epoch_bits}) = ? AND h = ?"
            found += any(db.execute(query, (e, k)).fetchone() for e in range(epochs))
        else:
            found += db.execute("SELECT id FROM t WHERE h = ?", (k,)).fetchone() is not None
    print(json.dumps({"layout": layout, "lookups": len(wanted), "found": found,
                      "seconds": round(time.perf_counter() - start, 3)}), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--layouts", nargs="+", default=["none", "text", "integer", "epoch"],
                        choices=["none", "text", "integer", "epoch"])
    parser.add_argument("--batches", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=40000)
    parser.add_argument("--epoch-bits", type=int, default=16)
    parser.add_argument("--lookups", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", default="/tmp")
    args = parser.parse_args()
    if args.batches < 1 or args.batch_size < 1 or args.lookups < 2:
        sys.exit("--batches and --batch-size must be at least 1, --lookups at least 2")
    for layout in args.layouts:
        run(layout, args)


if __name__ == "__main__":
    main()
