"""winnow.CuratedDataset: a curated store as a training set, now or at a revision."""

import json
import os
import pickle
import subprocess

import numpy as np
import pytest
import torch.utils.data

import winnow

from curation_data import fashion_mnist, pixels_line

CLI = os.environ["WINNOW_CLI"]  # the `winnow` program of this build (set by ctest)


def run_cli(*args):
    return subprocess.run([CLI, *args], check=True, capture_output=True, text=True).stdout


def pixels_dataset(folder, count, offset):
    """A dataset of `count` Fashion-MNIST images from `offset` on, ingested as one batch."""
    images, labels = fashion_mnist(count, offset)
    manifest = folder / "m.jsonl"
    manifest.write_text("".join(pixels_line(f"k{i}", images[i], labels[i]) + "\n"
                                for i in range(count)))
    db = str(folder / "d.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(manifest))
    return db, images, labels


@pytest.fixture(scope="module")
def pixels_db(tmp_path_factory):
    """40 Fashion-MNIST images in one batch, then a person drops two and relabels one."""
    folder = tmp_path_factory.mktemp("curated")
    db, images, labels = pixels_dataset(folder, 40, 2000)
    before = winnow.CuratedDataset(db)
    kept = before.keys
    verdicts = folder / "v.csv"
    new_label = str((int(before.classes[before.targets[0]]) + 1) % 10)
    verdicts.write_text(f"item,verdict,label\n{kept[1]},drop,\n{kept[2]},drop,\n"
                        f"{kept[0]},relabel,{new_label}\n")
    run_cli("review", "--db", db, str(verdicts))
    return db, images, labels, before.revision, kept, new_label


def test_items_are_the_stored_pixels_with_their_labels(pixels_db):
    db, images, labels, first, _, _ = pixels_db
    ds = winnow.CuratedDataset(db, revision=first)
    assert len(ds) > 30 and ds.revision == first
    by_key = {f"k{i}": i for i in range(40)}
    for i in range(len(ds)):
        x, y = ds[i]
        source = by_key[ds.keys[i]]
        assert x.shape == (28, 28) and x.dtype == np.uint8
        assert (x == images[source]).all()
        assert ds.classes[y] == str(labels[source])


def test_a_revision_stays_as_it_was(pixels_db):
    db, _, _, first, kept, new_label = pixels_db
    old = winnow.CuratedDataset(db, revision=first)
    now = winnow.CuratedDataset(db)
    assert now.revision == first + 1
    assert old.keys == kept
    assert len(now) == len(old) - 2 and kept[1] not in now.keys and kept[2] not in now.keys
    assert now.classes[now.targets[now.keys.index(kept[0])]] == new_label
    assert old.classes[old.targets[0]] != new_label
    with pytest.raises(winnow.Error, match="revision 99 does not exist"):
        winnow.CuratedDataset(db, revision=99)


def test_pickled_for_spawned_workers_it_reads_the_same_samples(pixels_db):
    db, _, _, first, _, _ = pixels_db
    ds = winnow.CuratedDataset(db, revision=first, transform=lambda x: x.astype(np.float32) / 255)
    again = pickle.loads(pickle.dumps(winnow.CuratedDataset(db, revision=first)))
    assert again.keys == ds.keys and again.revision == first
    loader = torch.utils.data.DataLoader(winnow.CuratedDataset(db, revision=first), batch_size=8,
                                         num_workers=2, multiprocessing_context="spawn")
    seen = sum(len(y) for _, y in loader)
    assert seen == len(ds)
    assert ds[0][0].dtype == np.float32 and ds[0][0].max() <= 1.0


def test_image_files_in_colour_and_a_file_that_has_gone(tmp_path):
    from PIL import Image
    rng = np.random.default_rng(5)
    for cls, channel in (("red", 0), ("blue", 2)):
        (tmp_path / "images" / cls).mkdir(parents=True)
        for i in range(3):  # distinct noise pictures, each dominated by its class's channel
            pixels = rng.integers(0, 90, (30, 40 + 8 * i, 3), dtype=np.uint8)
            pixels[..., channel] = rng.integers(170, 256, pixels.shape[:2], dtype=np.uint8)
            Image.fromarray(pixels, "RGB").save(tmp_path / "images" / cls / f"{cls}{i}.png")
    db = str(tmp_path / "img.db")
    run_cli("init", "--db", db)
    run_cli("import-folder", "--db", db, str(tmp_path / "images"))
    ds = winnow.CuratedDataset(db, size=(16, 8), colour=True)
    assert len(ds) == 6 and sorted(ds.classes) == ["blue", "red"]
    x, y = ds[ds.keys.index(next(k for k in ds.keys if "red0" in k))]
    assert x.shape == (8, 16, 3) and ds.classes[y] == "red"
    assert x[..., 0].mean() > 150 and x[..., 2].mean() < 100
    # Sizes up to the working image the store keeps (32 x 32 at the defaults)
    # come from it; a larger one reads the file again.
    gone = next(i for i, k in enumerate(ds.keys) if "blue1" in k)
    large = winnow.CuratedDataset(db, size=(64, 48), colour=True)
    kept_grey = winnow.CuratedDataset(db, size=(32, 32))[gone][0]
    decoded = large[gone][0]
    assert abs(ds[gone][0].astype(int).mean() - decoded.astype(int).mean()) < 3
    os.remove(tmp_path / "images" / "blue" / "blue1.png")
    assert (winnow.CuratedDataset(db, size=(32, 32))[gone][0] == kept_grey).all()
    assert ds[gone][0].shape == (8, 16, 3)
    with pytest.raises(winnow.Error, match="blue1.png"):
        large[gone]


def test_texts_are_strings(tmp_path):
    manifest = tmp_path / "t.jsonl"
    texts = [f"paragraph {i}: " + " ".join(f"w{i * 13 + j}" for j in range(10)) for i in range(5)]
    manifest.write_text("".join(json.dumps({"key": f"t{i}", "text": t, "label": "doc"}) + "\n"
                                for i, t in enumerate(texts)))
    db = str(tmp_path / "t.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(manifest))
    ds = winnow.CuratedDataset(db)
    assert sorted(ds[i][0] for i in range(len(ds))) == sorted(texts)
    assert ds.classes == ["doc"]


def test_training_statistics_come_back_as_label_verdicts(tmp_path):
    db, _, _ = pixels_dataset(tmp_path, 30, 3000)
    ds = winnow.CuratedDataset(db)
    record = winnow.TrainingRecord(ds)
    for epoch in range(4):  # sample 0's loss stays high; the others' fall
        ids = np.arange(len(ds))
        losses = np.where(ids == 0, 4.0, 1.0 / (epoch + 1)).astype(np.float32)
        record.add(epoch, torch.from_numpy(ids), torch.from_numpy(losses))
    assert record.stats(0)["mean_loss"] == pytest.approx(4.0)
    assert record.stats(1)["loss_trend"] < 0
    names = [ds.classes[t] for t in ds.targets]
    names[1] = "not-its-label"  # trained on a label the sample does not have
    path = tmp_path / "training.jsonl"
    record.write(path, ds.keys, names)
    summary = json.loads(run_cli("import-training", "--db", db, "--run", "r1", str(path)))
    assert summary["imported"] == len(ds) - 1 and summary["other_label"] == 1
    assert summary["newly_flagged"] == 1
    exported = {json.loads(line)["key"]: json.loads(line) for line in
                run_cli("export", "--db", db).splitlines()}
    first = exported[ds.keys[0]]
    assert first["status"] == "label_issue"
    assert "mean training loss 4.000 > 2.303" in first["reason"]
    assert first["training"]["mean_loss"] == pytest.approx(4.0)
    assert exported[ds.keys[1]]["training"] is None
    report = json.loads(run_cli("report", "--db", db, "-q"))
    assert report["training"]["runs"] == ["r1"]
    assert report["training"]["samples"] == len(ds) - 1
    hardest = [h["key"] for c in report["training"]["classes"] for h in c["hardest"]]
    assert ds.keys[0] in hardest
    # A later rejudge keeps the verdict the training statistics gave.
    run_cli("rejudge", "--db", db, "--labels", "-q")
    again = {json.loads(line)["key"]: json.loads(line) for line in
             run_cli("export", "--db", db).splitlines()}
    assert again[ds.keys[0]]["status"] == "label_issue"
    with pytest.raises(subprocess.CalledProcessError):
        bad = tmp_path / "bad.jsonl"
        bad.write_text('{"key": "k1", "seen": "many"}\n')
        run_cli("import-training", "--db", db, str(bad))


def test_label_issues_are_down_weighted_and_reviewed_labels_trusted(tmp_path):
    images, labels = fashion_mnist(1000, 4000)
    labels = labels.copy()
    labels[:100] = (labels[:100] + 3) % 10  # wrong labels for the label check to find
    manifest = tmp_path / "m.jsonl"
    manifest.write_text("".join(pixels_line(f"k{i}", images[i], labels[i]) + "\n"
                                for i in range(1000)))
    db = str(tmp_path / "d.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(manifest))
    before = winnow.CuratedDataset(db, status=("accepted", "label_issue"))
    assert len(before.label_issues) >= 5 and before.reviewed == []
    assert winnow.CuratedDataset(db).keys == [k for k, st in zip(before.keys, before.statuses)
                                              if st == "accepted"]
    # A person says the first flagged sample's label is right after all.
    confirmed = before.keys[before.label_issues[0]]
    verdicts = tmp_path / "v.csv"
    verdicts.write_text(f"item,verdict\n{confirmed},keep\n")
    run_cli("review", "--db", db, str(verdicts))
    ds = winnow.CuratedDataset(db, status=("accepted", "label_issue"))
    trusted = ds.keys.index(confirmed)
    assert ds.reviewed == [trusted] and ds.statuses[trusted] == "accepted"
    assert trusted not in ds.label_issues and len(ds.label_issues) == len(before.label_issues) - 1
    pinned = winnow.CuratedDataset(db, status=("accepted", "label_issue"), revision=before.revision)
    assert pinned.reviewed == [] and pinned.label_issues == before.label_issues

    sampler = ds.sampler(12, policy="infobatch", seed=1)
    assert "noisy=3" in sampler.policy_spec
    for _ in range(2):  # every sample at the same loss: only the flags set weights apart
        for ids in np.array_split(np.array(list(iter(sampler)), dtype=np.int64), 4):
            sampler.update(torch.from_numpy(ids), torch.full((len(ids),), 0.5))
    plan = list(iter(sampler))
    weights = dict(zip(plan, sampler.weights(torch.tensor(plan)).tolist()))
    issues = [i for i in ds.label_issues if i in weights]
    assert issues and all(weights[i] < 1.0 for i in issues)
    assert all(w >= 1.0 for i, w in weights.items() if i not in ds.label_issues)
    plain = winnow.CuratedDataset(db)  # the label issues left out: nothing to down-weight
    assert confirmed in plain.keys and not plain.label_issues and plain.reviewed
    assert "noisy" not in plain.sampler(12).policy_spec


def test_a_pinned_revision_survives_ingests_rejudging_and_reviews(tmp_path):
    images, labels = fashion_mnist(600, 6000)
    first = tmp_path / "first.jsonl"
    first.write_text("".join(pixels_line(f"k{i}", images[i], labels[i]) + "\n" for i in range(300)))
    db = str(tmp_path / "d.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(first))
    pinned = winnow.CuratedDataset(db, status=("accepted", "label_issue"))
    snapshot = (list(pinned.ids), list(pinned.keys), list(pinned.targets), list(pinned.statuses),
                list(pinned.classes))
    # Later: a batch with copies of pinned samples under other labels, the
    # labels judged again, and a person's verdicts.
    later = tmp_path / "later.jsonl"
    later.write_text("".join(pixels_line(f"n{i}", images[i], (labels[i] + 1) % 10) + "\n"
                             for i in range(300, 600))
                     + "".join(pixels_line(f"c{i}", images[i], (labels[i] + 2) % 10) + "\n"
                               for i in range(20)))
    run_cli("ingest", "--db", db, str(later))
    run_cli("rejudge", "--db", db, "--labels", "-q")
    verdicts = tmp_path / "v.csv"
    verdicts.write_text(f"item,verdict,label\n{pinned.keys[0]},drop,\n"
                        f"{pinned.keys[1]},relabel,{(int(pinned.classes[pinned.targets[1]]) + 5) % 10}\n")
    run_cli("review", "--db", db, str(verdicts))
    now = winnow.CuratedDataset(db, status=("accepted", "label_issue"))
    assert now.revision > pinned.revision and now.keys != pinned.keys
    again = winnow.CuratedDataset(db, status=("accepted", "label_issue"), revision=pinned.revision)
    assert (list(again.ids), list(again.keys), list(again.targets), list(again.statuses),
            list(again.classes)) == snapshot
    assert [again[i][0].tobytes() for i in range(5)] == [pinned[i][0].tobytes() for i in range(5)]


def test_a_training_runs_predictions_vote_in_the_consensus(tmp_path):
    images, labels = fashion_mnist(60, 7000)
    manifest = tmp_path / "m.jsonl"
    with open(manifest, "w") as f:
        for i in range(60):  # two annotators; b is wrong on the first 15 items
            wrong = (int(labels[i]) + 1) % 10
            notes = [{"annotator": "a", "label": int(labels[i])},
                     {"annotator": "b", "label": wrong if i < 15 else int(labels[i])}]
            f.write(json.dumps({"key": f"k{i}", "pixels": images[i].reshape(-1).tolist(),
                                "annotations": notes}) + "\n")
    db = str(tmp_path / "d.db")
    run_cli("init", "--db", db)
    run_cli("ingest", "--db", db, str(manifest))
    ds = winnow.CuratedDataset(db, status=("accepted", "label_issue"))
    truth = {f"k{i}": int(labels[i]) for i in range(60)}
    record = winnow.TrainingRecord(ds)
    ids = np.arange(len(ds))
    true_class = np.array([ds.classes.index(str(truth[k])) if str(truth[k]) in ds.classes else 0
                           for k in ds.keys])
    for epoch in range(3):  # a model that predicts every true class
        record.add(epoch, ids, np.full(len(ds), 0.5, dtype=np.float32), predicted=true_class)
    assert record.stats(0)["predicted"] == true_class[0]
    path = tmp_path / "t.jsonl"
    record.write(path, ds.keys, [ds.classes[t] for t in ds.targets], classes=ds.classes)
    summary = json.loads(run_cli("import-training", "--db", db, str(path)))
    assert summary["imported"] == len(ds) and summary["unknown_predicted"] == 0
    exported = {json.loads(line)["key"]: json.loads(line) for line in
                run_cli("export", "--db", db).splitlines()}
    assert all(exported[k]["training"]["predicted"] == str(truth[k]) for k in ds.keys)
    # rejudge --consensus: the run is one more voter, weighed like an annotator.
    regain = json.loads(run_cli("rejudge", "--db", db, "--consensus", "-q").splitlines()[-1])
    voter = regain["consensus"]["training_voter"]
    assert voter["votes"] == len(ds) and voter["accuracy"] > 0.9
    rated = {a["name"]: a["accuracy"] for a in regain["consensus"]["annotators"]}
    assert set(rated) == {"a", "b"} and rated["a"] > rated["b"]
    exported = {json.loads(line)["key"]: json.loads(line) for line in
                run_cli("export", "--db", db).splitlines()}
    assert sum(exported[k]["label"] == str(truth[k]) for k in ds.keys) == len(ds)
    # annotate-next counts it too, and is deterministic.
    plan = [run_cli("annotate-next", "--db", db, "--budget", "5") for _ in range(2)]
    assert plan[0] == plan[1] and plan[0].startswith("item,annotator,reason,score")


def test_an_image_file_superseded_since_the_revision_is_read_from_its_file(tmp_path):
    from PIL import Image
    rng = np.random.default_rng(3)
    (tmp_path / "a" / "cls").mkdir(parents=True)
    (tmp_path / "b" / "cls").mkdir(parents=True)
    for i in range(4):
        img = Image.fromarray(rng.integers(0, 256, (16, 16, 3), dtype=np.uint8)).resize(
            (120, 90), Image.BILINEAR)
        img.save(tmp_path / "a" / "cls" / f"img{i}.png")
        if i == 0:  # a larger copy arrives later: it is kept, the original set aside
            img.resize((240, 180), Image.BILINEAR).save(tmp_path / "b" / "cls" / "img0big.png")
    db = str(tmp_path / "d.db")
    run_cli("init", "--db", db)
    run_cli("import-folder", "--db", db, str(tmp_path / "a"))
    first = winnow.CuratedDataset(db, size=(64, 64))
    before = first[first.keys.index("cls/img0.png")][0]
    run_cli("import-folder", "--db", db, str(tmp_path / "b"))
    exported = {json.loads(line)["key"]: json.loads(line) for line in
                run_cli("export", "--db", db).splitlines()}
    assert exported["cls/img0.png"]["status"] == "duplicate_near"
    pinned = winnow.CuratedDataset(db, size=(64, 64), revision=first.revision)
    assert pinned.keys == first.keys
    assert (pinned[pinned.keys.index("cls/img0.png")][0] == before).all()
