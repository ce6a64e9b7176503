"""winnow.dask: curate a backlog of manifests on a Dask cluster into an ordinary winnow database.

    winnow init --db data.db
    python3 -m winnow.dask --scheduler tcp://HOST:8786 --db data.db /shared/batch-1.jsonl ...

or from Python:

    from distributed import Client
    import winnow.dask
    with Client("tcp://HOST:8786") as client:
        report = winnow.dask.curate(client, "data.db", ["/shared/batch-1.jsonl"])

The job (docs/distributed-curation.md):
  1. every manifest is cut into parts of about `part_bytes` (whole lines); the
     workers read, decode, hash and embed part by part (winnow._curation's
     Curator: the C++ reader and the dataset's embedder);
  2. exact duplicates are found by a Dask shuffle on the content hash, the
     original being the first in the global order (manifest, line): the job's
     count of copies, a check on the writer's decisions;
  3. the neighbour search (search="clusters", the default on an empty
     dataset): the vectors are partitioned into coarse clusters (spherical
     k-means on a sample; each vector also goes to its next-nearest clusters,
     so that pairs across a boundary are found), shuffled by cluster, and each
     record's nearest *earlier* records in the job's order are found inside its
     cluster on the workers, and its near-duplicate candidates in the list
     verified there; a second shuffle brings the lists back by part;
  4. this process, the one writer, ingests each manifest as one batch through
     winnow's ingest pipeline fed with the workers' embeddings and neighbour
     lists, parts in order. It takes a record's neighbours from its list when
     the list proves itself (complete, or holding enough judged records) and
     searches its index otherwise; so the decisions are those of `winnow
     ingest` except where a true neighbour lay outside the clusters searched.
     With search="writer" the writer searches for every record (phase 1): the
     decisions of `winnow ingest`, by construction.
Tasks are pure (a retried or recomputed part gives the same bytes) and the
writer takes each part once, in order, inside the batch's transaction; a
manifest already ingested (same checksum) is skipped, as `winnow ingest` does.
"""

import argparse
import json
import os
import stat
import sys
import time
import warnings
from typing import Callable, List, NamedTuple, Optional

import numpy as np
import pandas as pd
import dask.dataframe as dd
from distributed import Client, LocalCluster

from ._curation import (Curator, ManifestPartition, Writer, batch_name, file_checksum,
                        nearest_centroids, prior_neighbours, train_centroids)

DEFAULT_PART_BYTES = 8 << 20
# Records a coarse cluster owns on average: the exact search inside a cluster
# costs its size squared, the shuffle's task count grows with the clusters.
DEFAULT_CLUSTER_SIZE = 4096
# Clusters a vector is searched from: its nearest one and the next ones, so
# that a record whose neighbour lies just across a boundary still finds it
# (docs/benchmarks.md, "winnow.dask", measures the recall).
DEFAULT_CLUSTER_COPIES = 3
# A record's list holds this many times the neighbours an ingest takes: room
# for earlier records the writer rejects (copies, near duplicates).
LIST_FACTOR = 2
# Sample vectors per centroid for k-means (FAISS asks for at least 39).
SAMPLE_PER_CLUSTER = 64
# The reader refuses a manifest with a NUL byte among its first 4 KiB (a binary
# file); the first part must hold all of them for the same verdict.
MIN_PART_BYTES = 4096


class Part(NamedTuple):
    """Bytes [start, end) of a manifest: the lines that start in them."""

    path: str  # absolute: the same file on every worker
    start: int
    end: int
    batch: int  # the manifest's position in the job
    index: int  # the part's position in the job (the global order)
    modified_ns: int  # the file's modification time: an edited file makes other tasks


def plan_parts(paths: List[str], part_bytes: int = DEFAULT_PART_BYTES) -> List[Part]:
    """The parts of the manifests `paths` (absolute), in the job's global order."""
    if part_bytes < MIN_PART_BYTES:
        raise ValueError(f"part_bytes must be at least {MIN_PART_BYTES}, got {part_bytes}")
    parts = []
    for batch, path in enumerate(paths):
        info = os.stat(path)
        for start in range(0, max(info.st_size, 1), part_bytes):
            end = min(start + part_bytes, info.st_size)
            parts.append(Part(path, start, end, batch, len(parts), info.st_mtime_ns))
    return parts


