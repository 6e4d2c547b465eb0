"""Chapter 9: the like-for-like comparison on the test set (attnlib.transformer_vs_rnn).

Per seed, for each model and size at the learning rate the stored sweep chose (ch09_sweep): the
per-sentence BLEU statistics of greedy decoding and the per-sentence AER counts of the attention (the RNN's;
the Transformer's first and last layer, mean of heads), the AER of every single head on the validation and
test sets, and the training loss curve. And chapter 8's RNN trained as chapter 8 trains it (400 steps at a
learning rate of 0.005, no warm-up), scored the same way, to set the two chapters' numbers side by side; and
both models at the half size with three times the budget (900 steps, warm-up 90), to tell learning speed
from what a model of that size can reach.
"""

from attnlib import stored
from attnlib import transformer_vs_rnn as tvr

DESCRIPTION = (
    "Chapter 9's like-for-like comparison: test BLEU and AER per sentence, AER per head, and the loss curve "
    "of the Transformer and the RNN with attention at two sizes, each at the learning rate chosen by "
    "ch09_sweep"
)
SEEDS = [0, 1, 2, 3, 4]


def _items(scores) -> list[list[int]]:
    return [[int(x) for x in row] for row in scores.items]


def run(seed: int) -> dict:
    chosen = tvr.chosen_rates(stored.load("ch09_sweep"))
    data = tvr.corpus()
    result = {}
    for size in tvr.SIZES:
        for kind in tvr.KINDS:
            lr = chosen[kind, size]
            model, history = tvr.train_run(kind, size, lr, seed)
            one = {
                "learning rate": lr,
                "step": history.step,
                "training loss": history.train_loss,
                "test BLEU items": _items(tvr.bleu_scores(model, data.test)),
                "test AER items": _items(tvr.aer_scores(model, data.test)),
            }
            if kind == tvr.TRANSFORMER:
                layers, heads = model.config.n_layers, model.config.n_heads
                one["first layer test AER items"] = _items(tvr.aer_scores(model, data.test, layer=0))
                for split, batches in (("valid", data.valid), ("test", data.test)):
                    one[f"{split} AER per head"] = [
                        [float(tvr.aer_scores(model, batches, layer, head)) for head in range(heads)]
                        for layer in range(layers)
                    ]
            result[f"{kind}, {size}"] = one
    model, _ = tvr.train_run(tvr.RNN, "chapter 8", seed=seed, **tvr.CHAPTER_8_SCHEDULE)
    result["RNN + Luong attention, chapter 8's schedule"] = {
        "test BLEU items": _items(tvr.bleu_scores(model, data.test)),
        "test AER items": _items(tvr.aer_scores(model, data.test)),
    }
    for kind in tvr.KINDS:
        steps, warmup = 3 * tvr.STEPS, 3 * tvr.WARMUP
        model, _ = tvr.train_run(kind, "half", chosen[kind, "half"], seed, steps=steps, warmup=warmup)
        result[f"{kind}, half, 3 x budget"] = {
            "test BLEU items": _items(tvr.bleu_scores(model, data.test)),
            "test AER items": _items(tvr.aer_scores(model, data.test)),
        }
    return result
