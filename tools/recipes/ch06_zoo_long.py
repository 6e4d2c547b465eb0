"""Chapter 6's control for its training budget: four of the zoo's scores trained for eight times the chapter's
150 steps (the same model, data, learning rate and cosine schedule, stretched over the longer budget).

The chapter ranks how fast each score learns to reverse digit sequences in 150 steps, with every run still
learning. Dot learns fast; scaled dot, cosine with its default sharpness and location-based barely start. This
recipe asks whether the three catch up when the budget is longer, and how far cosine's learned sharpness
beta = exp(log beta) moves when the sum of the learning rates is eight times larger.
"""

import sys
from pathlib import Path

import torch

from attnlib.seq2seq.decoding import decode_batches
from attnlib.train import train

sys.path.insert(0, str(Path(__file__).parent))
from _reversal import reversal_data, zoo_model  # noqa: E402

DESCRIPTION = "chapter 6: dot, scaled_dot, cosine and location trained 1,200 steps (8x the chapter's budget)"
SEEDS = list(range(6))
STEPS = 1200
VARIANTS = ("dot", "scaled_dot", "cosine", "location")


def run(seed: int) -> dict:
    torch.set_num_threads(1)
    task, batches, test, references = reversal_data()
    out = {"steps": STEPS}
    for name in VARIANTS:
        torch.manual_seed(seed)
        model = zoo_model(task, name)
        history = train(model, batches, steps=STEPS, lr=1e-2, seed=seed, progress=False)
        decoded = decode_batches(model, test)
        out[name] = {
            "exact": [int(list(h) == list(r)) for h, r in zip(decoded.tokens, references, strict=True)],
            "loss": history.train_loss[-1],
            "log_beta": model.decoder.score.log_beta.item() if name == "cosine" else None,
        }
    return out