def part_text(part: Part) -> bytes:
    """The whole lines that start in [part.start, part.end) of a regular file.

    A line belongs to the part its first byte lies in, so the parts of a file
    cover each line exactly once, whatever the part size.
    """
    fd = os.open(part.path, os.O_RDONLY | os.O_NONBLOCK)  # links followed, as `winnow ingest`
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"manifest '{part.path}' is not a regular file")
        if part.start > 0:
            f.seek(part.start - 1)
            f.readline()  # up to the first line that starts at or after part.start
        begin = f.tell()
        if begin >= part.end and part.start > 0:
            return b""
        text = f.read(part.end - begin) if part.end > begin else b""
        if text and not text.endswith(b"\n"):
            text += f.readline()  # the last line started in the part: all of it
        return text


_curators = {}  # per worker process: the dataset's Curator, built once per config


def _curator(config_json: str) -> Curator:
    curator = _curators.get(config_json)
    if curator is None:
        curator = _curators[config_json] = Curator(config_json)
    return curator


def read_part(part: Part, config_json: str, threads: int = 1) -> ManifestPartition:
    """A worker's task: the part read, decoded, hashed and embedded (pure)."""
    return _curator(config_json).read(
        part_text(part), part.path, os.path.dirname(part.path), part.start == 0, threads
    )


_HASH_META = pd.DataFrame({"hash": pd.Series([], dtype=object), "order": pd.Series([], dtype=np.int64)})
_DUPLICATE_META = pd.DataFrame(
    {"order": pd.Series([], dtype=np.int64), "original": pd.Series([], dtype=np.int64)}
)


def global_order(part_index: int, entry: int) -> int:
    """An entry's position in the job: its part, then its place in the part."""
    return (part_index << 32) | entry


def hash_frame(partition: ManifestPartition, part_index: int) -> pd.DataFrame:
    """The part's records as (content hash, global order) rows."""
    rows = [(h, global_order(part_index, i)) for i, h in enumerate(partition.content_hashes()) if h]
    return pd.DataFrame(
        {"hash": pd.Series([h for h, _ in rows], dtype=object),
         "order": pd.Series([o for _, o in rows], dtype=np.int64)}
    )


def duplicates_in(frame: pd.DataFrame) -> pd.DataFrame:
    """Rows whose hash came earlier in the global order, with that first order.

    After the shuffle every row of one hash is in the same frame."""
    original = frame.groupby("hash")["order"].transform("min")
    copies = frame["order"] != original
    return pd.DataFrame({"order": frame["order"][copies], "original": original[copies]})


def exact_duplicates(client: Client, frames: list):
    """A future of the job's exact duplicates, (order, original order) rows, from the
    futures of every part's hash_frame."""
    hashes = dd.from_delayed(frames, meta=_HASH_META, verify_meta=False)
    shuffled = hashes.shuffle("hash", npartitions=max(1, len(frames)), shuffle="tasks")
    return client.compute(shuffled.map_partitions(duplicates_in, meta=_DUPLICATE_META))


# --- the neighbour search on the workers (step 3) ----------------------------------

_CLUSTER_META = pd.DataFrame({
    "cluster": pd.Series([], dtype=np.int32), "position": pd.Series([], dtype=np.int64),
    "own": pd.Series([], dtype=bool), "vector": pd.Series([], dtype=object),
    "content": pd.Series([], dtype=object)})
_LIST_META = pd.DataFrame({
    "position": pd.Series([], dtype=np.int64), "neighbours": pd.Series([], dtype=object),
    "similarities": pd.Series([], dtype=object), "complete": pd.Series([], dtype=bool),
    "verified": pd.Series([], dtype=object), "thresholds": pd.Series([], dtype=object)})


class EmbeddedRows(NamedTuple):
    """A part's records that have an embedding: their entries, vectors and what the
    near-duplicate verifier reads of them."""

    entries: np.ndarray  # int64 [r]: entry numbers within the part
    vectors: np.ndarray  # float32 [r, dim]
    contents: list  # bytes [r] (ManifestPartition.verification_contents)


