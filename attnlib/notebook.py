"""Helpers for the lesson notebooks that must work on the website, in Jupyter and in Colab alike.

The book quotes numbers and figures computed by the notebooks with myst-nb's ``glue``: every number in the
prose comes from a cell. myst-nb is part of the course environment but not of Colab's, so lessons import
``glue`` from here: with myst-nb it is myst-nb's; without it, a figure is simply shown in the cell (so that a
Colab reader still sees it) and a value is left to the cell's own printed output.

The prose also makes claims about trained models ("beam search gets the sentence right", "input feeding lowers
the AER"). They hold for the book's runs on the course's CPU and pinned torch, and ``claim`` checks each one:
where the book is built and tested (``ATTNLIB_STRICT_CLAIMS=1``: ``tools/test.sh`` and
``tools/execute_notebooks.py`` set it) a false claim stops the notebook, because the text would be wrong;
anywhere else (Colab, a GPU, another torch) training takes a slightly different path, so a false claim prints
a note and the lesson goes on.

A claim that ranks trained variants ("dot aligns better than general") is a claim about attention only if it
survives a change of seed. ``claim_ranked`` takes every seed's result and applies the course's one rule:
A is ranked above B only when **A's worst seed beats B's best seed** (the ranges across seeds do not
overlap); ``claim_tied`` backs a sentence saying variants cannot be told apart here. ``all_claims_held``
says whether every claim of this run held, for a closing sentence that says so.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

import torch

STRICT_CLAIMS = "ATTNLIB_STRICT_CLAIMS"
MIN_SEEDS = 3  # a ranking of trained variants needs at least this many seeds of each
_failed: list[str] = []  # the claims of this run (this kernel) that did not hold

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


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` for the book (myst-nb); in Colab show figures instead."""
    book_glue = _book_glue()
    if book_glue is not None:
        book_glue(name, value, display=display)
        return
    from matplotlib.figure import Figure

    if isinstance(value, Figure):
        from IPython.display import display as show

        show(value)


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
    print(
        f"Note: the text claims that {text}, but this run does not bear it out. The book was run on a "
        "2-core CPU with the torch version pinned in requirements-course.txt; this run uses torch "
        f"{torch.__version__}. Other hardware or versions train along a slightly different path, so read "
        "this run's numbers above rather than the sentence."
    )


def seed_spread(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, min, max) of one variant's results over its seeds."""
    values = _seed_values(values, "values")
    return sum(values) / len(values), min(values), max(values)


def ranked_above(a: Sequence[float], b: Sequence[float], higher_is_better: bool = True) -> bool:
    """The course's rule: A ranks above B only when A's worst seed beats B's best seed."""
    a, b = _seed_values(a, "a"), _seed_values(b, "b")
    return min(a) > max(b) if higher_is_better else max(a) < min(b)


def claim_ranked(
    results: Mapping[str, Sequence[float]], order: Sequence[str], text: str, higher_is_better: bool = True
) -> None:
    """Claim that the variants in ``order`` rank best first, each above the next by :func:`ranked_above`.

    ``results`` maps a variant's name to its per-seed results (at least ``MIN_SEEDS`` each).
    """
    if len(order) < 2:
        raise ValueError(f"order must name at least two variants to rank, got {list(order)}")
    missing = [name for name in order if name not in results]
    if missing:
        raise ValueError(f"order names {missing}, which results does not have (it has {sorted(results)})")
    pairs = zip(order[:-1], order[1:], strict=True)
    claim(all(ranked_above(results[a], results[b], higher_is_better) for a, b in pairs), text)


def claim_tied(results: Mapping[str, Sequence[float]], names: Sequence[str], text: str) -> None:
    """Claim that no variant in ``names`` ranks above another by the seed rule (they cannot be told apart)."""
    if len(names) < 2:
        raise ValueError(f"names must list at least two variants, got {list(names)}")
    values = {name: results[name] for name in names}
    claim(not any(ranked_above(values[a], values[b]) for a in names for b in names if a != b), text)


def all_claims_held() -> bool:
    """True when every claim checked so far in this run held (for a closing "every claim above holds")."""
    return not _failed


def _seed_values(values: Sequence[float], name: str) -> list[float]:
    values = [float(v) for v in values]
    if len(values) < MIN_SEEDS:
        raise ValueError(f"{name} has {len(values)} seed(s); a ranking needs at least {MIN_SEEDS}")
    if any(v != v for v in values):
        raise ValueError(f"{name} contains NaN: {values}")
    return values
