"""Recorded references: what a public test ships instead of a helper that computes an expected answer.

Re-exported by ``attnlib.grading.checks``, where the tests and tools/exercises.py reach it
(``checks.reference``, ``checks.recorded``, ``checks.to_data``).
"""

from __future__ import annotations

from typing import Any

import torch

from attnlib.grading.contract import MAX_TREE_DEPTH
from attnlib.grading.messages import say

# ------------------------------------------------------------------------------------- recorded references
# The public tests ship with attnlib, so anything in them can be copied. A helper that computes an expected
# answer is marked ``@checks.reference`` in the master; in the public test file (``tools/exercises.py build``)
# its body is replaced by ``checks.recorded(name, table)``: the values it gave for the public examples, and
# nothing else. The hidden tests keep the real helper: a copy of the public file knows the public inputs only.


def reference(fn: Any) -> Any:
    """Marks a test helper that computes an expected answer (see above); returns it unchanged."""
    fn.__checks_reference__ = True
    return fn


def _float(x: float) -> Any:
    return x if x == x and x not in (float("inf"), float("-inf")) else repr(x)


def to_data(obj: Any, depth: int = 0) -> Any:
    """Plain JSON for tensors, numbers, text and containers of them (for a recorded reference's table)."""
    if depth > MAX_TREE_DEPTH:
        raise ValueError("nested too deeply to record")
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return {"float": _float(obj)}
    if isinstance(obj, torch.Tensor):
        x = obj.detach().cpu()
        values = x.double().flatten().tolist() if x.is_floating_point() else x.flatten().tolist()
        return {
            "tensor": str(x.dtype).removeprefix("torch."),
            "shape": list(x.shape),
            "values": [_float(v) if isinstance(v, float) else v for v in values],
        }
    if isinstance(obj, (tuple, list)):
        return {
            type(obj).__name__ if type(obj) in (tuple, list) else "tuple": [
                to_data(v, depth + 1) for v in obj
            ]
        }
    if isinstance(obj, (set, frozenset)):
        return {"set": sorted((to_data(v, depth + 1) for v in obj), key=repr)}
    if isinstance(obj, dict):
        return {"dict": [[to_data(k, depth + 1), to_data(v, depth + 1)] for k, v in obj.items()]}
    raise ValueError(f"cannot record a {type(obj).__name__}")


def from_data(data: Any) -> Any:
    """The inverse of ``to_data``: fresh objects."""
    if not isinstance(data, dict):
        return data
    if "float" in data:
        return float(data["float"])
    if "tensor" in data:
        dtype = getattr(torch, data["tensor"])
        values = [float(v) if isinstance(v, str) else v for v in data["values"]]
        return (
            torch.tensor(values, dtype=torch.float64 if dtype.is_floating_point else dtype)
            .to(dtype)
            .reshape(data["shape"])
        )
    if "tuple" in data:
        return tuple(from_data(v) for v in data["tuple"])
    if "list" in data:
        return [from_data(v) for v in data["list"]]
    if "set" in data:
        return {from_data(v) for v in data["set"]}
    if "dict" in data:
        return {from_data(k): from_data(v) for k, v in data["dict"]}
    raise ValueError(f"not recorded data: {str(data)[:80]}")


def _agree(a: Any, b: Any, depth: int = 0) -> bool:
    """A recorded argument ``a`` and a given one ``b`` agree (numbers and tensors within about 1e-6: another
    machine's last bits may differ)."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return False
        if a.shape != b.shape or a.dtype != b.dtype:
            return False
        x, y = a.double(), b.detach().cpu().double()
        return bool(torch.allclose(x, y, atol=1e-6, rtol=1e-5, equal_nan=True))
    if depth > MAX_TREE_DEPTH:
        return False
    numbers = (int, float)
    if isinstance(a, float) or isinstance(b, float):
        if (
            isinstance(a, bool)
            or isinstance(b, bool)
            or not (isinstance(a, numbers) and isinstance(b, numbers))
        ):
            return False
        return (a != a and b != b) or abs(a - b) <= 1e-9 + 1e-6 * abs(a)
    if type(a) in (tuple, list) and type(b) in (tuple, list):
        return len(a) == len(b) and all(_agree(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_agree(a[k], b[k], depth + 1) for k in a)
    try:
        return type(a) is type(b) and bool(a == b)
    except Exception:  # noqa: BLE001
        return False


def recorded(name: str, table: str) -> Any:
    """A stand-in for the reference helper ``name``: the values it gave for the public examples (``table``,
    JSON written by the build), looked up by their inputs."""
    import json

    calls = json.loads(table)

    def stand_in(*args: Any, **kwargs: Any) -> Any:
        for call in calls:
            if (
                len(call["args"]) == len(args)
                and sorted(call["kwargs"]) == sorted(kwargs)
                and all(_agree(from_data(r), a) for r, a in zip(call["args"], args, strict=True))
                and all(_agree(from_data(call["kwargs"][k]), v) for k, v in kwargs.items())
            ):
                return from_data(call["value"])
        raise AssertionError(
            say(
                "{name} is a recorded reference: it knows only the public examples' inputs, not these",
                name=name,
            )
        )

    stand_in.__name__ = name
    return stand_in