def embedded_rows(partition: ManifestPartition) -> EmbeddedRows:
    vectors = partition.embeddings()
    if vectors.shape[1] == 0:
        return EmbeddedRows(np.zeros(0, np.int64), np.zeros((0, 0), np.float32), [])
    entries = np.flatnonzero(np.isfinite(vectors).all(axis=1)).astype(np.int64)
    return EmbeddedRows(entries, np.ascontiguousarray(vectors[entries]),
                        partition.verification_contents(entries))


def row_count(rows: EmbeddedRows) -> int:
    return len(rows.entries)


def part_entries(partition: ManifestPartition) -> int:
    return len(partition)


def sample_rows(rows: EmbeddedRows, first: int, every: int) -> np.ndarray:
    """The vectors whose job position is a multiple of `every` (the same sample
    whatever the partitioning)."""
    return rows.vectors[(first + rows.entries) % every == 0]


def centroids_of(samples: list, clusters: int) -> np.ndarray:
    sample = np.concatenate([s for s in samples if len(s)])
    return train_centroids(sample, clusters)


def cluster_frame(rows: EmbeddedRows, first: int, centroids: np.ndarray, copies: int) -> pd.DataFrame:
    """The part's vectors, each once per cluster it is searched in: its `copies` nearest
    clusters; it is `own` in the nearest one, where its list is made."""
    if len(rows.entries) == 0:
        return _CLUSTER_META
    nearest = nearest_centroids(rows.vectors, centroids, copies)
    m = nearest.shape[1]
    vectors = [v.tobytes() for v in rows.vectors]
    return pd.DataFrame({
        "cluster": nearest.reshape(-1).astype(np.int32),
        "position": np.repeat(first + rows.entries, m),
        "own": np.tile(np.arange(m) == 0, len(rows.entries)),
        "vector": pd.Series([v for v in vectors for _ in range(m)], dtype=object),
        "content": pd.Series([c for c in rows.contents for _ in range(m)], dtype=object)})


def search_clusters(frame: pd.DataFrame, k: int, verdicts: int, config_json: str) -> pd.DataFrame:
    """Each own record's k nearest earlier records of its cluster, with the near-duplicate
    verdicts on the leading ones (at most `verdicts`), for the clusters of one shuffled
    partition (every row of a cluster is in it)."""
    curator = _curator(config_json)
    lists = []
    for _, group in frame.groupby("cluster", sort=True):
        vectors = np.frombuffer(b"".join(group["vector"]), dtype=np.float32)
        vectors = vectors.reshape(len(group), -1)
        positions = group["position"].to_numpy(np.int64)
        own = group["own"].to_numpy(bool)
        neighbours, similarities, complete = prior_neighbours(vectors, positions, own, k)
        verified, thresholds = curator.verify_listed(list(group["content"]), positions, own,
                                                     neighbours, similarities, verdicts)
        lists.append(pd.DataFrame({
            "position": positions[own],
            "neighbours": pd.Series([row.tobytes() for row in neighbours], dtype=object),
            "similarities": pd.Series([row.tobytes() for row in similarities], dtype=object),
            "complete": complete,
            "verified": pd.Series([row.tobytes() for row in verified], dtype=object),
            "thresholds": pd.Series([row.tobytes() for row in thresholds], dtype=object)}))
    return pd.concat(lists, ignore_index=True) if lists else _LIST_META


def list_shape(writer: Writer) -> tuple:
    """(k, verdicts): a record's list holds LIST_FACTOR times the neighbours the dataset's
    ingest takes, with verdicts on up to LIST_FACTOR times the candidates it verifies."""
    return writer.neighbours_k * LIST_FACTOR, writer.candidates * LIST_FACTOR


def job_positions(client: Client, reads: dict):
    """Each part's first job position and entry count, and the job's total, from the
    futures of the parts' reads {part index: future}: positions number every entry
    (rejections too) in the job's order."""
    counts = dict(zip(reads, client.gather(
        [client.submit(part_entries, f, pure=True) for f in reads.values()])))
    firsts, total = {}, 0
    for i in sorted(counts):
        firsts[i], total = total, total + counts[i]
    return firsts, counts, total


