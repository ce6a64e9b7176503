#!/usr/bin/env python3
"""winnow.dask's neighbour search on the workers (issue 17, phase 2) against `winnow
ingest` and against exact global search (docs/distributed-curation.md,
docs/benchmarks.md, "winnow.dask").

For each seed, one manifest of Fashion-MNIST training images as pixels records in arrival
order, with 4% flipped labels, 5% exact copies and 5% near copies whose perturbation
varies record by record (a shift of up to two pixels each way, brightness x0.85-1.15,
Gaussian noise of sigma 0-6), copies after most originals and some before. Measures:
  - `winnow ingest` of the manifest (one process, defaults): wall seconds, statuses;
  - winnow.dask with its defaults on a LocalCluster of N worker processes (one thread
    each, loopback): wall seconds of curate(), the share of samples whose status equals
    the single-process one, each difference as (ingest status -> job status), whether
    the exact duplicates (status and original) are the same, every one, and how many
    records the writer searched for after all;
  - the neighbour lists the job's workers make (the same functions, defaults) against
    exact search of every earlier record: near-duplicate recall (of the earlier records
    at or above the dataset's candidate gate, cosine 0.98, the share the record's list
    holds), of the planted near copies (their original in the list), and the recall of
    the exact 30 nearest earlier records.
Prints one JSON object per seed.

  PYTHONPATH=build/python OMP_NUM_THREADS=1 /usr/bin/python3 bench/dask_neighbour_search.py \
      --winnow build/bin/winnow --count 60000 --seeds 1 2 3
"""
import argparse
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
from distributed import Client, LocalCluster

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "python"))
from curation_data import fashion_mnist, pixels_line  # noqa: E402

import winnow.dask as wd  # noqa: E402
from winnow._curation import Writer, prior_neighbours  # noqa: E402


def run(*args):
    return subprocess.run([str(a) for a in args], check=True, capture_output=True, text=True).stdout


def fresh_db(winnow, path):
    for suffix in ("", ".index", "-wal", "-shm"):
        if os.path.exists(str(path) + suffix):
            os.remove(str(path) + suffix)
    run(winnow, "init", "--db", path)
    return str(path)


def exported(winnow, db):
    rows = [json.loads(line) for line in run(winnow, "export", "--db", db).splitlines()]
    by_id = {r["id"]: r["key"] for r in rows}
    return {r["key"]: (r["status"], by_id.get(r["duplicate_of"])) for r in rows}


def perturbed(image, rng):
    """A near copy as users make them: shifted, brightness scaled, noise added."""
    dx, dy = rng.randint(-2, 2), rng.randint(-2, 2)
    out = np.roll(np.roll(image.astype(np.float64), dy, axis=0), dx, axis=1)
    out = out * rng.uniform(0.85, 1.15) + np.random.default_rng(rng.randrange(1 << 30)).normal(
        0.0, rng.uniform(0.0, 6.0), out.shape)
    return np.clip(np.rint(out), 0, 255).astype(np.uint8)


