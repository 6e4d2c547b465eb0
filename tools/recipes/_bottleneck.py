"""Chapter 2's task and run for its recipes: reversing digits, trained and measured as in the chapter."""

import torch

from attnlib import probe
from attnlib.data import make_batches, sequence_task
from attnlib.seq2seq import build_model
from attnlib.train import train

LR = 1e-2
PROBE_LENGTHS = [5, 10, 15, 20, 25, 30]


def reversal_data():
    """(task, training batches, validation batches), exactly as chapter 2 makes them."""
    task = sequence_task("reverse", n=16_000, min_len=5, max_len=30, seed=0, fractions=(0.75, 0.05, 0.2))
    vocab = task.src_vocab
    train_batches = make_batches(task.train, vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    valid_batches = make_batches(task.valid, vocab, task.tgt_vocab, 400)
    return task, train_batches, valid_batches


def train_and_measure(data, kind: str, seed: int, hidden: int, steps: int, eval_every: int, **options):
    """Chapter 2's model ``kind`` of ``hidden`` units trained from ``seed`` for ``steps`` steps (``options``:
    ``restore_best``, ``step_lengths``, ``probe_lengths``, and the model's own, e.g. ``score``); returns
    (its History, ``probe.length_measures`` of it, ranked at every probe length)."""
    task, train_batches, valid_batches = data
    restore_best = options.pop("restore_best", False)
    measures = {key: options.pop(key, []) for key in ("step_lengths", "probe_lengths")}
    torch.manual_seed(seed)
    model = build_model(kind, task.src_vocab, task.tgt_vocab, emb=32, hidden=hidden, **options)
    history = train(
        model,
        train_batches,
        valid_batches,
        steps=steps,
        lr=LR,
        seed=seed,
        eval_every=eval_every,
        restore_best=restore_best,
        progress=False,
    )
    return history, probe.length_measures(
        model, task.test, task.src_vocab, task.tgt_vocab, ranked_lengths=PROBE_LENGTHS, **measures
    )
