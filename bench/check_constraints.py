#!/usr/bin/env python3
"""The cost of a CHECK constraint per inserted row, by how it is written.

Store schema 5 (store/src/migrations.cpp) writes the CHECK constraints that
compare a column with a list of values as chains of "=" instead of IN
lists. This measures why, with the SQLite library winnow links (Python's
sqlite3 module uses the same one on Debian): rows shaped like the store's
events (a decision among five values and a JSON details text of about 400
bytes) inserted in one transaction into a fresh file, with the decision's
CHECK written three ways, and with the JSON check alone.

    bench/check_constraints.py [--rows 40000] [--runs 5] [--work /tmp/winnow-check]

Prints one JSON object: microseconds per row for each form (median of the
runs) and the SQLite version.
"""
import argparse
import json
import os
import sqlite3
import statistics
import time

DECISIONS = ("accepted", "duplicate_exact", "duplicate_near", "label_issue", "rejected")
FORMS = {
    "no_check": "",
    "in_list": "CHECK (decision IS NULL OR decision IN (%s))"
    % ", ".join(f"'{d}'" for d in DECISIONS),
    "comparisons": "CHECK (decision IS NULL OR %s)"
    % " OR ".join(f"decision = '{d}'" for d in DECISIONS),
}
DETAILS = json.dumps({
    "gain": 0.0863121896982193, "gain_k": 4, "neighbours": 28,
    "near_duplicate": {"threshold": 0.8, "min_candidate_similarity": 0.7, "candidate_margin": 2,
                       "candidates": 10, "candidates_checked": 0, "candidates_ruled_out": 10,
                       "best_similarity": 0, "best_candidate_similarity": 0},
    "label_quality": {"quality": 0.933139012721542, "neighbours": 30, "k": 30,
                      "flag_below": 0.08, "min_neighbours": 5, "suggested_label": "1",
                      "label_support": 47493}}, separators=(",", ":"))


def seconds_to_insert(path, decision_check, details_check, rows):
    if os.path.exists(path):
        os.remove(path)
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute(
        "CREATE TABLE events (id INTEGER PRIMARY KEY, sample_id INTEGER, kind TEXT NOT NULL,"
        f" decision TEXT {decision_check}, reason TEXT NOT NULL DEFAULT '',"
        f" details TEXT {'CHECK (details IS NULL OR json_valid(details))' if details_check else ''},"
        " created_at TEXT NOT NULL)")
    values = [(i, "ingest", DECISIONS[i % len(DECISIONS)], "accepted (gain 0.0863)", DETAILS,
               "2026-11-29T16:46:08.664Z") for i in range(rows)]
    start = time.perf_counter()
    db.execute("BEGIN")
    db.executemany("INSERT INTO events (sample_id, kind, decision, reason, details, created_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)", values)
    db.execute("COMMIT")
    seconds = time.perf_counter() - start
    db.close()
    return seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rows", type=int, default=40000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--work", default="/tmp/winnow-check")
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    path = os.path.join(a.work, "check.db")
    cases = [(name, check, False) for name, check in FORMS.items()]
    cases.append(("json_valid_alone", "", True))
    timings = {name: [] for name, _, _ in cases}
    for _ in range(a.runs):  # the forms alternate, so that a slow moment hits each
        for name, check, details_check in cases:
            timings[name].append(seconds_to_insert(path, check, details_check, a.rows))
    us = {name: round(statistics.median(t) / a.rows * 1e6, 3) for name, t in timings.items()}
    print(json.dumps({
        "bench": "check_constraints", "sqlite": sqlite3.sqlite_version, "rows": a.rows,
        "runs": a.runs, "us_per_row": us,
        "in_list_cost_us": round(us["in_list"] - us["no_check"], 3),
        "comparisons_cost_us": round(us["comparisons"] - us["no_check"], 3),
        "json_valid_cost_us": round(us["json_valid_alone"] - us["no_check"], 3),
    }, indent=2))


if __name__ == "__main__":
    main()
