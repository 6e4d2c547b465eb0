"""Chapter 1's recall experiment, the controls that do not fit in the chapter's 90 s: a longer budget and a
larger vanilla RNN.

The chapter trains a vanilla (tanh) RNN and a GRU of 32 units for 200 Adam steps to recall the first of 8
symbols after k distractors. Could the vanilla RNN's failure at k = 20 and 40 be the budget or the size? Per
seed (the seed draws the initial weights, as ``attnlib.seeds.over_seeds`` seeds a run, and the minibatch
order):

- the vanilla RNN at k = 20 trained for the chapter's 200 steps and for 1,000 (five times the budget), so that
  each seed's two budgets can be compared; the vanilla RNN at k = 40 and the GRU at k = 40 for 1,000 steps;
- a vanilla RNN of 128 units (four times the width) at k = 20, trained for the chapter's 200 steps.

The data are the chapter's: training set ``recall_task(2000, k, seed=1)``, test set ``recall_task(500, k,
seed=2)``; each run stores its test accuracy.
"""

from attnlib import rnn
from attnlib.train import seed_everything

DESCRIPTION = (
    "chapter 1, recall the first of 8 symbols after k distractors: test accuracy (500 sequences) of a "
    "vanilla RNN at k = 20 after 200 and 1,000 Adam steps (the chapter trains 200), of a vanilla RNN at "
    "k = 40 and a GRU at k = 40 after 1,000 steps, and of a vanilla RNN of 128 units (the chapter's has 32) "
    "at k = 20 after 200 steps"
)
SEEDS = [0, 1, 2, 3, 4]
N_SYMBOLS, VOCAB_SIZE = 8, 12  # 8 symbols and 4 distractors
RUNS = {  # name: (kind, k, hidden units, steps)
    "rnn, k = 20, 200 steps": ("rnn", 20, 32, 200),
    "rnn, k = 20, 1000 steps": ("rnn", 20, 32, 1000),
    "rnn, k = 40, 1000 steps": ("rnn", 40, 32, 1000),
    "gru, k = 40, 1000 steps": ("gru", 40, 32, 1000),
    "rnn of 128 units, k = 20, 200 steps": ("rnn", 20, 128, 200),
}


def run(seed: int) -> dict:
    results = {}
    for name, (kind, k, hidden, steps) in RUNS.items():
        train_x, train_y = rnn.recall_task(2000, k, n_symbols=N_SYMBOLS, seed=1)
        test_x, test_y = rnn.recall_task(500, k, n_symbols=N_SYMBOLS, seed=2)
        seed_everything(seed)  # each run from the same state, as if it were the only one
        model = rnn.RecallClassifier(kind, VOCAB_SIZE, N_SYMBOLS, hidden=hidden)
        rnn.train_classifier(model, train_x, train_y, steps=steps, seed=seed)
        results[name] = rnn.accuracy(model, test_x, test_y)
    return results
