"""winnow._curation: the C++ curation core from Python gives what `winnow ingest` stores."""

import json
import os
import pickle
import sqlite3
import subprocess

import numpy as np
import pytest

import winnow
from winnow._curation import (Curator, ManifestPartition, Writer, batch_name, file_checksum,
                              information_gain, nearest_centroids, pixels_hash, prior_neighbours,
                              text_hash, train_centroids)

from curation_data import fashion_mnist, pixels_line

CLI = os.environ["WINNOW_CLI"]  # the `winnow` program of this build (set by ctest)


def run_cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def ingested(tmp_path_factory):
    """A database of 60 Fashion-MNIST images ingested by `winnow ingest` (default config)."""
    folder = tmp_path_factory.mktemp("binding")
    images, labels = fashion_mnist(60, 1000)
    manifest = folder / "m.jsonl"
    manifest.write_text("".join(pixels_line(f"k{i}", images[i], labels[i]) + "\n" for i in range(60)))
    db = str(folder / "d.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(manifest))
    return db, manifest, images


def stored(db):
    with sqlite3.connect(db) as c:
        rows = c.execute(
            "SELECT s.external_key, s.content_hash, v.embedding FROM samples s "
            "LEFT JOIN curation_vectors v ON v.sample_id = s.id ORDER BY s.id").fetchall()
    return {key: (h, None if blob is None else np.frombuffer(blob, dtype=np.float32)) for key, h, blob in rows}


def test_embeddings_and_hashes_equal_what_the_cli_stored(ingested):
    db, _, images = ingested
    curator = Curator(Writer(db).config_json())
    vectors = curator.embed_pixels(images)
    hashes = pixels_hash(images)
    rows = stored(db)
    with_vector = 0
    for i in range(len(images)):
        stored_hash, stored_vector = rows[f"k{i}"]
        assert hashes[i] == stored_hash
        if stored_vector is not None:  # accepted and label_issue samples keep their vector
            with_vector += 1
            assert np.array_equal(vectors[i], stored_vector)
    assert with_vector > 0
    assert curator.dim == vectors.shape[1]


def test_a_partition_reads_as_the_cli_does_and_pickles(ingested):
    db, manifest, images = ingested
    curator = Curator(Writer(db).config_json())
    part = curator.read(manifest.read_bytes(), str(manifest), str(manifest.parent), True)
    assert len(part) == 60 and part.lines == 60
    rows = stored(db)
    assert part.keys() == [f"k{i}" for i in range(60)]
    assert part.content_hashes() == [rows[f"k{i}"][0] for i in range(60)]
    assert np.array_equal(part.embeddings(), curator.embed_pixels(images))
    again = pickle.loads(pickle.dumps(part))
    assert again.keys() == part.keys() and again.lines == part.lines
    assert np.array_equal(again.embeddings(), part.embeddings())


def test_verifiers_gain_and_label_vote_on_arrays(ingested):
    db, _, images = ingested
    curator = Curator(Writer(db).config_json())
    assert curator.image_similarity(images[0], images[0]) >= curator.image_threshold
    assert curator.image_similarity(images[0], images[1]) < curator.image_threshold
    assert curator.text_similarity("the same words here", "the same words here") >= curator.text_threshold
    assert text_hash("a") != text_hash("b")
    vectors = curator.embed_pixels(images[:6])
    similarities = (vectors[1:5] @ vectors[0]).astype(np.float32)[None, :]
    gains = information_gain(np.sort(similarities)[:, ::-1].copy())
    assert gains[0] == pytest.approx(float(np.mean(1.0 - similarities)), abs=1e-6)
    assert information_gain(np.full((1, 4), np.nan, dtype=np.float32))[0] == 1.0  # no neighbour
    k = 15
    close = np.full((2, k), 0.9, dtype=np.float32)
    theirs = np.array([[4] * k, [4] * k])
    quality, flagged, suggested = curator.label_quality(close, theirs, np.array([4, 7]))
    assert not flagged[0] and quality[0] > quality[1]
    assert flagged[1] and suggested[1] == 4


def test_errors_are_winnow_errors():
    with pytest.raises(winnow.Error):
        Curator("{not json")


def test_the_writer_refuses_a_part_embedded_otherwise_and_keeps_nothing(ingested, tmp_path):
    db, _, images = ingested
    config = json.loads(Writer(db).config_json())
    config["embedder"] = "pixels(width=28,height=28)"  # not the dataset's embedder
    manifest = tmp_path / "other.jsonl"
    manifest.write_text("".join(pixels_line(f"z{i}", images[i], 1) + "\n" for i in range(5)))
    part = Curator(json.dumps(config)).read(manifest.read_bytes(), str(manifest), str(tmp_path), True)
    before = len(stored(db))
    with pytest.raises(winnow.Error, match="embedded with"):
        Writer(db).ingest(str(manifest), "checksum-of-other", [part])
    assert len(stored(db)) == before


def test_damaged_partition_bytes_are_a_corrupt_error():
    part = ManifestPartition.__new__(ManifestPartition)
    with pytest.raises(winnow.Error) as raised:
        part.__setstate__(b"\xa1\x63abc")  # CBOR, but no partition
    assert raised.value.kind == "corrupt"


def test_a_failing_source_fails_the_batch_keeps_nothing_and_can_be_redone(ingested, tmp_path):
    db, _, images = ingested
    writer = Writer(db)
    curator = Curator(writer.config_json())
    manifest = tmp_path / "retry.jsonl"
    manifest.write_text("".join(pixels_line(f"r{i}", images[i], 1) + "\n" for i in range(5)))

    def read():
        return curator.read(manifest.read_bytes(), str(manifest), str(tmp_path), True)

    def failing():
        yield read()
        raise RuntimeError("a task was lost")

    before = len(stored(db))
    with pytest.raises(RuntimeError, match="a task was lost"):
        writer.ingest(str(manifest), "checksum-of-retry", failing())
    assert len(stored(db)) == before
    assert not writer.batch_done("checksum-of-retry")
    report = json.loads(writer.ingest(str(manifest), "checksum-of-retry", [read()]))
    assert not report["skipped"] and report["counts"]["total"] == 5
    assert writer.batch_done("checksum-of-retry") and len(stored(db)) == before + 5
    # The end of a job saves what the batches left out of the index file, once.
    writer.save_index()
    assert not writer.save_index()
    status = json.loads(run_cli("status", "--db", db, "--json"))
    assert "caught_up_on_open" not in status["index"]


def test_the_writer_reports_a_batch_as_winnow_ingest_prints_it(ingested, tmp_path):
    """Writer.ingest's report is `winnow ingest`'s JSON (ingest::to_json), plus job_neighbours."""
    _, _, images = ingested
    manifest = tmp_path / "same.jsonl"
    manifest.write_text("".join(pixels_line(f"s{i}", images[i], 2) + "\n" for i in range(6)))
    by_cli, by_writer = str(tmp_path / "cli.db"), str(tmp_path / "writer.db")
    for db in (by_cli, by_writer):
        run_cli("init", "--db", db)
    cli = json.loads(run_cli("ingest", "--db", by_cli, str(manifest)).splitlines()[0])
    writer = Writer(by_writer)
    part = Curator(writer.config_json()).read(manifest.read_bytes(), str(manifest), str(tmp_path),
                                              True)
    report = json.loads(writer.ingest(batch_name(str(manifest)), file_checksum(str(manifest)),
                                      [part]))
    assert set(report) == set(cli) | {"job_neighbours"}
    assert report["file"] == cli["file"] and report["batch"] == cli["batch"] == 1
    assert report["counts"] == cli["counts"] and not report["skipped"]
    assert set(report["job_neighbours"]) == {"listed", "searched", "verdicts_taken",
                                             "verified_by_writer"}


def test_neighbour_search_functions_on_arrays():
    """The job's neighbour search (phase 2) from Python: prior_neighbours is the brute force
    over earlier positions, nearest_centroids ranks centroids, train_centroids is seeded."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(120, 9)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    positions = rng.permutation(1000)[:120].astype(np.int64)
    wanted = np.arange(120) % 2 == 0
    got, sims, complete = prior_neighbours(x, positions, wanted, 7)
    assert got.shape == (60, 7) and sims.shape == (60, 7) and complete.shape == (60,)
    for row, i in enumerate(np.flatnonzero(wanted)):
        earlier = np.flatnonzero(positions < positions[i])
        scores = x[earlier] @ x[i]
        best = earlier[np.argsort(-scores, kind="stable")][:7]
        assert list(got[row][:len(best)]) == list(positions[best])
        assert np.allclose(sims[row][:len(best)], np.sort(scores)[::-1][:7], atol=1e-6)
        assert (got[row][len(best):] == -1).all()
        assert complete[row] == (len(earlier) <= 7)
    centroids = train_centroids(x, 4, seed=5)
    assert np.array_equal(centroids, train_centroids(x, 4, seed=5))
    nearest = nearest_centroids(x, centroids, 2)
    assert nearest.shape == (120, 2)
    assert (nearest[:, 0] == np.argmax(x @ centroids.T, axis=1)).all()
    with pytest.raises(winnow.Error, match="at least as many sample vectors"):
        train_centroids(x[:3], 4)
    with pytest.raises(winnow.Error, match="given twice"):
        prior_neighbours(x[:2], np.array([5, 5]), np.array([True, True]), 3)


def test_prior_lists_must_fit_the_partition(ingested):
    _, manifest, _ = ingested
    curator = Curator(Writer(ingested[0]).config_json())
    partition = curator.read(manifest.read_bytes(), str(manifest), str(manifest.parent), True)
    k = 4
    ok = (np.array([0, 1]), np.full((2, k), -1), np.zeros((2, k), np.float32), np.array([True, True]))
    partition.set_prior_neighbours(10, *ok)
    with pytest.raises(winnow.Error, match="must agree"):
        partition.set_prior_neighbours(10, np.array([0]), *ok[1:])
    with pytest.raises(winnow.Error, match="entry 999 is no record"):
        partition.set_prior_neighbours(10, np.array([0, 999]), *ok[1:])
    with pytest.raises(winnow.Error, match=r"\[r, v\]"):
        partition.set_prior_neighbours(10, *ok, np.zeros((3, 2)), np.zeros((3, 2)))
    partition.set_prior_neighbours(10, *ok, np.full((2, 2), np.nan), np.full((2, 2), np.nan))


def test_workers_verify_the_pairs_of_their_lists(ingested):
    """Curator.verify_listed gives each list's leading pairs the verifier's verdict (the
    pairs an ingest would verify, from the candidate gate up), as image_similarity does."""
    _, manifest, images = ingested
    curator = Curator(Writer(ingested[0]).config_json())
    partition = curator.read(manifest.read_bytes(), str(manifest), str(manifest.parent), True)
    n = len(partition)
    contents = partition.verification_contents(np.arange(n))
    assert len(contents) == n and all(contents)
    positions = np.arange(100, 100 + n)
    wanted = np.zeros(n, bool)
    wanted[[5, 9]] = True
    # Record 5 lists 0 (above any gate), 1 (above), then 2 below the gate; 9 lists nothing.
    neighbours = np.array([[100, 101, 102, -1], [-1, -1, -1, -1]])
    similarities = np.array([[0.999, 0.99, 0.5, -np.inf], [-np.inf] * 4], np.float32)
    verified, thresholds = curator.verify_listed(contents, positions, wanted, neighbours,
                                                 similarities, 3)
    assert verified.shape == (2, 3) and thresholds.shape == (2, 3)
    assert verified[0, 0] == curator.image_similarity(images[5], images[0])
    assert verified[0, 1] == curator.image_similarity(images[5], images[1])
    assert thresholds[0, 0] == curator.image_threshold
    assert np.isnan(verified[0, 2]) and np.isnan(verified[1]).all()
    # At most max_verdicts pairs; a listed record that is not at hand gets none.
    verified, _ = curator.verify_listed(contents, positions, wanted, neighbours, similarities, 1)
    assert verified.shape == (2, 1) and not np.isnan(verified[0, 0])
    verified, _ = curator.verify_listed(contents, positions, wanted, np.array([[7, 101, -1, -1],
                                        [-1] * 4]), similarities, 3)
    assert np.isnan(verified[0, 0]) and not np.isnan(verified[0, 1])
    with pytest.raises(winnow.Error, match="no record content"):
        curator.verify_listed([b"junk"] * n, positions, wanted, neighbours, similarities, 3)
