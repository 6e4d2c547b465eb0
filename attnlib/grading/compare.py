"""The one comparison behind every numeric check of the exercise tests (``checks.close``, ``checks.near``,
``checks.between``), re-exported by ``attnlib.grading.checks``.

Two values agree when they have the same shape and, wherever the expected value is finite, the learner's is
finite too and |got - expected| <= atol + rtol |expected|; where the expected value is NaN or infinite, the
learner's must be the same. A check written ``if abs(got - expected) > tol: fail`` passes NaN (every
comparison with NaN is false), and ``torch.allclose`` calls infinity close to infinity: neither can happen
here. The tolerance follows the dtype: a float64 result is held to float64 precision, so float32 arithmetic
on float64 inputs (relative errors near 1e-7) shows, where precision is part of the question.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from attnlib.grading.messages import say

FLOAT32_TOLERANCE = (1e-5, 1e-4)  # (atol, rtol): float32 results, Python numbers
FLOAT64_TOLERANCE = (1e-10, 1e-8)  # float64 tensors, unless the check says otherwise


def values(x: Any) -> torch.Tensor | None:
    """``x`` as a float64 tensor: a tensor, a NumPy array or scalar, a Python number; None for anything else
    (a bool is not a number here)."""
    if isinstance(x, bool) or x is None:
        return None
    if isinstance(x, torch.Tensor):
        return x.detach().to(torch.float64) if not x.is_complex() else None
    if isinstance(x, (int, float)):
        return torch.tensor(float(x), dtype=torch.float64)
    if type(x).__module__ == "numpy":
        try:
            return torch.as_tensor(x).to(torch.float64)
        except (TypeError, ValueError, RuntimeError):
            return None
    return None


def tolerance(got: Any, expected: Any, atol: float | None, rtol: float | None) -> tuple[float, float]:
    double = all(isinstance(x, torch.Tensor) and x.dtype == torch.float64 for x in (got, expected))
    default = FLOAT64_TOLERANCE if double else FLOAT32_TOLERANCE
    return default[0] if atol is None else float(atol), default[1] if rtol is None else float(rtol)


def difference(got: Any, expected: Any, atol: float | None = None, rtol: float | None = None) -> str:
    """'' when ``got`` agrees with ``expected``, else what is wrong, in words (no number of the expected)."""
    a, b = values(got), values(expected)
    if b is None:
        raise TypeError(f"the expected value is not a number or a tensor: {type(expected).__name__}")
    if a is None:
        return say("is not a number or a tensor (got {type})", type=type(got).__name__)
    if a.numel() == 1 and b.numel() == 1:
        a, b = a.reshape(()), b.reshape(())
    if a.shape != b.shape:
        return say("has shape {got}, not {expected}", got=tuple(a.shape), expected=tuple(b.shape))
    atol, rtol = tolerance(got, expected, atol, rtol)
    finite = torch.isfinite(b)
    special = ~finite
    if bool(special.any()):
        same_nan = torch.isnan(a[special]) == torch.isnan(b[special])
        same_inf = (a[special] == b[special]) | torch.isnan(b[special])
        if not bool((same_nan & same_inf).all()):
            return say("differs where the expected value is infinite or NaN")
    if bool(torch.isnan(a[finite]).any()):
        return say("contains NaN")
    if bool(torch.isinf(a[finite]).any()):
        return say("contains infinity")
    if not bool((torch.abs(a[finite] - b[finite]) <= atol + rtol * torch.abs(b[finite])).all()):
        return say("has wrong values")
    return ""


def near(got: Any, expected: Any, atol: float | None = None, rtol: float | None = None) -> bool:
    """Whether ``got`` agrees with ``expected`` (``difference``); False for NaN, infinity or a non-number."""
    try:
        return not difference(got, expected, atol, rtol)
    except TypeError:
        return False


def largest_error(got: Any, expected: Any) -> float:
    a, b = values(got), values(expected)
    if a is None or b is None or a.numel() != b.numel():
        return math.inf
    return float((a.reshape(b.shape) - b).abs().nan_to_num(math.inf).max()) if b.numel() else 0.0


def within(value: Any, low: float, high: float) -> bool:
    """``low <= value <= high`` for a finite number (NaN is in no interval)."""
    v = values(value)
    return v is not None and v.numel() == 1 and math.isfinite(float(v)) and low <= float(v) <= high
