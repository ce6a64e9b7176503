"""winnow.dask: curate a backlog of manifests on a Dask cluster into an ordinary winnow database.

    winnow init --db data.db
    python3 -m winnow.dask --scheduler tcp://HOST:8786 --db data.db /shared/batch-1.jsonl ...

or from Python:

    from distributed import Client
    import winnow.dask
    with Client("tcp://HOST:8786") as client:
        report = winnow.dask.curate(client, "data.db", ["/shared/batch-1.jsonl"])

The job, phase 1 (docs/distributed-curation.md):
  1. every manifest is cut into parts of about `part_bytes` (whole lines); the
     workers read, decode, hash and embed part by part (winnow._curation's
     Curator: the C++ reader and the dataset's embedder);
  2. exact duplicates are found by a Dask shuffle on the content hash, the
     original being the first in the global order (manifest, line); in phase 1
     this is the job's count of copies, a check on the writer's decisions (in
     phase 2 it picks the originals the neighbour search runs on);
  3. this process, the one writer, ingests each manifest as one batch through
     winnow's ingest pipeline fed with the workers' embeddings, parts in
     order: the statuses, reasons and event log `winnow ingest` writes for the
     same manifests, by construction.
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
from typing import Callable, List, NamedTuple, Optional

import numpy as np
import pandas as pd
import dask.dataframe as dd
from distributed import Client, LocalCluster

from ._curation import Curator, ManifestPartition, Writer, batch_name, file_checksum

DEFAULT_PART_BYTES = 8 << 20
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
    fd = os.open(part.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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


def curate(
    client: Client,
    db: str,
    manifests: List[str],
    part_bytes: int = DEFAULT_PART_BYTES,
    writer_threads: int = 0,
    worker_threads: int = 1,
    window: Optional[int] = None,
    on_part: Optional[Callable[[Part], None]] = None,
) -> dict:
    """Curates `manifests` (one batch each, in order) into the initialised database `db`.

    Returns {"batches": [the writer's batch reports], "parts": n, "exact_duplicates": n,
    "seconds": ...}. `window`: parts read ahead of the writer (default: 4 per worker
    thread, at least 8). `on_part(part)` is called as the writer takes each part.
    """
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
    if window is None:
        window = max(8, 4 * sum(client.nthreads().values()))
    in_flight = PartsInFlight(client, parts, config_json, worker_threads, window)

    def in_order(batch: int):
        for part in parts:
            if part.batch != batch:
                continue
            partition = in_flight.take(part)  # the writer holds it now; the cluster drops it
            if on_part is not None:
                on_part(part)
            yield partition

    batches = []
    for i, path in enumerate(paths):
        entries = in_order(todo.index(i)) if i in todo else iter(())
        batches.append(json.loads(writer.ingest(batch_name(path), checksums[i], entries)))
    copies = exact_duplicates(client, in_flight.frames).result() if in_flight.frames else []
    return {
        "batches": batches,
        "parts": len(parts),
        "exact_duplicates": int(len(copies)),
        "seconds": time.monotonic() - t0,
    }


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
    parser.add_argument("manifests", nargs="+", help="JSON Lines manifests every worker can read")
    args = parser.parse_args(argv)
    cluster = None
    if args.local_workers is not None:
        cluster = LocalCluster(n_workers=args.local_workers, threads_per_worker=1, processes=True,
                               dashboard_address=None)
    try:
        with Client(cluster if cluster is not None else args.scheduler) as client:
            report = curate(client, args.db, args.manifests, args.part_bytes, args.threads)
    finally:
        if cluster is not None:
            cluster.close()
    for batch in report["batches"]:
        print(json.dumps(batch))
    print(json.dumps({k: v for k, v in report.items() if k != "batches"}))
    return 0


if __name__ == "__main__":
    # Run as `python3 -m winnow.dask`, this file is __main__, whose functions and
    # classes Dask would pickle by value; the job's must travel by reference to
    # the winnow.dask module every worker imports.
    from winnow.dask import main as module_main

    sys.exit(module_main())
