"""Chapter 6's control for its reading of the scaled dot-product score: two more model sizes.

In the chapter's model (GRU states of d = 64 entries, each in (-1, 1)) the scaled score q^T k / sqrt(d)
learns to reverse far fewer sequences in 150 steps than the plain dot score, with a much flatter softmax. A
ranking made at one model size may be a fact about that size: this recipe trains dot and scaled dot at d = 32,
64 and 128 (encoder GRUs of 16, 32 and 64 units per direction, the decoder matching), with the chapter's data,
learning rate and budget, and keeps each run's exact matches (per test sequence) and score spread, so that
the chapter can say whether dot still beats scaled dot, and how the two spreads compare, at every size.
"""

import sys
from pathlib import Path

import torch

from attnlib.seq2seq.decoding import decode_batches
from attnlib.train import train

sys.path.insert(0, str(Path(__file__).parent))
from _reversal import reversal_data, zoo_model  # noqa: E402

DESCRIPTION = "chapter 6: dot and scaled_dot at d = 32, 64, 128 (150 steps, as in the chapter)"
SEEDS = list(range(6))
STEPS = 150
SIZES = (16, 32, 64)  # GRU units per direction: d = 2 x units


def spread(model, batches) -> float:
    """Mean over test steps of max_s e - min_s e = log(max alpha / min alpha), real positions only."""
    values = []
    model.eval()
    with torch.no_grad():
        for batch in batches:
            _, weights = model(batch)
            for w, pair in zip(weights, batch.examples, strict=True):
                w = w[: len(pair.tgt), : len(pair.src)]
                values += (w.max(-1).values.log() - w.min(-1).values.log()).tolist()
    return sum(values) / len(values)


def run(seed: int) -> dict:
    torch.set_num_threads(1)
    task, batches, test, references = reversal_data()
    out = {}
    for units in SIZES:
        for name in ("dot", "scaled_dot"):
            torch.manual_seed(seed)
            model = zoo_model(task, name, units)
            train(model, batches, steps=STEPS, lr=1e-2, seed=seed, progress=False)
            decoded = decode_batches(model, test)
            out[f"{name} d={2 * units}"] = {
                "exact": [int(list(h) == list(r)) for h, r in zip(decoded.tokens, references, strict=True)],
                "spread": spread(model, test),
            }
    return out
