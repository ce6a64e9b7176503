"""TrainingRecord: what a training run learned about each sample, for curation."""

import json

import numpy as np
import torch

from ._winnow import TrainingRecord as _CoreRecord


def _host(values, dtype):
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    return np.ascontiguousarray(np.asarray(values), dtype=dtype)


class TrainingRecord:
    """Per-sample statistics of the losses a run saw: how often each sample
    was seen, its mean loss, the trend of its loss over epochs, its last loss.

    ``record.add(epoch, ids, per_sample_loss)`` in the training loop (the same
    ids and losses ``Sampler.update`` takes); ``record.write(path, keys)`` at
    the end writes one JSON line per sample for ``winnow import-training``,
    keyed by ``keys[i]`` (``CuratedDataset.keys``), with ``labels[i]`` when
    given (the class name the run trained on: a sample relabelled since is
    then left out), and with ``classes`` (``CuratedDataset.classes``) the name
    of the class predicted in most epochs, when ``add`` was given predictions.
    Samples never seen are not written.
    """

    def __init__(self, dataset_or_size):
        size = dataset_or_size if isinstance(dataset_or_size, int) else len(dataset_or_size)
        self._core = _CoreRecord(size)

    def __len__(self):
        return len(self._core)

    def add(self, epoch, ids, losses, predicted=None):
        """Records the losses of samples ``ids`` in ``epoch`` and, when given, the
        classes the model predicted for them (``logits.argmax(1)``): the class
        predicted in most epochs is a voter in the consensus (``winnow
        rejudge --consensus``) and in ``winnow annotate-next``."""
        self._core.add(int(epoch), _host(ids, np.int64), _host(losses, np.float32),
                       None if predicted is None else _host(predicted, np.int64))

    def stats(self, i):
        return self._core.stats(i)

    def write(self, path, keys, labels=None, classes=None):
        if len(keys) != len(self):
            raise ValueError(f"TrainingRecord.write: {len(keys)} keys for {len(self)} samples")
        if labels is not None and len(labels) != len(self):
            raise ValueError(f"TrainingRecord.write: {len(labels)} labels for {len(self)} samples")
        with open(path, "w") as out:
            for i, key in enumerate(keys):
                row = self._core.stats(i)
                if row["seen"] == 0:
                    continue
                predicted = row.pop("predicted")
                row = {"key": key, **row}
                if labels is not None:
                    row["label"] = str(labels[i])
                if predicted is not None and classes is not None:
                    row["predicted"] = str(classes[predicted])
                out.write(json.dumps(row) + "\n")
