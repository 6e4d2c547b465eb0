"""Helpers for the lesson notebooks that must work on the website, in Jupyter and in Colab alike.

The book quotes numbers and figures computed by the notebooks with myst-nb's ``glue``: every number in the
prose comes from a cell. myst-nb is part of the course environment but not of Colab's, so lessons import
``glue`` from here: with myst-nb it is myst-nb's; without it, a figure is simply shown in the cell (so that a
Colab reader still sees it) and a value is left to the cell's own printed output.
"""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

try:
    from myst_nb import glue as _myst_glue
except ImportError:  # Colab, or a plain Jupyter without the book's tools
    _myst_glue = None


def glue(name: str, value: Any, display: bool = False) -> None:
    """Record ``value`` under ``name`` for the book (myst-nb); in Colab show figures instead."""
    if _myst_glue is not None:
        _myst_glue(name, value, display=display)
    elif isinstance(value, Figure):
        from IPython.display import display as show

        show(value)
