"""Helpers for the lesson notebooks that must work on the website, in Jupyter and in Colab alike.

The book quotes numbers and figures computed by the notebooks with myst-nb's ``glue``: every number in the
prose comes from a cell. myst-nb is part of the course environment but not of Colab's, so lessons import
``glue`` from here: with myst-nb it is myst-nb's; without it, a figure is simply shown in the cell (so that a
Colab reader still sees it) and a value is left to the cell's own printed output. Glue numbers (and figures)
only, never words: a sentence of the prose is the same in every run and every language, the numbers in it are
this run's.

The prose also makes claims about trained models ("beam search gets the sentence right", "input feeding lowers
the AER"). They hold for the book's runs on the course's CPU and pinned torch, and ``claim`` checks each one:
where the book is built and tested (``ATTNLIB_STRICT_CLAIMS=1``: ``tools/test.sh`` and
``tools/execute_notebooks.py`` set it) a false claim stops the notebook, because the text would be wrong;
anywhere else (Colab, a GPU, another torch, other seeds) a false claim prints a note naming this run's torch
and seeds, and the lesson goes on. The course's own stand-in for a learner's machine (tests/colab) fails on
any note: a claim must hold for any seeds, not only the book's.

A claim that ranks trained variants ("dot aligns better than general") goes through ``claim_ranked``, which
applies the course's one rule (:mod:`attnlib.ranking`): A ranks above B only when A's worst seed beats B's
best seed, with enough seeds for the number of pairs the table ranks, and still does on resamples of the test
set; ``claim_tied`` backs a sentence saying variants cannot be told apart here; ``rank_table`` judges every
pair of a table. ``seed_table`` and ``mean_sd_range`` show the per-seed numbers in an evidence cell;
``all_claims_held`` says whether every claim of this run held, for a closing sentence that says so.
"""

from __future__ import annotations

import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from numbers import Real
from typing import Any

import torch

from attnlib.ranking import TestScores, rank_table, verdict

__all__ = [
    "TestScores",
    "all_claims_held",
    "claim",
    "claim_ranked",
    "claim_tied",
    "glue",
    "mean_sd_range",
    "rank_table",
    "ranked_above",
    "seed_spread",
    "seed_table",
    "sig",
]

STRICT_CLAIMS = "ATTNLIB_STRICT_CLAIMS"
_failed: list[str] = []  # the claims of this run (this kernel) that did not hold
# A glued text is language-neutral: digits, signs, separators and brackets, never a letter (the exponent of a
# float's repr aside). The Korean edition reuses the English outputs: a glued word would stay English there.
_NEUTRAL_TEXT = re.compile(r"[-+0-9.,;:%()\[\]/×−–\s]*|[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+")

# myst-nb's glue, looked up on the first call (myst-nb and matplotlib are not needed to `import attnlib`);
# None where myst-nb is not installed.
_NOT_LOOKED_UP = object()
_myst_glue: Any = _NOT_LOOKED_UP


def _book_glue():
    global _myst_glue
    if _myst_glue is _NOT_LOOKED_UP:
        try:
            from myst_nb import glue as _myst_glue
        except ImportError:  # Colab, or a plain Jupyter without the book's tools
            _myst_glue = None
    return _myst_glue


def _check_gluable(name: str, value: Any) -> None:
    """A number, a tensor of one number, a text of numbers only, or a matplotlib figure."""
    if isinstance(value, bool):
        raise TypeError(f"glue {name!r}: got a bool; glue numbers only (say the verdict with a claim)")
    if isinstance(value, (Real, torch.Tensor)):
        if isinstance(value, torch.Tensor) and value.numel() != 1:
            raise TypeError(f"glue {name!r}: got a tensor of shape {tuple(value.shape)}; glue one number")
        if not math.isfinite(float(value)):
            raise ValueError(f"glue {name!r}: got {float(value)}; a number in the prose must be finite")
        return
    if isinstance(value, str):
        if not _NEUTRAL_TEXT.fullmatch(value):
            raise ValueError(
                f"glue {name!r}: got the text {value!r}; glue numbers only, never words or sentences (a "
                "sentence about this run's output is printed by the cell; the prose says what holds on every "
                "seed)"
            )
        return
    if type(value).__name__ == "Figure":  # matplotlib, imported only where a figure is drawn
        return
    raise TypeError(
        f"glue {name!r}: got a {type(value).__name__}; glue a number, a text of numbers or a figure"
    )


