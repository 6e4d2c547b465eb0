"""Algorithmic sequence tasks: copy, reverse and sort a sequence of digits.

The smallest tasks on which attention visibly helps. A plain encoder-decoder must squeeze the whole sequence
into one vector and fails as sequences grow; with attention, copy learns a diagonal alignment, reverse the
anti-diagonal, and sort a permutation that depends on the content. Training on short sequences and testing
on longer ones (two calls with different ``min_len``/``max_len``) shows how far each model generalises.

Tokens are the strings "0" … str(vocab_size - 1). Gold alignments (target index t, source index s):

    copy      t <- t
    reverse   t <- S - 1 - t
    sort      t <- every s holding the same value as target t (one link when the values are distinct;
              with repeated digits, any copy of the value is a correct place to look)
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Literal

from attnlib.data.batching import Pair, Task, build_task, split

TaskName = Literal["copy", "reverse", "sort"]


def _copy(x: list[int]) -> tuple[list[int], set[tuple[int, int]]]:
    return list(x), {(t, t) for t in range(len(x))}


def _reverse(x: list[int]) -> tuple[list[int], set[tuple[int, int]]]:
    S = len(x)
    return x[::-1], {(t, S - 1 - t) for t in range(S)}


def _sort(x: list[int]) -> tuple[list[int], set[tuple[int, int]]]:
    y = sorted(x)
    return y, {(t, s) for t, value in enumerate(y) for s, source in enumerate(x) if source == value}


TASKS: dict[str, Callable[[list[int]], tuple[list[int], set[tuple[int, int]]]]] = {
    "copy": _copy,
    "reverse": _reverse,
    "sort": _sort,
}


def make_sequence_task(
    task: TaskName, n: int, min_len: int, max_len: int, seed: int = 0, vocab_size: int = 10
) -> list[Pair]:
    """``n`` random pairs for ``task``, lengths uniform in [min_len, max_len], digits in [0, vocab_size).

    Sorting is numeric (so "10" comes after "9" when vocab_size > 10).
    """
    if task not in TASKS:
        raise ValueError(f"task must be one of {sorted(TASKS)}, got {task!r}")
    if not 1 <= min_len <= max_len:
        raise ValueError(f"need 1 <= min_len <= max_len, got min_len={min_len}, max_len={max_len}")
    if vocab_size < 2:
        raise ValueError(f"vocab_size must be >= 2, got {vocab_size}")
    rng = random.Random(seed)
    pairs = []
    for _ in range(n):
        x = [rng.randrange(vocab_size) for _ in range(rng.randint(min_len, max_len))]
        y, links = TASKS[task](x)
        pairs.append(Pair(src=[str(v) for v in x], tgt=[str(v) for v in y], alignment=frozenset(links)))
    return pairs


def sequence_task(
    task: TaskName,
    n: int = 10_000,
    min_len: int = 3,
    max_len: int = 10,
    seed: int = 0,
    vocab_size: int = 10,
    fractions: tuple[float, float, float] = (0.8, 0.1, 0.1),
) -> Task:
    """Train/valid/test splits (no source sequence in two splits) and vocabularies, ready for batching."""
    pairs = make_sequence_task(task, n, min_len, max_len, seed, vocab_size)
    return build_task(split(pairs, fractions, seed))
