#!/usr/bin/env python3
"""winnow's dynamic data pruning inside a Hugging Face Trainer (accelerate underneath).

UNTESTED HERE: transformers and accelerate are not packaged in Debian bookworm,
and winnow installs nothing from PyPI, so this recipe has never been run on the
project's machines. It is written against the documented public API of
transformers 4.4x-5.x (Trainer.get_train_dataloader, Trainer._get_train_sampler,
Trainer.compute_loss(model, inputs, return_outputs, num_items_in_batch),
TrainingArguments.accelerator_config) and accelerate's prepare_data_loader. Run
without transformers it says so and exits with status 2.

    pip install transformers accelerate        # elsewhere; not on this machine
    PYTHONPATH=build/python python3 examples/python/hf_trainer_recipe.py
    PYTHONPATH=build/python torchrun --nproc_per_node=2 examples/python/hf_trainer_recipe.py

What it changes in the Trainer, and why that is enough:

1. The sampler. `_get_train_sampler` returns a winnow.Sampler, so the Trainer's
   own get_train_dataloader builds the DataLoader and hands it to
   `accelerator.prepare`. With several processes accelerate wraps the batch
   sampler in a BatchSamplerShard: process i takes batches i, i+W, i+2W, ... of
   what the sampler yields (split_batches=False, the default). So the sampler
   is built with `shard=False`: every process iterates the WHOLE plan (the
   same plan everywhere: same seed, same scores) and accelerate shards the
   batches. With even_batches=True (the default) accelerate tops up the last
   round of batches from the start of the plan, so every process makes the
   same number of steps, which the per-step score sync needs.
2. The loss. `compute_loss` computes the per-sample loss and returns
   `sampler.update(ids, per_sample)`: the weighted mean of this process's
   batch; update() also all-gathers every process's ids (int64) and losses
   (float32) so all score tables stay identical. Evaluation (model in eval
   mode) gets the plain mean and records nothing.
3. The ids. winnow.IndexedDataset(key="id") adds each sample's index to its
   dict; `remove_unused_columns=False` keeps the Trainer from dropping it
   because the model's forward() has no `id` argument.

Why accelerate's read-ahead loader is safe here: DataLoaderShard fetches the
next batch before the current one is trained (to know which batch is last),
and the Trainer may call len() before iterating. winnow builds an epoch's plan
before the epoch starts, so len() is already this epoch's, and the ids travel
inside each batch, so reading ahead never mixes up which weights or scores
belong to which sample. Required settings: dispatch_batches=False (every
process iterates its own sampler; with dispatching only process 0 would, and
the other processes' plans would fall behind) and even_batches=True.

Not covered: resuming a Trainer checkpoint mid-run (save
`sampler.state_dict()` next to each checkpoint and load it before train());
the Trainer sizes its LR schedule from the first (full) epoch times the number
of epochs, so with pruning the schedule stops before its end, as it does with
the reference InfoBatch code; gradient accumulation works (the loss is a mean
per micro-batch and `model_accepts_loss_kwargs = False` keeps the Trainer's
usual division by the accumulation steps).
"""
import argparse
import os
import sys

import torch
import torch.nn.functional as F

import winnow

try:
    import transformers
    from transformers import Trainer, TrainingArguments
except ImportError:
    sys.stderr.write(
        "hf_trainer_recipe.py needs the Hugging Face `transformers` package (and `accelerate`), "
        "which is not installed: neither is packaged in Debian bookworm. Install them with pip "
        "elsewhere to run this recipe; it is untested on winnow's own machines. The plain "
        "PyTorch example, examples/python/train_fashion_mnist.py, runs here.\n")
    sys.exit(2)


class PrunedTrainer(Trainer):
    """A Trainer whose training data is served, and whose loss is weighted, by winnow."""

    def __init__(self, *args, winnow_sampler, **kwargs):
        super().__init__(*args, **kwargs)
        self.winnow_sampler = winnow_sampler
        # compute_loss returns a per-batch mean: let the Trainer divide by the
        # accumulation steps as usual instead of expecting a token-count sum.
        self.model_accepts_loss_kwargs = False

    def _get_train_sampler(self, *args, **kwargs):
        # (train_dataset=None) in recent transformers, no argument in older ones.
        return self.winnow_sampler

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        inputs = dict(inputs)
        ids = inputs.pop("id")
        labels = inputs.pop("labels")
        outputs = model(**inputs)
        logits = outputs["logits"] if isinstance(outputs, dict) else outputs.logits
        per_sample = per_sample_loss(logits, labels)
        if model.training:
            loss = self.winnow_sampler.update(ids, per_sample)  # collective when distributed
        else:
            loss = per_sample.mean()
        return (loss, outputs) if return_outputs else loss


def per_sample_loss(logits, labels):
    """One loss per sample: cross-entropy for classification ([B, C] logits), the
    mean over each sequence's labelled tokens for causal LMs ([B, T, V])."""
    if logits.dim() == 2:
        return F.cross_entropy(logits.float(), labels, reduction="none")
    shifted, targets = logits[:, :-1].float(), labels[:, 1:]
    token = F.cross_entropy(shifted.transpose(1, 2), targets, reduction="none", ignore_index=-100)
    counted = (targets != -100).sum(1).clamp(min=1)
    return token.sum(1) / counted


class PixelsAndLabels(torch.utils.data.Dataset):
    """Fashion-MNIST as the dicts a Trainer expects."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return {"pixel_values": self.x[i], "labels": self.y[i]}


class Mlp(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(),
                                       torch.nn.Linear(256, 10))

    def forward(self, pixel_values):
        return {"logits": self.net(pixel_values)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=128, help="per process")
    parser.add_argument("--output-dir", default="hf_trainer_recipe_out")
    args = parser.parse_args()

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from train_fashion_mnist import DEFAULT_DATA, load_split

    train_x, train_y = load_split(DEFAULT_DATA, "train")
    dataset = winnow.IndexedDataset(PixelsAndLabels(train_x, train_y), key="id")
    # The sampler must be built after torch.distributed is initialized, so that
    # it finds the process group and synchronises scores over it.
    training_args = TrainingArguments(
        output_dir=args.output_dir,
        num_train_epochs=args.epochs,
        per_device_train_batch_size=args.batch_size,
        learning_rate=0.05,
        remove_unused_columns=False,  # keep the "id" field
        accelerator_config={"dispatch_batches": False, "even_batches": True,
                            "split_batches": False},
        report_to=[],
        save_strategy="no",
        logging_steps=100,
    )
    training_args.device  # (a property) initializes torch.distributed under torchrun
    sampler = winnow.Sampler(len(dataset), args.epochs, policy="infobatch", seed=training_args.seed,
                             shard=False)  # accelerate splits the batches across processes
    assert sampler.world_size == training_args.world_size, "build the sampler after the group"
    trainer = PrunedTrainer(model=Mlp(), args=training_args, train_dataset=dataset,
                            winnow_sampler=sampler)
    trainer.train()
    if trainer.is_world_process_zero():
        totals = sampler.totals()
        print(f"transformers {transformers.__version__}: forward samples "
              f"{totals['forward_samples']} of {totals['full_forward_samples']} (saved "
              f"{100.0 * totals['saved_fraction']:.1f}%)")


if __name__ == "__main__":
    main()
