#!/usr/bin/python3
"""Peak resident memory of `winnow ingest` for manifests of growing size.

Writes text manifests of about --sizes megabytes each (records of about
--record-bytes of text; --unique N makes one record in N unique, the others
exact copies, so that a 1 GB manifest does not also need a 1 GB store), ingests
each into a fresh database through the CLI with its defaults, and prints one
JSON object with the peak RSS (getrusage of the child) per size.

  bench/manifest_memory.py --winnow build/bin/winnow --sizes 10 1000 [--unique 100]
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time


def peak_rss_kib(cmd):
    """Runs cmd to its end; its peak RSS in KiB (the children's maximum so far)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.time()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    after = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of the children is a maximum over all of them: grow sizes.
    return max(after, before) if after > before else after, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--sizes", type=float, nargs="+", default=[10, 1000], help="megabytes")
    ap.add_argument("--record-bytes", type=int, default=2000)
    ap.add_argument("--unique", type=int, default=100, help="one record in N is unique")
    args = ap.parse_args()
    winnow = os.path.abspath(args.winnow)
    work = tempfile.mkdtemp(prefix="winnow-memory-")
    results = []
    for size in sorted(args.sizes):  # ascending: RUSAGE_CHILDREN keeps the maximum
        manifest = os.path.join(work, "m%g.jsonl" % size)
        records = 0
        with open(manifest, "w") as f:
            written = 0
            while written < size * 1e6:
                body = "w" * args.record_bytes
                if records % args.unique == 0:
                    body = "unique record %d " % records + body
                line = json.dumps({"key": "k%d" % records, "text": body}) + "\n"
                f.write(line)
                written += len(line)
                records += 1
        db = os.path.join(work, "m%g.db" % size)
        subprocess.run([winnow, "init", "--db", db, "--embedder", "hashed-ngrams"], check=True,
                       stdout=subprocess.DEVNULL)
        rss, seconds = peak_rss_kib([winnow, "ingest", "--db", db, manifest])
        results.append({"manifest_mb": round(os.path.getsize(manifest) / 1e6, 1),
                        "records": records, "peak_rss_mib": round(rss / 1024, 1),
                        "seconds": round(seconds, 1)})
        os.remove(manifest)
        for suffix in ("", "-wal", "-shm", ".index"):
            if os.path.exists(db + suffix):
                os.remove(db + suffix)
    print(json.dumps({"unique_one_in": args.unique, "record_bytes": args.record_bytes,
                      "load_average": os.getloadavg()[0], "runs": results}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
