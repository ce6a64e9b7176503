#!/usr/bin/python3
"""How long `winnow serve` takes to exit after SIGTERM in the middle of a batch.

Drops a large text manifest, waits until its batch is `running` in the store,
sends SIGTERM and measures the time until the process has exited; repeats
--runs times (the manifest is redone, and interrupted again, each time).
Prints one JSON object.

  bench/daemon_stop_latency.py --winnow build/bin/winnow [--records 40000] [--runs 5]
"""
import argparse
import json
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--records", type=int, default=40000)
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    winnow = os.path.abspath(args.winnow)
    work = tempfile.mkdtemp(prefix="winnow-stop-")
    db = os.path.join(work, "stop.db")
    inbox = os.path.join(work, "inbox")
    os.makedirs(inbox)
    subprocess.run([winnow, "init", "--db", db, "--embedder", "hashed-ngrams"], check=True,
                   stdout=subprocess.DEVNULL)
    tmp = os.path.join(inbox, ".big.tmp")
    with open(tmp, "w") as f:
        for i in range(args.records):
            f.write(json.dumps({"key": "k%d" % i, "text": "record %d %s" % (i, "x" * (i % 97))}) + "\n")
    os.rename(tmp, os.path.join(inbox, "big.jsonl"))
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    seconds = []
    for run in range(args.runs):
        daemon = subprocess.Popen([winnow, "serve", "--db", db, "--inbox", inbox, "--no-http",
                                   "--poll-ms", "100", "--max-interruptions", "1000"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        con = sqlite3.connect(db, timeout=30)
        while True:  # the batch's transaction is open: its state says running
            row = con.execute("SELECT state, attempts FROM ingest_batches").fetchone()
            if row and row[0] == "running" and row[1] == run + 1:
                break
            time.sleep(0.01)
        con.close()
        time.sleep(0.5)  # well inside the batch
        t0 = time.perf_counter()
        daemon.send_signal(signal.SIGTERM)
        rc = daemon.wait()
        seconds.append(round(time.perf_counter() - t0, 3))
        assert rc == 0, rc
        assert os.path.exists(os.path.join(inbox, "processing", "big.jsonl"))
    print(json.dumps({"records": args.records, "exit_seconds_after_sigterm": seconds,
                      "max": max(seconds), "load_average": os.getloadavg()[0]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
