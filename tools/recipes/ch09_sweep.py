"""Chapter 9: the learning-rate sweep of the like-for-like comparison (attnlib.transformer_vs_rnn).

Per seed: the validation BLEU (greedy decoding until <eos>) and the final training loss of the Transformer and
of chapter 8's RNN with attention, at both sizes, for every learning rate of the sweep, after the same budget.
The chapter chooses each model's learning rate by its mean validation BLEU over these seeds; the test set is
not looked at (ch09_compare.py scores the chosen ones on it).
"""

from attnlib import transformer_vs_rnn as tvr

DESCRIPTION = (
    "Chapter 9's learning-rate sweep: validation BLEU and final training loss of the Transformer and the RNN "
    "with attention at two sizes, every learning rate of attnlib.transformer_vs_rnn.LEARNING_RATES, "
    "300 steps each"
)
SEEDS = [0, 1, 2]


def run(seed: int) -> dict:
    result = {"learning rates": list(tvr.LEARNING_RATES), "valid BLEU": {}, "final training loss": {}}
    for size in tvr.SIZES:
        for kind in tvr.KINDS:
            key = f"{kind}, {size}"
            result["valid BLEU"][key], result["final training loss"][key] = [], []
            for lr in tvr.LEARNING_RATES:
                model, history = tvr.train_run(kind, size, lr, seed)
                result["valid BLEU"][key].append(float(tvr.bleu_scores(model, tvr.corpus().valid)))
                result["final training loss"][key].append(history.train_loss[-1])
    return result
