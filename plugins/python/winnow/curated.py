"""CuratedDataset: train on a curated store, as it is now or at a fixed revision."""

import torch.utils.data


class CuratedDataset(torch.utils.data.Dataset):
    """The samples of a winnow dataset with some statuses, ready to train on.

    ``CuratedDataset(db, status="accepted", revision=None, transform=None,
    size=(28, 28), colour=False)`` reads the store ``db`` once, at ``revision``
    (default: the current one, which it then keeps: ``.revision``), and holds
    the samples that had ``status`` then (a status or several, e.g.
    ``("accepted", "label_issue")``), with their labels then. Item ``i``
    is ``(x, y)``: ``x`` the sample's content as winnow decodes it (pixel
    arrays and image files as a uint8 numpy array [height, width] at ``size``,
    [height, width, 3] with ``colour=True``; texts as str), passed through
    ``transform`` when given; ``y`` its class index into ``.classes`` (-1 for an
    unlabelled sample).

    The sampler's id of item ``i`` is ``i``; ``.ids[i]`` is the sample's store
    id and ``.keys[i]`` its key, so a training run can say which samples it
    saw. It pickles as its database path and revision, so DataLoader workers
    started with ``spawn`` read the same samples. A sample whose file has gone
    raises winnow.Error naming the sample and the file.

    Curation into training: ``.statuses[i]`` is item ``i``'s status,
    ``.label_issues`` the items flagged as label issues and ``.reviewed`` those
    a person's verdict decided (``winnow review``). ``ds.sampler(num_epochs,
    **kw)`` is a ``winnow.Sampler`` over the items that down-weights the label
    issues (noise-aware, docs/pruning.md) and never the reviewed ones; it is a
    plain ``winnow.Sampler(ds, num_epochs, **kw)`` when no item is flagged
    (the default status, "accepted", leaves the label issues out altogether).
    """

    def __init__(self, db, status="accepted", revision=None, transform=None, size=(28, 28),
                 colour=False):
        from ._curation import CuratedSamples
        width, height = size
        if width <= 0 or height <= 0:
            raise ValueError(f"CuratedDataset: size {size!r} must be two positive sides")
        self.db = str(db)
        self.status = status
        self.transform = transform
        self.size = (int(width), int(height))
        self.colour = bool(colour)
        statuses = [status] if isinstance(status, str) else list(status)
        self._samples = CuratedSamples(self.db, statuses, revision)
        self.revision = self._samples.revision
        self.classes = list(self._samples.class_names)
        self.ids = list(self._samples.ids)
        self.keys = list(self._samples.keys)
        self.targets = list(self._samples.class_indices)
        self.statuses = list(self._samples.statuses)
        self.label_issues = [i for i, st in enumerate(self.statuses) if st == "label_issue"]
        self.reviewed = [i for i, by_person in enumerate(self._samples.reviewed) if by_person]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, index):
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(f"CuratedDataset: index {index} out of range for {len(self)} samples")
        x = self._samples.content(index, self.size[0], self.size[1], self.colour)
        if self.transform is not None:
            x = self.transform(x)
        return x, self.targets[index]

    def sampler(self, num_epochs, **kwargs):
        """A winnow.Sampler over this dataset that takes curation's verdicts:
        label issues down-weighted, reviewed labels trusted (kwargs go to
        winnow.Sampler: policy, target_saving, seed, ...)."""
        from .sampler import Sampler
        if not self.label_issues:  # nothing flagged: the plain sampler
            return Sampler(self, num_epochs, **kwargs)
        return Sampler(self, num_epochs, label_issues=self.label_issues,
                       trusted_labels=self.reviewed or None, **kwargs)

    def __getstate__(self):
        return {"db": self.db, "status": self.status, "revision": self.revision,
                "transform": self.transform, "size": self.size, "colour": self.colour}

    def __setstate__(self, state):
        self.__init__(state["db"], state["status"], state["revision"], state["transform"],
                      state["size"], state["colour"])

    def __repr__(self):
        return (f"CuratedDataset({self.db!r}, status={self.status!r}, revision={self.revision}: "
                f"{len(self)} samples, {len(self.classes)} classes)")
