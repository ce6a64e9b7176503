"""Fashion-MNIST's gzipped (or plain) IDX files as numpy arrays.

Shared by the Python examples and the main job's batch generator, so the
format is read in one place. Debian's dataset-fashion-mnist installs the files
in /usr/share/datasets/fashion-mnist.
"""
import gzip
import os
import sys

import numpy as np

DEFAULT_DATA = os.environ.get("WINNOW_FASHION_MNIST_DIR", "/usr/share/datasets/fashion-mnist")
IMAGES_MAGIC, LABELS_MAGIC = 0x00000803, 0x00000801


def read_idx(path, magic):
    """A gzipped (or plain) IDX file as a numpy uint8 array."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    found = int.from_bytes(data[0:4], "big")
    if found != magic:
        sys.exit(f"'{path}' is not an IDX file of the expected kind (magic {found:#010x})")
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(magic & 0xFF)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * len(dims)).reshape(dims)


def find(data_dir, stem):
    """The path of `stem` or `stem`.gz in data_dir."""
    for name in (stem, stem + ".gz"):
        path = os.path.join(data_dir, name)
        if os.path.exists(path):
            return path
    sys.exit(f"no {stem}(.gz) in '{data_dir}' (install dataset-fashion-mnist or pass --data)")


def load_split(data_dir, prefix):
    """(images uint8 [n, 28, 28], labels int64 [n]) of the 'train' or 't10k' split."""
    images = read_idx(find(data_dir, f"{prefix}-images-idx3-ubyte"), IMAGES_MAGIC)
    labels = read_idx(find(data_dir, f"{prefix}-labels-idx1-ubyte"), LABELS_MAGIC)
    return images, labels.astype(np.int64)
