"""Assertions for exercise tests, with messages that tell a learner what to look at.

The same test files run in two places: in the learner's notebook (``grader.check``, public tests) and in the
teacher's grader (public and hidden tests, with the learner's functions replaced by sandbox proxies).
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import inspect
import textwrap
from collections.abc import Iterator
from typing import Any

import torch

# True in the teacher's grader: the sandbox already switches attnlib functions off for the learner's code, and
# the grader's own attnlib must stay intact for the reference values (tests of several learners run at once).
GRADING = False


def tensor(
    got: Any,
    what: str,
    shape: tuple[int, ...] | None = None,
    dtype: torch.dtype | None = None,
    hint: str = "",
) -> torch.Tensor:
    """``got`` is a tensor of the given shape and dtype; returns it."""
    if got is None:
        raise AssertionError(f"{what} is None: replace the `...` by your code and `return` the result")
    if isinstance(got, tuple) and shape is not None and len(got) != len(shape):
        raise AssertionError(f"{what} should be one tensor, got a tuple of {len(got)} values")
    if not isinstance(got, torch.Tensor):
        raise AssertionError(f"{what} should be a torch.Tensor, got {type(got).__name__}")
    if shape is not None and tuple(got.shape) != tuple(shape):
        raise AssertionError(
            f"{what} should have shape {tuple(shape)}, got {tuple(got.shape)}. {hint}".strip()
        )
    if dtype is not None and got.dtype != dtype:
        raise AssertionError(f"{what} should keep the dtype of the inputs ({dtype}), got {got.dtype}")
    return got


def close(
    got: torch.Tensor,
    expected: torch.Tensor,
    what: str,
    hint: str = "",
    atol: float = 1e-5,
    rtol: float = 1e-4,
) -> None:
    """``got`` equals ``expected`` within tolerance (same shape, no NaN)."""
    got = tensor(got, what, shape=tuple(expected.shape))
    if torch.isnan(got).any() and not torch.isnan(expected).any():
        raise AssertionError(f"{what} contains NaN. {hint}".strip())
    got, expected = got.to(torch.float64), expected.to(torch.float64)
    if not torch.allclose(got, expected, atol=atol, rtol=rtol):
        worst = (got - expected).abs().nan_to_num(float("inf")).max().item()
        raise AssertionError(
            f"{what} has the right shape but wrong values (largest error {worst:.3g}). {hint}".strip()
        )


def source_of(fn: Any) -> str:
    """The source code of a learner's function (in the grader, read from the submitted notebook)."""
    source = getattr(fn, "__source__", None)
    if source is None:
        try:
            source = inspect.getsource(fn)
        except (TypeError, OSError):
            raise AssertionError(f"could not read the source code of {getattr(fn, '__name__', fn)}") from None
    return textwrap.dedent(source)


def no_python_loops(fn: Any) -> None:
    """The function body has no ``for``/``while`` loop and no comprehension: batched tensor code only."""
    tree = ast.parse(source_of(fn))
    loops = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
    found = sorted({type(node).__name__ for node in ast.walk(tree) if isinstance(node, loops)})
    if found:
        raise AssertionError(
            f"{getattr(fn, '__name__', 'the function')} uses Python loops ({', '.join(found)}): "
            "compute all batch items, queries and positions at once with batched matrix products (@)"
        )


def _switched_off(dotted: str):
    def off(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(
            f"{dotted} is switched off in this test: the exercise asks you to write it yourself"
        )

    return off


@contextlib.contextmanager
def switched_off(*dotted_names: str) -> Iterator[None]:
    """Temporarily replace attnlib functions (``"attnlib.scores.dot"``) by ones that fail the test."""
    if GRADING:
        yield
        return
    saved = []
    for dotted in dotted_names:
        module_name, _, attr = dotted.rpartition(".")
        module = importlib.import_module(module_name)
        saved.append((module, attr, getattr(module, attr)))
        setattr(module, attr, _switched_off(dotted))
    try:
        yield
    finally:
        for module, attr, original in reversed(saved):
            setattr(module, attr, original)


def call(fn: Any, *args: Any, what: str, hint: str = "") -> Any:
    """``fn(*args)``, turning a missing function or an error into a failed check that says what to look at."""
    if fn is None:
        raise AssertionError(f"{what.split('(')[0]} is not defined: run the cell that defines it")
    try:
        return fn(*args)
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{what} raised {type(e).__name__}: {str(e)[:300]}. {hint}".strip()) from None