def neighbour_lists(client: Client, reads: dict, firsts: dict, counts: dict, k: int,
                    verdicts: int, config_json: str, cluster_size: int = DEFAULT_CLUSTER_SIZE,
                    copies: int = DEFAULT_CLUSTER_COPIES) -> dict:
    """Futures of every record's prior neighbour list with its near-duplicate verdicts,
    one pandas frame per part (index: job position), from the futures of the parts'
    reads; {part index: future}, parts with no record left out. `firsts`/`counts`: each
    part's first job position and entries; lists of `k` with up to `verdicts` verdicts
    (list_shape); `config_json`: the dataset's (its verifiers)."""
    order = sorted(reads)
    rows = {i: client.submit(embedded_rows, reads[i], pure=True) for i in order}
    embedded = sum(client.gather([client.submit(row_count, rows[i], pure=True) for i in order]))
    if embedded == 0:
        return {}
    clusters = max(1, min(round(embedded / cluster_size), embedded // SAMPLE_PER_CLUSTER or 1))
    every = max(1, embedded // (clusters * SAMPLE_PER_CLUSTER))
    samples = [client.submit(sample_rows, rows[i], firsts[i], every, pure=True) for i in order]
    centroids = client.submit(centroids_of, samples, clusters, pure=True)
    frames = [client.submit(cluster_frame, rows[i], firsts[i], centroids, copies, pure=True)
              for i in order]
    vectors = dd.from_delayed(frames, meta=_CLUSTER_META, verify_meta=False)
    by_cluster = vectors.shuffle("cluster", npartitions=max(1, min(clusters, len(order))),
                                 shuffle="tasks")
    lists = by_cluster.map_partitions(search_clusters, k, verdicts, config_json, meta=_LIST_META)
    # Back by part: one output partition per part with records, in the job's order.
    with_records = [i for i in order if counts[i] > 0]
    divisions = [firsts[i] for i in with_records] + [firsts[with_records[-1]] + counts[with_records[-1]]]
    by_part = lists.set_index("position", divisions=divisions, shuffle="tasks")
    return dict(zip(with_records, client.compute(by_part.to_delayed())))


def stacked(column: pd.Series, dtype, width: int) -> np.ndarray:
    """A list frame's column of row bytes (row.tobytes() of `width` values each) as one
    [rows, width] array; [0, width] for a frame without rows."""
    return np.frombuffer(b"".join(column), dtype=dtype).reshape(len(column), width)


def attach_lists(partition: ManifestPartition, first: int, lists: pd.DataFrame, k: int,
                 verdicts: int):
    """Gives the part's records their job positions and prior neighbour lists (k long,
    with up to `verdicts` near-duplicate verdicts each). A part whose records all were
    refused has no list but still takes its positions."""
    entries = lists.index.to_numpy(np.int64) - first
    partition.set_prior_neighbours(
        first, entries, stacked(lists["neighbours"], np.int64, k),
        stacked(lists["similarities"], np.float32, k), lists["complete"].to_numpy(bool),
        stacked(lists["verified"], np.float64, verdicts),
        stacked(lists["thresholds"], np.float64, verdicts))


class PartsInFlight:
    """The parts' read tasks, submitted in the global order at most `window` parts ahead
    of the writer: a part's result waits in a worker's memory only until the writer takes
    it, so the cluster holds about `window` parts whatever the input's size. Each part's
    hash frame is kept (a few dozen bytes a record) for the shuffle."""

    def __init__(self, client: Client, parts: List[Part], config_json: str, threads: int,
                 window: int):
        self.client, self.parts, self.config_json = client, parts, config_json
        self.threads, self.window = threads, max(1, window)
        self.partitions = {}  # part index -> future, submitted and not yet taken
        self.frames = []  # the hash frames' futures, in the global order
        self._submit_until(self.window)

    def _submit_until(self, end: int):
        for part in self.parts[len(self.frames):min(end, len(self.parts))]:
            partition = self.client.submit(read_part, part, self.config_json, self.threads,
                                           pure=True)
            self.partitions[part.index] = partition
            self.frames.append(self.client.submit(hash_frame, partition, part.index, pure=True))

    def take(self, part: Part) -> ManifestPartition:
        """The part's partition (parts are taken in the global order)."""
        self._submit_until(part.index + 1 + self.window)
        return self.partitions.pop(part.index).result()


class PartsRead:
    """Every part's read task submitted at once (the neighbour search needs all the
    vectors before the writer starts); the writer takes each part, in order, with its
    neighbour lists, and the cluster then drops it."""

    def __init__(self, client: Client, parts: List[Part], config_json: str, threads: int):
        self.config_json = config_json
        self.partitions = {part.index: client.submit(read_part, part, config_json, threads,
                                                     pure=True) for part in parts}
        self.frames = [client.submit(hash_frame, self.partitions[part.index], part.index,
                                     pure=True) for part in parts]
        self.lists, self.firsts, self.shape = {}, {}, (0, 0)

    def search(self, client: Client, writer: Writer, cluster_size: int, copies: int):
        """Starts the neighbour search; returns False (and searches nothing) when the
        writer cannot take lists (the dataset is not empty)."""
        self.firsts, counts, total = job_positions(client, self.partitions)
        if not writer.start_job(total):
            return False
        self.shape = list_shape(writer)
        self.lists = neighbour_lists(client, self.partitions, self.firsts, counts, *self.shape,
                                     self.config_json, cluster_size, copies)
        return True

    def take(self, part: Part) -> ManifestPartition:
        partition = self.partitions.pop(part.index).result()
        lists = self.lists.pop(part.index, None)
        if lists is not None:
            attach_lists(partition, self.firsts[part.index], lists.result(), *self.shape)
        return partition


def curate(
    client: Client,
    db: str,
    manifests: List[str],
    part_bytes: int = DEFAULT_PART_BYTES,
    writer_threads: int = 0,
    worker_threads: int = 1,
    window: Optional[int] = None,
    on_part: Optional[Callable[[Part], None]] = None,
    search: str = "clusters",
    cluster_size: int = DEFAULT_CLUSTER_SIZE,
    cluster_copies: int = DEFAULT_CLUSTER_COPIES,
) -> dict:
    """Curates `manifests` (one batch each, in order) into the initialised database `db`.

    Returns {"batches": [the writer's batch reports], "parts": n, "exact_duplicates": n,
    "search": "clusters" or "writer", "seconds": ...}. A batch report is what `winnow
    ingest` prints ("batch", "file", "skipped", "counts", "seconds", ...) and the job's
    "job_neighbours" counts. `search`: "clusters" finds the
    neighbours on the workers (when the dataset is empty; otherwise the writer searches),
    "writer" has the writer search for every record (phase 1: exact by construction).
    `window` (search="writer"): parts read ahead of the writer (default: 4 per worker
    thread, at least 8). `on_part(part)` is called as the writer takes each part.
    """
    if search not in ("clusters", "writer"):
        raise ValueError(f"search must be 'clusters' or 'writer', got '{search}'")
    if cluster_size < 1 or cluster_copies < 1:
        raise ValueError("cluster_size and cluster_copies must be at least 1")
    paths = [os.path.abspath(m) for m in manifests]
    for path in paths:
        if not os.path.isfile(path):
            raise ValueError(f"manifest '{path}' does not exist")
    t0 = time.monotonic()
    writer = Writer(db, writer_threads)
    config_json = writer.config_json()
    # Manifests already ingested (by checksum) are skipped without being read.
    checksums = [file_checksum(path) for path in paths]
    todo = [i for i, checksum in enumerate(checksums) if not writer.batch_done(checksum)]
    parts = plan_parts([paths[i] for i in todo], part_bytes)
    searched_by = "writer"
    if search == "clusters" and parts and writer.can_start_job():
        in_flight = PartsRead(client, parts, config_json, worker_threads)
        if in_flight.search(client, writer, cluster_size, cluster_copies):
            searched_by = "clusters"
    else:
        if window is None:
            window = max(8, 4 * sum(client.nthreads().values()))
        in_flight = PartsInFlight(client, parts, config_json, worker_threads, window)

    first_part_s = []  # when the writer took its first part: the reading (and search) before it

    def in_order(batch: int):
        for part in parts:
            if part.batch != batch:
                continue
            partition = in_flight.take(part)  # the writer holds it now; the cluster drops it
            if not first_part_s:
                first_part_s.append(time.monotonic() - t0)
            if on_part is not None:
                on_part(part)
            yield partition

    batches = []
    for i, path in enumerate(paths):
        entries = in_order(todo.index(i)) if i in todo else iter(())
        batches.append(json.loads(writer.ingest(batch_name(path), checksums[i], entries)))
    try:
        writer.save_index()  # what the batches left unsaved: the next open need not catch up
    except (ValueError, RuntimeError) as e:  # winnow.Error is a ValueError
        warnings.warn(f"the batches are committed, but the index file was not saved (the next "
                      f"open catches up from the store): {e}")
    copies = exact_duplicates(client, in_flight.frames).result() if in_flight.frames else []
    return {
        "batches": batches,
        "parts": len(parts),
        "exact_duplicates": int(len(copies)),
        "search": searched_by,
        "first_part_s": first_part_s[0] if first_part_s else None,
        "seconds": time.monotonic() - t0,
    }


# The exit codes of the `winnow` program, by winnow.Error's kind (docs/cli.md).
EXIT_CODES = {"invalid_input": 1, "internal": 2, "not_found": 3, "busy": 4, "io": 5, "corrupt": 6}


def check_manifest(path: str) -> None:
    """Raises winnow.Error (not_found or invalid_input) unless `path` names a
    regular file: a folder or a FIFO is refused before anything opens it."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise _error(f"manifest '{path}' does not exist", "not_found") from None
    except OSError as e:
        raise _error(f"manifest '{path}' cannot be read: {e.strerror}", "io") from None
    if not stat.S_ISREG(info.st_mode):
        what = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file"
        raise _error(f"manifest '{path}' is {what}; a manifest is a JSON Lines file",
                     "invalid_input")


def _error(message: str, kind: str) -> Exception:
    from . import Error  # winnow.Error: a ValueError with a kind
    e = Error(message)
    e.kind = kind
    return e


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m winnow.dask",
        description="Curate manifests on a Dask cluster into a winnow database (one batch per "
        "manifest, the decisions of `winnow ingest`).",
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--scheduler", help="address of the Dask scheduler, e.g. tcp://host:8786")
    where.add_argument("--local-workers", type=int, help="start a local cluster of N worker processes")
    parser.add_argument("--db", required=True, help="database initialised by `winnow init`")
    parser.add_argument("--part-bytes", type=int, default=DEFAULT_PART_BYTES,
                        help="manifest bytes per task (default %(default)s)")
    parser.add_argument("--threads", type=int, default=0,
                        help="the writer's threads, as `winnow ingest --threads` (0: every core)")
    parser.add_argument("--search", choices=("clusters", "writer"), default="clusters",
                        help="where records' neighbours are found: on the workers, in coarse "
                        "clusters (default; an empty dataset only), or by the writer's index "
                        "search (the decisions of `winnow ingest` by construction)")
    parser.add_argument("--cluster-size", type=int, default=DEFAULT_CLUSTER_SIZE,
                        help="records per coarse cluster, on average (default %(default)s)")
    parser.add_argument("--cluster-copies", type=int, default=DEFAULT_CLUSTER_COPIES,
                        help="nearest clusters each vector is searched from (default %(default)s)")
    parser.add_argument("manifests", nargs="+", help="JSON Lines manifests every worker can read")
    args = parser.parse_args(argv)
    try:
        for path in args.manifests:
            check_manifest(path)
        report = _run(args)
    except ValueError as e:  # winnow.Error (a ValueError with a kind) and bad arguments
        print(f"python3 -m winnow.dask: error: {e}", file=sys.stderr)
        return EXIT_CODES.get(getattr(e, "kind", "invalid_input"), 1)
    for batch in report["batches"]:
        print(json.dumps(batch))
    print(json.dumps({k: v for k, v in report.items() if k != "batches"}))
    return 0


def _run(args) -> dict:
    cluster = None
    if args.local_workers is not None:
        cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        with Client(cluster if cluster is not None else args.scheduler) as client:
            report = curate(client, args.db, args.manifests, args.part_bytes, args.threads,
                            search=args.search, cluster_size=args.cluster_size,
                            cluster_copies=args.cluster_copies)
    finally:
        if cluster is not None:
            cluster.close()
    return report


if __name__ == "__main__":
    # Run as `python3 -m winnow.dask`, this file is __main__, whose functions and
    # classes Dask would pickle by value; the job's must travel by reference to
    # the winnow.dask module every worker imports.
    from winnow.dask import main as module_main

    sys.exit(module_main())