class _HighDensity:
    """A figure as the book stores it: a PNG with ``attnlib.plotting.DENSITY`` times the pixels, and the width
    to show it at (in the output's metadata, which myst-nb and Jupyter honour; no height, which would keep a
    figure that a phone narrows at its full height)."""

    def __init__(self, figure):
        self.figure = figure

    def __repr__(self) -> str:  # the figure's own text ("<Figure size 700x400 with 1 Axes>"), not an address
        return repr(self.figure)

    def _repr_png_(self):
        from attnlib.plotting import png

        data, width, _ = png(self.figure, tight=True)
        return data, {"width": width}


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` (a number, a text of numbers or a figure) under ``name`` for the book (myst-nb); in
    Colab show figures instead."""
    _check_gluable(name, value)
    if isinstance(value, torch.Tensor):
        value = value.item()
    book_glue = _book_glue()
    if book_glue is not None:
        book_glue(name, _HighDensity(value) if type(value).__name__ == "Figure" else value, display=display)
        return
    from matplotlib.figure import Figure

    if isinstance(value, Figure):
        from IPython.display import display as show

        show(value)


def sig(x: float, digits: int = 4) -> float:
    """``x`` rounded to ``digits`` significant digits, for a number the prose quotes (glue it rounded)."""
    return float(f"{float(x):.{digits}g}")


def claim(holds: bool, text: str) -> None:
    """Check a claim of the prose about this run's results (returns nothing: a cell that ends with a claim
    shows no output).

    If the claim is false: raises AssertionError when ``ATTNLIB_STRICT_CLAIMS=1`` (the book's builds and
    tests); otherwise prints a note saying which sentence of the text this run does not bear out.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError(f"text must say what the prose claims, got {text!r}")
    if bool(holds):
        return
    _failed.append(text)
    if os.environ.get(STRICT_CLAIMS) == "1":
        raise AssertionError(f"the text claims that {text}, but this run does not bear it out")
    from attnlib.seeds import seed_base

    print(
        f"Note: the text claims that {text}, but this run does not bear it out. This run uses torch "
        f"{torch.__version__} and seeds counted from {seed_base()}; the book's text was checked with the "
        "torch pinned in requirements-course.txt on a 2-core CPU, seeds from 0. Read this run's numbers "
        "above rather than the sentence, and please report it: the course means its claims to hold on any "
        "machine."
    )


def seed_spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, min, max) of one variant's results over its seeds."""
    values = [float(v) for v in values]
    if not values:
        raise ValueError("values is empty: give one result per seed")
    return sum(values) / len(values), min(values), max(values)


def mean_sd_range(values: Sequence[float], digits: int = 3) -> str:
    """'mean ± sd [worst, best]' of one variant's results over its seeds (sd: the sample deviation)."""
    values = [float(v) for v in values]
    mean, low, high = seed_spread(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.{digits}f} ± {sd:.{digits}f} [{low:.{digits}f}, {high:.{digits}f}]"


def seed_table(results: Mapping[str, Sequence], seeds: Sequence[int] | None = None, digits: int = 3):
    """The per-seed numbers of an evidence cell: one row per variant, one column per seed, then
    'mean ± sd [worst, best]' (a pandas DataFrame; ``TestScores`` are shown by their value)."""
    import pandas as pd

    rows = {}
    for name, values in results.items():
        values = [float(v) for v in values]
        labels = list(seeds) if seeds is not None else list(range(len(values)))
        if len(labels) != len(values):
            raise ValueError(f"{name!r} has {len(values)} results but seeds names {len(labels)}")
        row = {f"seed {s}": round(v, digits) for s, v in zip(labels, values, strict=True)}
        row["mean ± sd [worst, best]"] = mean_sd_range(values, digits)
        rows[name] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def ranked_above(a: Sequence, b: Sequence, higher_is_better: bool = True, pairs: int = 1) -> bool:
    """The course's rule (:mod:`attnlib.ranking`): does A rank above B? Per-seed floats or ``TestScores``."""
    return verdict(a, b, higher_is_better, pairs, ("a", "b")).ranked


def claim_ranked(
    results: Mapping[str, Sequence],
    order: Sequence[str],
    text: str,
    higher_is_better: bool = True,
    pairs: int | None = None,
) -> None:
    """Claim that the variants in ``order`` rank best first, each above the next by the course's rule.

    ``results`` maps a variant's name to its per-seed results: ``TestScores`` for a measure on a test set, or
    floats for one without a test sample. ``pairs`` is the number of pairs the table or section this claim
    belongs to ranks (default: the ``len(order) - 1`` neighbours claimed here).
    """
    _known(results, order, "order")
    if len(order) < 2:
        raise ValueError(f"order must name at least two variants to rank, got {list(order)}")
    pairs = len(order) - 1 if pairs is None else pairs
    neighbours = zip(order[:-1], order[1:], strict=True)
    claim(
        all(verdict(results[a], results[b], higher_is_better, pairs, (a, b)).ranked for a, b in neighbours),
        text,
    )


def claim_tied(
    results: Mapping[str, Sequence], names: Sequence[str], text: str, pairs: int | None = None
) -> None:
    """Claim that no variant in ``names`` ranks above another by the course's rule (they cannot be told apart
    here). The design must be able to rank (enough seeds for the family), or the tie would say nothing."""
    _known(results, names, "names")
    if len(names) < 2:
        raise ValueError(f"names must list at least two variants, got {list(names)}")
    pairs = math.comb(len(names), 2) if pairs is None else pairs
    apart = [
        verdict(results[a], results[b], True, pairs, (a, b)).ranked
        or verdict(results[b], results[a], True, pairs, (b, a)).ranked
        for i, a in enumerate(names)
        for b in names[i + 1 :]
    ]
    claim(not any(apart), text)


def all_claims_held() -> bool:
    """True when every claim checked so far in this run held (for a closing "every claim above holds")."""
    return not _failed


def _known(results: Mapping, names: Sequence[str], argument: str) -> None:
    missing = [name for name in names if name not in results]
    if missing:
        raise ValueError(
            f"{argument} names {missing}, which results does not have (it has {sorted(results)})"
        )
