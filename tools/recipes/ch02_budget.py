"""Chapter 2, "The experiment": both models trained for the fixed budget, measured per source length.

The same run as the chapter's training cell (``train_and_measure``): the reversal task of 5 to 30 digits,
GRU encoder of 64 units per direction, no attention ("plain") and Luong's global "general" attention, 300
Adam steps of 64 pairs at lr 1e-2 with a cosine decay, validation every 50 steps. The chapter trains its first
two seeds live and reads these three from here.
"""

import torch

from attnlib import probe
from attnlib.data import make_batches, sequence_task
from attnlib.seq2seq import build_model
from attnlib.train import train

DESCRIPTION = __doc__.split("\n\n")[0]
SEEDS = [2, 3, 4]  # the chapter trains seeds 0 and 1 live
KINDS = {"plain": {}, "luong": {"score": "general"}}
STEPS, LR, EVAL_EVERY, HIDDEN = 300, 1e-2, 50, 64
PROBE_LENGTHS = [5, 10, 15, 20, 25, 30]


def run(seed: int) -> dict:
    torch.set_num_threads(1)
    task = sequence_task("reverse", n=16_000, min_len=5, max_len=30, seed=0, fractions=(0.75, 0.05, 0.2))
    vocab = task.src_vocab
    train_batches = make_batches(task.train, vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    valid_batches = make_batches(task.valid, vocab, task.tgt_vocab, 400)
    result = {}
    for kind, options in KINDS.items():
        torch.manual_seed(seed)
        model = build_model(kind, vocab, task.tgt_vocab, emb=32, hidden=HIDDEN, **options)
        history = train(
            model,
            train_batches,
            valid_batches,
            steps=STEPS,
            lr=LR,
            seed=seed,
            eval_every=EVAL_EVERY,
            progress=False,
        )
        result[kind] = {
            "valid_loss": history.valid_loss,
            **probe.length_measures(
                model,
                task.test,
                vocab,
                task.tgt_vocab,
                ranked_lengths=PROBE_LENGTHS,
                step_lengths=PROBE_LENGTHS,
                probe_lengths=PROBE_LENGTHS if kind == "plain" else [30],
            ),
        }
    return result
