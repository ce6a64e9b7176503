"""IndexedDataset: batches that carry their sample ids."""

from collections.abc import Mapping

import torch.utils.data


class IndexedDataset(torch.utils.data.Dataset):
    """Wraps a map-style dataset so every item comes with its index.

    ``ds[i]`` becomes ``(i, ds[i])``; with ``key="id"`` and dict items it becomes
    ``{**ds[i], "id": i}`` instead. The default collate function turns the ids
    of a batch into an int64 tensor, so ids travel with their batch through any
    DataLoader (workers, read-ahead, pinning) and reach ``Sampler.update``.

    It forwards nothing implicitly (use ``.dataset``), so it pickles and copies
    plainly, as DataLoader workers started with ``spawn`` need.
    """

    def __init__(self, dataset, key=None):
        self.dataset = dataset
        self.key = key

    def __len__(self):
        return len(self.dataset)

    def __getitem__(self, index):
        item = self.dataset[index]
        if self.key is None:
            return index, item
        if not isinstance(item, Mapping):
            raise TypeError(
                f"IndexedDataset(key={self.key!r}): the wrapped dataset returned a "
                f"{type(item).__name__}, not a dict; use key=None to get (index, item) pairs")
        if self.key in item:
            raise KeyError(f"IndexedDataset(key={self.key!r}): the item already has a field "
                           f"{self.key!r}; choose another key")
        out = dict(item)
        out[self.key] = index
        return out

    def __repr__(self):
        key = "" if self.key is None else f", key={self.key!r}"
        return f"IndexedDataset({self.dataset!r}{key})"
