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
"""

from __future__ import annotations

import os
from typing import Any

import torch

STRICT_CLAIMS = "ATTNLIB_STRICT_CLAIMS"

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
    if os.environ.get(STRICT_CLAIMS) == "1":
        raise AssertionError(f"the text claims that {text}, but this run does not bear it out")
    print(
        f"Note: the text claims that {text}, but this run does not bear it out. The book was run on a "
        "2-core CPU with the torch version pinned in requirements-course.txt; this run uses torch "
        f"{torch.__version__}. Other hardware or versions train along a slightly different path, so read "
        "this run's numbers above rather than the sentence."
    )
