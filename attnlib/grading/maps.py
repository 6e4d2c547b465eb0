"""Properties of attention maps that the exercise checks read answers off (issue 27 item 4).

Re-exported by ``attnlib.grading.checks``, where the tests reach them (``checks.informative_weights``).
"""

from __future__ import annotations

from typing import Any

import torch

from attnlib.grading.compare import near
from attnlib.grading.messages import say


def informative_weights(weights: Any, what: str, mask: Any = None) -> torch.Tensor:
    """Attention maps that an answer may be read off (issue 27 item 4): ``weights`` (..., S) are
    distributions, nonnegative and summing to 1 in every row with a real position (``mask`` (..., S), True =
    real; rows with none are not read; weight on padding is a slip, not a degenerate map), and they are not
    degenerate: not uniform over the real positions in every row, and not all on one and the same position in
    every row. (A map whose rows are all alike but spread, as a score without its tanh gives, is a slip of the
    earlier answer, not a degenerate one: it passes.) A later answer agreeing with the learner's own earlier
    function earns its credit only from maps that pass this; otherwise it is graded against the reference.
    Returns the weights as a float64 tensor."""
    w = torch.as_tensor(weights).detach().to(torch.float64)
    real = torch.ones_like(w, dtype=torch.bool) if mask is None else torch.as_tensor(mask).to(torch.bool)
    rows, real = w.reshape(-1, w.shape[-1]), real.expand_as(w).reshape(-1, w.shape[-1])
    used = real.any(-1)
    if not bool(used.any()) or not bool(torch.isfinite(rows).all()) or bool((rows < 0).any()):
        raise AssertionError(say("{what}: the weights are not finite nonnegative numbers", what=what))
    if not near(rows[used].sum(-1), torch.ones(int(used.sum()), dtype=torch.float64), atol=1e-4, rtol=0):
        raise AssertionError(say("{what}: the weights of a row do not sum to 1", what=what))
    rows, real = rows[used], real[used]
    uniform = real / real.sum(-1, keepdim=True)
    if near(rows, uniform, atol=1e-4, rtol=0):
        raise AssertionError(
            say("{what}: the weights are uniform over the real positions in every row", what=what)
        )
    one_place = bool((rows.argmax(-1) == rows[0].argmax()).all()) and bool((rows.amax(-1) > 0.99).all())
    if rows.shape[-1] > 1 and one_place:
        raise AssertionError(
            say("{what}: every row puts all its weight on one and the same position", what=what)
        )
    return w


def order_keeping_ties(tops: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A random order of the n rows of ``tops`` (n, m), bool, in which rows that are both True in one column
    keep their order. Shuffling a map's rows in this order, with ``tops`` marking each column's largest
    weights, changes no argmax over the rows: an argmax breaks a tie by order, and tied rows keep theirs."""
    n = tops.shape[0]
    ties = (tops.to(torch.int64) @ tops.T.to(torch.int64)) > 0  # (n, n): rows tied in some column
    waiting = torch.triu(ties, 1).sum(0).tolist()  # row j waits for the rows before it that it ties with
    ready, order = [j for j in range(n) if waiting[j] == 0], []
    while ready:
        i = ready.pop(int(torch.randint(len(ready), (1,), generator=generator)))
        order.append(i)
        for j in range(i + 1, n):
            if ties[i, j]:
                waiting[j] -= 1
                if waiting[j] == 0:
                    ready.append(j)
    return torch.tensor(order, dtype=torch.long)
