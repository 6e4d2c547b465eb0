"""The recall task of chapter 1: say which symbol came first, after ``k`` distractors.

A latch problem (Bengio et al. 1994): all the information is in x_1, and the answer is read after the last
token, so the gradient that teaches it must travel k steps back through the recurrence.
"""

from __future__ import annotations

import torch

from attnlib import _checks


def recall_task(
    n: int, k: int, n_symbols: int = 8, n_distractors: int = 4, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """Recall the first symbol after ``k`` distractors: ``tokens (n, k+1)`` and ``labels (n,)``.

    tokens[:, 0] is a symbol in [0, n_symbols) and is the label; tokens[:, 1:] are distractors drawn from
    [n_symbols, n_symbols + n_distractors). Chance accuracy is 1 / n_symbols.
    """
    n, k = _checks.positive_int(n, "n"), _checks.positive_int(k, "k", allow_zero=True)
    if _checks.positive_int(n_symbols, "n_symbols") < 2:
        raise ValueError(f"n_symbols must be >= 2, got {n_symbols}")
    n_distractors = _checks.positive_int(n_distractors, "n_distractors")
    g = torch.Generator().manual_seed(seed)
    labels = torch.randint(n_symbols, (n,), generator=g)
    distractors = torch.randint(n_symbols, n_symbols + n_distractors, (n, k), generator=g)
    return torch.cat([labels[:, None], distractors], 1), labels
