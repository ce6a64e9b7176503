"""examples/python/hf_trainer_recipe.py without transformers (not packaged in Debian).

The real Trainer cannot run here; these tests load the recipe against a stand-in
`transformers` module and check winnow's part of it: the loss it returns in
training and evaluation, the per-sample losses, and the sampler it hands over.
"""
import importlib.util
import os
import sys
import types

import numpy as np
import pytest
import torch

import winnow

RECIPE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python",
                      "hf_trainer_recipe.py")


@pytest.fixture()
def recipe(monkeypatch):
    class StandInTrainer:  # only what the recipe's subclass touches
        def __init__(self, *args, **kwargs):
            self.kwargs = kwargs

    stand_in = types.ModuleType("transformers")
    stand_in.Trainer = StandInTrainer
    stand_in.TrainingArguments = object
    stand_in.__version__ = "stand-in"
    monkeypatch.setitem(sys.modules, "transformers", stand_in)
    spec = importlib.util.spec_from_file_location("hf_trainer_recipe", RECIPE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compute_loss_weights_and_records_in_training_only(recipe):
    sampler = winnow.Sampler(64, 4, seed=0)
    trainer = recipe.PrunedTrainer(winnow_sampler=sampler)
    assert trainer._get_train_sampler() is sampler and trainer._get_train_sampler(None) is sampler
    assert trainer.model_accepts_loss_kwargs is False
    model = recipe.Mlp()
    ids = torch.tensor([3, 7, 11, 40])
    inputs = {"pixel_values": torch.randn(4, 784), "labels": torch.tensor([1, 2, 3, 4]),
              "id": ids}
    model.eval()
    before = sampler.scores()
    trainer.compute_loss(model, dict(inputs))
    np.testing.assert_array_equal(sampler.scores(), before)  # evaluation records nothing
    model.train()
    loss, outputs = trainer.compute_loss(model, dict(inputs), return_outputs=True,
                                         num_items_in_batch=4)
    per_sample = torch.nn.functional.cross_entropy(outputs["logits"], inputs["labels"],
                                                   reduction="none")
    assert torch.allclose(loss, (per_sample * torch.from_numpy(sampler.weights(ids))).mean())
    np.testing.assert_allclose(sampler.pruner.scores_of(ids.numpy()), per_sample.detach().numpy())
    loss.backward()
    assert model.net[0].weight.grad is not None


def test_per_sample_loss_of_a_causal_lm(recipe):
    logits = torch.randn(2, 5, 11)
    labels = torch.tensor([[1, 2, 3, -100, -100], [4, 5, 6, 7, 8]])
    got = recipe.per_sample_loss(logits, labels)
    for row in range(2):
        keep = labels[row, 1:] != -100
        expected = torch.nn.functional.cross_entropy(logits[row, :-1][keep], labels[row, 1:][keep])
        assert torch.allclose(got[row], expected)
