"""Checkpoints: state_dict / load_state_dict mid-epoch, pickling, copying."""
import copy
import pickle
import re

import numpy as np
import pytest
import torch

import winnow
from helpers import DictDataset, SquareDataset, skewed_loss, train_epoch


def run_rest(sampler, epochs_left):
    """Serves the rest of the current iteration and `epochs_left` more epochs."""
    out = []
    for _ in range(epochs_left):
        out.append(train_epoch(sampler))
    return out


def test_resume_mid_epoch_gives_the_same_sequence_and_plans():
    n, epochs = 700, 6
    original = winnow.Sampler(n, epochs, seed=21)
    train_epoch(original)
    train_epoch(original)  # epoch 1 is pruned
    it = iter(original)
    head = [next(it) for _ in range(250)]
    head_ids = torch.tensor(head)
    original.update(head_ids, skewed_loss(head_ids))
    state = original.state_dict()
    assert state["position"] == 250

    resumed = winnow.Sampler(n, epochs, seed=999)  # another seed: the state decides
    resumed.load_state_dict(state)
    assert len(resumed) == len(original) - 250
    rest_resumed = list(resumed)
    rest_original = list(it)
    assert rest_resumed == rest_original
    for sampler, rest in ((original, rest_original), (resumed, rest_resumed)):
        ids = torch.tensor(rest)
        sampler.update(ids, skewed_loss(ids))
    later_original = run_rest(original, epochs - 3)
    later_resumed = run_rest(resumed, epochs - 3)
    assert later_original == later_resumed
    assert original.history() == resumed.history()
    np.testing.assert_array_equal(original.scores(), resumed.scores())


def test_resume_with_consumed_position_from_a_read_ahead_loader():
    n = 500
    s = winnow.Sampler(n, 3, seed=1)
    it = iter(s)
    handed_out = [next(it) for _ in range(300)]  # a loader read ahead of training
    state = s.state_dict(consumed=200)
    with pytest.raises(ValueError, match="only 300 ids"):
        s.state_dict(consumed=301)
    resumed = winnow.Sampler(n, 3)
    resumed.load_state_dict(state)
    assert list(resumed)[:100] == handed_out[200:]


def test_state_dict_checks():
    s = winnow.Sampler(100, 2)
    with pytest.raises(ValueError, match="100 samples"):
        winnow.Sampler(50, 2).load_state_dict(s.state_dict())
    with pytest.raises(ValueError, match="not a winnow.Sampler"):
        s.load_state_dict({"pruner": b""})
    bad = s.state_dict()
    bad["pruner"] = bad["pruner"][:-3]
    with pytest.raises(winnow.Error):
        s.load_state_dict(bad)


def test_torch_save_round_trip(tmp_path):
    s = winnow.Sampler(300, 4, seed=2)
    train_epoch(s)
    torch.save({"sampler": s.state_dict()}, tmp_path / "ckpt.pt")
    t = winnow.Sampler(300, 4)
    t.load_state_dict(torch.load(tmp_path / "ckpt.pt")["sampler"])
    assert list(t) == list(s)


def test_pickle_and_copy_of_sampler():
    s = winnow.Sampler(400, 5, seed=8)
    train_epoch(s)
    it = iter(s)
    head = [next(it) for _ in range(50)]
    clone = pickle.loads(pickle.dumps(s))
    deep = copy.deepcopy(s)
    assert clone.policy_spec == s.policy_spec and clone.history() == s.history()
    rest = list(it)
    assert list(clone) == rest and list(deep) == rest
    assert len(head) + len(rest) == s.history()[-1]["forward_samples"]


def test_pickle_and_copy_of_indexed_dataset():
    ds = winnow.IndexedDataset(SquareDataset(10))
    for clone in (pickle.loads(pickle.dumps(ds)), copy.deepcopy(ds), copy.copy(ds)):
        index, (x, y) = clone[3]
        assert index == 3 and x.tolist() == [3.0, 9.0] and y == 3
        assert len(clone) == 10
    keyed = pickle.loads(pickle.dumps(winnow.IndexedDataset(DictDataset(5), key="id")))
    assert keyed[4]["id"] == 4 and keyed[4]["y"] == 1
    with pytest.raises(TypeError, match="not a dict"):
        winnow.IndexedDataset(SquareDataset(3), key="id")[0]
    with pytest.raises(KeyError, match="already has a field"):
        winnow.IndexedDataset(DictDataset(3), key="x")[0]
    # nothing is forwarded implicitly: no recursion on half-built objects
    blank = winnow.IndexedDataset.__new__(winnow.IndexedDataset)
    with pytest.raises(AttributeError):
        blank.dataset


def _u64(data, at):
    return int.from_bytes(data[at:at + 8], "little")


def _put_u64(data, at, value):
    data[at:at + 8] = value.to_bytes(8, "little")


def test_damaged_bytes_raise_winnow_error_of_kind_corrupt():
    s = winnow.Sampler(300, 5, seed=1)
    train_epoch(s)
    len(s)  # plans the next epoch
    good = s.pruner.to_bytes()
    # Layout (pruner_io.cpp): num_samples at 8, the policy spec's length at 69 (68
    # before version 3), then the spec and 43 bytes of position before the plan ids' length.
    policy_at = 69 if int.from_bytes(good[4:8], "little") >= 3 else 68
    ids_at = policy_at + 8 + _u64(good, policy_at) + 43
    assert _u64(good, ids_at) == s.pruner.plan_size()
    cases = {}
    for length in (s.pruner.plan_size() + 1000, 2 ** 31, 2 ** 55):
        edited = bytearray(good)
        _put_u64(edited, 8, 2 ** 40)
        _put_u64(edited, ids_at, length)
        cases[f"lengths {length}"] = bytes(edited)
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x40
    cases["flipped byte"] = bytes(flipped)
    cases["truncated"] = good[:-3]
    cases["empty"] = b""
    for name, data in cases.items():
        with pytest.raises(winnow.Error, match="'edited'") as caught:  # never MemoryError
            winnow.DynamicPruner.from_bytes(data, "edited")
        assert caught.value.kind == "corrupt", name
    with pytest.raises(winnow.Error, match="checksum"):
        s.load_state_dict({**s.state_dict(), "pruner": cases["flipped byte"]})


def test_save_into_a_missing_folder_is_an_io_error(tmp_path):
    s = winnow.Sampler(50, 2)
    path = tmp_path / "missing" / "state.wnpr"
    with pytest.raises(winnow.Error, match=re.escape(str(path))) as caught:
        s.pruner.save(str(path))
    assert caught.value.kind == "io"
    assert not (tmp_path / "missing").exists()
