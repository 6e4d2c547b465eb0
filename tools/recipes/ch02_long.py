"""Chapter 2, "Learning speed or the bottleneck?": the model without attention trained five times longer.

The chapter's reversal task and training loop, with a budget of 1,500 steps instead of 300 (the cosine decay
of the learning rate stretched to match) and the weights of the best validation loss kept, for the model
without attention at 64 GRU units per direction (the chapter's size) and at 128. Measured per source length
as in the chapter (test scores, linear probes). One seed costs minutes of CPU, more than a chapter may
spend; the chapter compares these runs with its own 300-step runs of both models.
"""

import torch

from attnlib import probe
from attnlib.data import make_batches, sequence_task
from attnlib.seq2seq import build_model
from attnlib.train import train

DESCRIPTION = __doc__.split("\n\n")[0]
SEEDS = [0, 1, 2, 3, 4]  # as many as the chapter's 300-step comparison
MODELS = {"plain_64": 64, "plain_128": 128}
STEPS, LR, EVAL_EVERY = 1500, 1e-2, 100
PROBE_LENGTHS = [5, 10, 15, 20, 25, 30]


def run(seed: int) -> dict:
    torch.set_num_threads(1)
    task = sequence_task("reverse", n=16_000, min_len=5, max_len=30, seed=0, fractions=(0.75, 0.05, 0.2))
    vocab = task.src_vocab
    train_batches = make_batches(task.train, vocab, task.tgt_vocab, 64, shuffle=True, seed=0, bucket=True)
    valid_batches = make_batches(task.valid, vocab, task.tgt_vocab, 400)
    result = {"steps": STEPS, "eval_every": EVAL_EVERY}
    for name, hidden in MODELS.items():
        torch.manual_seed(seed)
        model = build_model("plain", vocab, task.tgt_vocab, emb=32, hidden=hidden)
        history = train(
            model,
            train_batches,
            valid_batches,
            steps=STEPS,
            lr=LR,
            seed=seed,
            eval_every=EVAL_EVERY,
            restore_best=True,
            progress=False,
        )
        result[name] = {
            "valid_loss": history.valid_loss,
            "best_step": history.best_step,
            **probe.length_measures(
                model,
                task.test,
                vocab,
                task.tgt_vocab,
                ranked_lengths=PROBE_LENGTHS,
                probe_lengths=PROBE_LENGTHS,
            ),
        }
    return result
