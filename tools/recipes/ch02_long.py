"""Chapter 2, "Learning speed or the bottleneck?": the model without attention trained five times longer.

The chapter's reversal task and training loop, with a budget of 1,500 steps instead of 300 (the cosine decay
of the learning rate stretched to match) and the weights of the best validation loss kept, for the model
without attention at 64 GRU units per direction (the chapter's size) and at 128. Measured per source length
as in the chapter (test scores, linear probes). One seed costs minutes of CPU, more than a chapter may
spend; the chapter compares these runs with its own 300-step runs of both models.
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _bottleneck import PROBE_LENGTHS, reversal_data, train_and_measure  # noqa: E402

DESCRIPTION = __doc__.split("\n\n")[0]
SEEDS = [0, 1, 2, 3, 4]  # as many as the chapter's 300-step comparison
MODELS = {"plain_64": 64, "plain_128": 128}
STEPS, EVAL_EVERY = 1500, 100


def run(seed: int) -> dict:
    data = reversal_data()
    result = {"steps": STEPS, "eval_every": EVAL_EVERY}
    for name, hidden in MODELS.items():
        history, measures = train_and_measure(
            data, "plain", seed, hidden, STEPS, EVAL_EVERY, restore_best=True, probe_lengths=PROBE_LENGTHS
        )
        result[name] = {"valid_loss": history.valid_loss, "best_step": history.best_step, **measures}
    return result
