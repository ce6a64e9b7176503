"""Manifests for the winnow.dask tests and benchmark: Fashion-MNIST images as pixels
records in arrival order, with planted exact copies, near copies (a one-pixel shift),
flipped labels, and lines a manifest may hold that are bad (invalid JSON, no key, a key
given twice, a constant image the embedder refuses, blank lines)."""

import gzip
import json
import os
import random
import struct

import numpy as np

FASHION_MNIST = "/usr/share/datasets/fashion-mnist"


def fashion_mnist(count: int, offset: int = 0):
    """`count` training images [n, 28, 28] (uint8) and labels from image `offset` on."""
    with gzip.open(os.path.join(FASHION_MNIST, "train-images-idx3-ubyte.gz"), "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        assert magic == 2051 and offset + count <= n
        f.seek(16 + offset * rows * cols)
        images = np.frombuffer(f.read(count * rows * cols), dtype=np.uint8).reshape(count, rows, cols)
    with gzip.open(os.path.join(FASHION_MNIST, "train-labels-idx1-ubyte.gz"), "rb") as f:
        magic, n = struct.unpack(">II", f.read(8))
        assert magic == 2049
        f.seek(8 + offset)
        labels = np.frombuffer(f.read(count), dtype=np.uint8)
    return images, labels


def pixels_line(key: str, image: np.ndarray, label) -> str:
    return json.dumps({"key": key, "pixels": image.reshape(-1).tolist(), "label": int(label)})


def planted_lines(images, labels, seed: int, prefix: str, copies_of=None):
    """Manifest lines of `images` in a seeded arrival order, with planted copies.

    copies_of: images of an earlier manifest, some of which are copied in here too
    (duplicates across batches)."""
    rng = random.Random(seed)
    n = len(images)
    lines = [pixels_line(f"{prefix}-{i}", images[i], labels[i]) for i in range(n)]
    flipped = rng.sample(range(n), max(1, n // 25))
    for i in flipped:
        lines[i] = pixels_line(f"{prefix}-{i}", images[i], (int(labels[i]) + 1 + rng.randrange(9)) % 10)
    planted = []
    for j, i in enumerate(rng.sample(range(n), max(1, n // 20))):
        planted.append(pixels_line(f"{prefix}-exact-{j}", images[i], labels[i]))
    for j, i in enumerate(rng.sample(range(n), max(1, n // 20))):
        planted.append(pixels_line(f"{prefix}-near-{j}", np.roll(images[i], 1, axis=1), labels[i]))
    if copies_of is not None:
        earlier_images, earlier_labels = copies_of
        for j, i in enumerate(rng.sample(range(len(earlier_images)), max(1, len(earlier_images) // 25))):
            planted.append(pixels_line(f"{prefix}-earlier-{j}", earlier_images[i], earlier_labels[i]))
    constant = np.full((28, 28), 7, dtype=np.uint8)
    bad = [
        '{"key": "' + prefix + '-broken", "pixels": [1, 2,',  # invalid JSON
        json.dumps({"pixels": images[0].reshape(-1).tolist()}),  # no key
        pixels_line(f"{prefix}-0", images[1], labels[1]),  # key given twice
        pixels_line(f"{prefix}-constant", constant, 3),  # the embedder refuses it
        json.dumps({"key": f"{prefix}-text", "text": "a text among images", "label": 1}),
        "",
        "   ",
    ]
    everything = lines + planted + bad
    head, tail = everything[:n // 2], everything[n // 2:]
    rng.shuffle(tail)  # copies after most originals, some before (arrival order is what it is)
    return head + tail


def write_manifests(folder: str, count: int, seed: int = 7):
    """Two manifests of `count` images each (the second copying some of the first's);
    returns their absolute paths."""
    first_images, first_labels = fashion_mnist(count, 0)
    second_images, second_labels = fashion_mnist(count, count)
    paths = []
    for name, lines in (
        ("batch-1.jsonl", planted_lines(first_images, first_labels, seed, "a")),
        ("batch-2.jsonl", planted_lines(second_images, second_labels, seed + 1, "b",
                                        copies_of=(first_images, first_labels))),
    ):
        path = os.path.abspath(os.path.join(folder, name))
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        paths.append(path)
    return paths
