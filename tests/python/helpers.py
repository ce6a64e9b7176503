"""Datasets for the DataLoader tests; importable by spawned workers."""
import torch
import torch.utils.data


class SquareDataset(torch.utils.data.Dataset):
    """Item i is (features, label) with features = [i, i*i] (float64, exact)."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return torch.tensor([float(i), float(i) * i], dtype=torch.float64), i % 7


class DictDataset(torch.utils.data.Dataset):
    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return {"x": torch.tensor([float(i)]), "y": i % 3}


def skewed_loss(ids):
    """A fixed, skewed per-sample loss of each id, so infobatch really prunes."""
    return ((ids.double() * 0.6180339887) % 1.0).float() ** 2 + 0.01


def train_epoch(sampler, loss_of=skewed_loss, batch_size=128):
    """Serves one epoch by hand, feeding `loss_of(ids)` back; returns the ids served."""
    ids = list(sampler)
    tensor_ids = torch.tensor(ids, dtype=torch.int64)
    for start in range(0, len(ids), batch_size):
        chunk = tensor_ids[start:start + batch_size]
        sampler.update(chunk, loss_of(chunk))
    return ids
