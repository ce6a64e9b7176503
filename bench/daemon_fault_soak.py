#!/usr/bin/python3
"""Fault soak of `winnow serve`: about 1,000 manifests through a daemon that is
SIGKILLed and restarted every few seconds, while another process takes the
database's write lock now and then.

The manifests mix good batches, binary files, FIFOs, symbolic links, records
naming files over the size cap or outside the content root, non-UTF-8 names,
records keyed like the keys the pipeline generates for rejected records
(planted), and manifests whose first line is broken. Meanwhile clients of the
status endpoint send their requests a header line at a time. At the end (no
more kills, the daemon drains the inbox, SIGTERM with slow clients connected)
it checks that every good record is stored exactly once, every bad manifest is
in failed/ with a reason, nothing is left in processing/, and SIGTERM was
honoured within 3 s. Prints one JSON object; exits 1 when a check fails.

  bench/daemon_fault_soak.py --winnow build/bin/winnow [--manifests 1000]
      [--kill-every 3] [--seed 1] [--json FILE]
"""
import argparse
import json
import os
import random
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time


def drop(inbox, name, data):
    """Writes a manifest by the inbox protocol: hidden name, then rename."""
    tmp = os.path.join(inbox, b"." + name + b".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
    os.rename(tmp, os.path.join(inbox, name))


def text_line(key, text):
    return (json.dumps({"key": key, "text": text}) + "\n").encode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--manifests", type=int, default=1000)
    ap.add_argument("--kill-every", type=float, default=3.0, help="mean seconds between SIGKILLs")
    ap.add_argument("--duration", type=float, default=120.0,
                    help="seconds over which the manifests are dropped (and kills go on)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="also write the result here")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    winnow = os.path.abspath(args.winnow)

    work = tempfile.mkdtemp(prefix="winnow-soak-")
    db = os.path.join(work, "soak.db")
    inbox = os.path.join(work, "inbox").encode()
    content = os.path.join(work, "content")
    os.makedirs(inbox)
    os.makedirs(content)
    subprocess.run([winnow, "init", "--db", db, "--embedder", "hashed-ngrams(n=3,dim=64)"],
                   check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(content, "small.bin"), "wb") as f:
        f.write(b"small")
    with open(os.path.join(content, "big.bin"), "wb") as f:
        f.write(b"x" * 8192)
    outside = os.path.join(work, "outside.txt")
    with open(outside, "w") as f:
        f.write("secret")

    actions = []  # (function, arguments): drops, run over the soak's duration
    good_keys = set()  # every key of a good record
    bad_names = set()  # manifests that must end in failed/
    kinds = {}
    for i in range(args.manifests):
        kind = rng.choices(
            ["good", "binary", "fifo", "symlink", "oversize", "non_utf8_name", "planted",
             "broken_first_line"],
            weights=[60, 8, 6, 6, 12, 8, 6, 6])[0]
        kinds[kind] = kinds.get(kind, 0) + 1
        name = b"m%04d.jsonl" % i
        if kind in ("good", "non_utf8_name"):
            if kind == "non_utf8_name":
                name = b"m%04d-\xff\xfe.jsonl" % i
            lines = []
            for r in range(rng.randint(5, 60)):
                key = "m%04d-r%03d" % (i, r)
                good_keys.add(key)
                lines.append(text_line(key, "record %d of manifest %d, %x" % (r, i, rng.getrandbits(64))))
            actions.append((drop, (inbox, name, b"".join(lines))))
        elif kind == "planted":
            # Keys of the shape the pipeline gives rejected records: refused one
            # by one (reserved), never in the way of a later manifest's.
            key = "m%04d-ok" % i
            good_keys.add(key)
            planted = b"".join(text_line("#rejected-b%d-l%d" % (b, 1), "planted %d" % i)
                               + text_line("k%04d#rejected-b%d-l2" % (i, b), "planted")
                               for b in range(1, 6))
            actions.append((drop, (inbox, name, planted + text_line(key, "beside planted %d" % i))))
        elif kind == "broken_first_line":
            lines = [b"{this is not json\n"]
            for r in range(rng.randint(2, 20)):
                key = "m%04d-r%03d" % (i, r)
                good_keys.add(key)
                lines.append(text_line(key, "after a broken line %d %d" % (r, i)))
            actions.append((drop, (inbox, name, b"".join(lines))))
        elif kind == "binary":
            actions.append((drop, (inbox, name, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(rng.getrandbits(8) for _ in range(200)))))
            bad_names.add(name)
        elif kind == "fifo":
            actions.append((os.mkfifo, (os.path.join(inbox, name),)))
            bad_names.add(name)
        elif kind == "symlink":
            target = os.path.join(work, "target%04d.jsonl" % i)
            with open(target, "wb") as f:
                f.write(text_line("never-%04d" % i, "must not be read"))
            actions.append((os.symlink, (target, os.path.join(inbox, name))))
            bad_names.add(name)
        else:  # oversize: records naming a file over the cap, and one outside the root
            key = "m%04d-ok" % i
            good_keys.add(key)
            actions.append((drop, (inbox, name, text_line(key, "kept beside bad paths %d" % i)
                 + (json.dumps({"key": "m%04d-big" % i, "path": os.path.join(content, "big.bin")}) + "\n").encode()
                 + (json.dumps({"key": "m%04d-out" % i, "path": outside}) + "\n").encode()
                 + (json.dumps({"key": "m%04d-zero" % i, "path": "/dev/zero"}) + "\n").encode())))

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    http_port = probe.getsockname()[1]
    probe.close()
    serve = [winnow, "serve", "--db", db, "--inbox", inbox, "--http-port", str(http_port),
             "--poll-ms", "200", "--content-root", content, "--max-content-bytes", "4096"]
    env = dict(os.environ, OMP_NUM_THREADS="1", OMP_WAIT_POLICY="PASSIVE")
    log = open(os.path.join(work, "serve.log"), "ab")

    def start():
        return subprocess.Popen(serve, stdout=log, stderr=log, env=env)

    stop_locking = threading.Event()
    lock_holds = [0]

    def lock_holder():
        """Takes the write lock for 6-8 s (past the 5 s busy timeout) now and then."""
        while not stop_locking.wait(rng.uniform(4, 10)):
            con = sqlite3.connect(db, timeout=30, isolation_level=None)
            con.execute("BEGIN IMMEDIATE")
            lock_holds[0] += 1
            stop_locking.wait(rng.uniform(6, 8))
            con.execute("COMMIT")
            con.close()

    stop_clients = threading.Event()
    slow_requests = [0]

    def slow_clients():
        """Ten clients that send a request a header line every 0.5 s, again and again."""
        open_ = []
        while not stop_clients.is_set():
            while len(open_) < 10:
                try:
                    c = socket.create_connection(("127.0.0.1", http_port), timeout=1)
                    c.sendall(b"GET /status HTTP/1.1\r\nHost: localhost\r\n")
                    open_.append(c)
                    slow_requests[0] += 1
                except OSError:
                    break  # the daemon is restarting
            for c in list(open_):
                try:
                    c.sendall(b"X-Slow: 1\r\n")
                except OSError:
                    c.close()
                    open_.remove(c)
            stop_clients.wait(0.5)
        for c in open_:
            c.close()

    def dropper():
        for fn, fargs in actions:
            fn(*fargs)
            time.sleep(args.duration / len(actions))

    t0 = time.time()
    holder = threading.Thread(target=lock_holder)
    holder.start()
    clients = threading.Thread(target=slow_clients)
    clients.start()
    dropping = threading.Thread(target=dropper)
    dropping.start()
    kills = 0
    daemon = start()

    def remaining():
        return sum(1 for n in os.listdir(inbox) if n.endswith(b".jsonl") and not n.startswith(b"."))

    # Kill phase: SIGKILL every few seconds while manifests are being dropped.
    while dropping.is_alive():
        time.sleep(rng.uniform(0.2, 2 * args.kill_every - 0.2))
        daemon.kill()
        daemon.wait()
        kills += 1
        daemon = start()
    dropping.join()
    stop_locking.set()
    holder.join()
    # Drain: no more faults; SIGTERM once inbox and processing/ are empty.
    while (remaining() or os.listdir(os.path.join(inbox, b"processing"))) and time.time() - t0 < 3600:
        time.sleep(0.5)
    # A signal before the process reaches main() (loading its libraries) ends
    # it by default: stop it once its heartbeat shows it running.
    while time.time() - t0 < 3600:
        try:
            with open(db + ".serve.json") as f:
                if json.load(f).get("pid") == daemon.pid:
                    break
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    time.sleep(1.0)  # slow clients connected to this daemon too
    stop_start = time.time()
    daemon.send_signal(signal.SIGTERM)
    rc = daemon.wait()
    stop_seconds = time.time() - stop_start
    stop_clients.set()
    clients.join()
    seconds = time.time() - t0

    con = sqlite3.connect(db)
    counts = dict(con.execute("SELECT status, count(*) FROM samples GROUP BY status"))
    stored = {}
    for (key,) in con.execute("SELECT external_key FROM samples WHERE status != 'rejected'"):
        stored[key] = stored.get(key, 0) + 1
    interrupted = con.execute("SELECT count(*) FROM events WHERE kind = 'batch_interrupted'").fetchone()[0]
    failed_dir = os.path.join(inbox, b"failed")
    failed = {n for n in os.listdir(failed_dir) if n.endswith(b".jsonl")}
    without_reason = [n for n in failed if not os.path.exists(os.path.join(failed_dir, n + b".reason.txt"))]
    checks = {
        "every good record stored exactly once": set(stored) == good_keys and all(v == 1 for v in stored.values()),
        "every bad manifest in failed/": bad_names <= failed,
        "only bad manifests in failed/": failed <= bad_names,
        "every failed manifest has a reason": not without_reason,
        "nothing left in processing/": not os.listdir(os.path.join(inbox, b"processing")),
        "inbox drained": remaining() == 0,
        "daemon exited 0 on SIGTERM": rc == 0,
        "SIGTERM honoured within 3 s beside slow clients": stop_seconds < 3.0,
    }
    result = {
        "manifests": args.manifests, "duration": args.duration, "kinds": kinds, "kills": kills, "lock_holds": lock_holds[0],
        "good_records": len(good_keys), "stored_by_status": counts,
        "interruptions_recorded": interrupted, "failed_manifests": len(failed),
        "slow_requests": slow_requests[0], "stop_seconds": round(stop_seconds, 2),
        "seconds": round(seconds, 1), "seed": args.seed, "exit_code": rc, "checks": checks,
        "ok": all(checks.values()), "work_dir": work,
    }
    text = json.dumps(result, indent=2, default=str)
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