def manifest_lines(images, labels, seed):
    """The lines, and each planted near copy's key with its original's key."""
    rng = random.Random(seed)
    n = len(images)
    lines = [pixels_line(f"s{seed}-{i}", images[i], labels[i]) for i in range(n)]
    for i in rng.sample(range(n), n // 25):
        lines[i] = pixels_line(f"s{seed}-{i}", images[i], (int(labels[i]) + 1 + rng.randrange(9)) % 10)
    planted, originals = [], {}
    for j, i in enumerate(rng.sample(range(n), n // 20)):
        planted.append(pixels_line(f"s{seed}-exact-{j}", images[i], labels[i]))
    for j, i in enumerate(rng.sample(range(n), n // 20)):
        planted.append(pixels_line(f"s{seed}-near-{j}", perturbed(images[i], rng), labels[i]))
        originals[f"s{seed}-near-{j}"] = f"s{seed}-{i}"
    everything = lines + planted
    head, tail = everything[:n // 2], everything[n // 2:]
    rng.shuffle(tail)
    return head + tail, originals


def list_recall(client, manifest, writer, gate, cluster_options):
    """The job's lists (its functions, its defaults) against exact global search."""
    config = writer.config_json()
    parts = wd.plan_parts([str(manifest)])
    reads = {p.index: client.submit(wd.read_part, p, config, pure=True) for p in parts}
    firsts, counts, total = wd.job_positions(client, reads)
    k, verdicts = wd.list_shape(writer)
    t0 = time.monotonic()
    futures = wd.neighbour_lists(client, reads, firsts, counts, k, verdicts, config,
                                 **cluster_options)
    lists = {i: f.result() for i, f in futures.items()}
    search_s = time.monotonic() - t0
    job = {}  # position -> set of listed positions
    for frame in lists.values():
        neighbours = np.frombuffer(b"".join(frame["neighbours"]), dtype=np.int64).reshape(len(frame), k)
        for position, row in zip(frame.index.to_numpy(), neighbours):
            job[int(position)] = set(int(x) for x in row if x >= 0)
    positions, vectors, keys = [], [], {}
    for i, f in reads.items():
        partition = f.result()
        emb = partition.embeddings()
        for e, key in enumerate(partition.keys()):
            keys[key] = firsts[i] + e
            if np.isfinite(emb[e]).all():
                positions.append(firsts[i] + e)
                vectors.append(emb[e])
    positions = np.array(positions, dtype=np.int64)
    vectors = np.ascontiguousarray(np.array(vectors, dtype=np.float32))
    t0 = time.monotonic()
    exact, similarities, _ = prior_neighbours(vectors, positions, np.ones(len(positions), bool), k)
    exact_s = time.monotonic() - t0
    gated = found_gated = top = found_top = 0
    for position, row, sims in zip(positions, exact, similarities):
        listed = job.get(int(position), set())
        for rank, (other, s) in enumerate(zip(row, sims)):
            if other < 0:
                break
            if rank < 30:
                top += 1
                found_top += int(other) in listed
            if s >= gate:
                gated += 1
                found_gated += int(other) in listed
    return {"lists_s": round(search_s, 2), "exact_global_s": round(exact_s, 2),
            "near_duplicate_recall": found_gated / max(1, gated), "pairs_at_gate": gated,
            "top30_recall": found_top / max(1, top)}, job, keys


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--winnow", default="build/bin/winnow")
    ap.add_argument("--work", default="/tmp/winnow-dask-phase2")
    ap.add_argument("--count", type=int, default=60000)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--workers", type=int, nargs="+", default=[2])
    ap.add_argument("--no-recall", action="store_true", help="skip the exact global search")
    ap.add_argument("--cluster-size", type=int, default=wd.DEFAULT_CLUSTER_SIZE)
    ap.add_argument("--cluster-copies", type=int, default=wd.DEFAULT_CLUSTER_COPIES)
    a = ap.parse_args()
    cluster_options = {"cluster_size": a.cluster_size, "copies": a.cluster_copies}
    work = Path(a.work)
    work.mkdir(parents=True, exist_ok=True)
    images, labels = fashion_mnist(a.count)
    for seed in a.seeds:
        lines, originals = manifest_lines(images, labels, seed)
        manifest = (work / f"seed-{seed}.jsonl").resolve()
        manifest.write_text("\n".join(lines) + "\n")
        result = {"seed": seed, "records": len(lines), "cluster_size": a.cluster_size,
                  "cluster_copies": a.cluster_copies, "load_average_before": os.getloadavg()}
        reference_db = fresh_db(a.winnow, work / "reference.db")
        t0 = time.monotonic()
        run(a.winnow, "ingest", "--db", reference_db, manifest)
        result["winnow_ingest_s"] = round(time.monotonic() - t0, 2)
        reference = exported(a.winnow, reference_db)
        reference_writer = Writer(reference_db)
        config = reference_writer.config_json()
        for n in a.workers:
            with LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                              dashboard_address=None, host="127.0.0.1") as cluster, \
                    Client(cluster) as client:
                db = fresh_db(a.winnow, work / f"dask-{n}.db")
                t0 = time.monotonic()
                report = wd.curate(client, db, [str(manifest)], cluster_size=a.cluster_size,
                                   cluster_copies=a.cluster_copies)
                wall = time.monotonic() - t0
                ours = exported(a.winnow, db)
                changes = Counter(f"{reference[k][0]}->{ours[k][0]}" for k in reference
                                  if ours[k][0] != reference[k][0])
                exact_same = all(ours[k] == v for k, v in reference.items() if v[0] == "duplicate_exact")
                entry = {"curate_s": round(wall, 2), "search": report["search"],
                         "same_status_fraction": 1 - sum(changes.values()) / len(reference),
                         "status_changes": dict(changes), "exact_duplicates_same": exact_same,
                         "listed": sum(b["job_neighbours"]["listed"] for b in report["batches"]),
                         "searched_by_writer": sum(b["job_neighbours"]["searched"]
                                                   for b in report["batches"]),
                         "first_part_s": round(report["first_part_s"], 2),
                         "verdicts_taken": sum(b["job_neighbours"].get("verdicts_taken", 0)
                                               for b in report["batches"]),
                         "verified_by_writer": sum(b["job_neighbours"].get("verified_by_writer", 0)
                                                   for b in report["batches"])}
                if not a.no_recall and n == a.workers[-1]:
                    gate = json.loads(config)["min_candidate_similarity"]
                    recall, job, keys = list_recall(client, manifest, reference_writer, gate,
                                                    cluster_options)
                    entry.update(recall)
                    planted = [keys[o] in job.get(keys[c], set()) for c, o in originals.items()
                               if keys[o] < keys[c] and keys[c] in job]
                    entry["planted_near_copy_recall"] = sum(planted) / max(1, len(planted))
                    entry["planted_near_copies_after_original"] = len(planted)
            result[f"dask_{n}_workers"] = entry
        result["load_average_after"] = os.getloadavg()
        print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
