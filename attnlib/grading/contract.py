"""The contract every learner function is called under in the exercise tests (``checks.call``).

Re-exported by ``attnlib.grading.checks``, where the tests reach it (``checks.contract``).
"""

from __future__ import annotations

from typing import Any

import torch

from attnlib.grading.messages import say

# ------------------------------------------------------------------------------------------- the contract
# A learner's function of tensors must behave as a function: (1) it changes none of its arguments in place,
# (2) the same inputs give the same result (no state kept between calls, no unseeded randomness), (3) given
# floating tensors of one dtype (float32, float64), the floating tensors it returns have that dtype. A set may
# exempt a name from a rule where its question says otherwise ("contract_exempt" in the master's config).
CONTRACT_RULES = ("mutation", "repeat", "dtype")
CONTRACT_EXEMPT: dict[str, list[str]] = {}  # name -> rules; the set's test files fill it in
MAX_TREE_DEPTH = 8


def tensors_in(obj: Any, depth: int = 0) -> list[torch.Tensor]:
    """The tensors in ``obj`` and in the tuples, lists and dict values it holds, in order."""
    if isinstance(obj, torch.Tensor):
        return [obj]
    if depth >= MAX_TREE_DEPTH:
        return []
    if isinstance(obj, (tuple, list)):
        return [t for item in list(obj)[:10_000] for t in tensors_in(item, depth + 1)]
    if isinstance(obj, dict):
        return [t for item in list(obj.values())[:1000] for t in tensors_in(item, depth + 1)]
    return []


def clone_tree(obj: Any, depth: int = 0) -> Any:
    """``obj`` with every tensor and array in it cloned and every list, tuple, dict and set in it rebuilt
    (numbers and strings are immutable); anything else shared."""
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if depth >= MAX_TREE_DEPTH:
        return obj
    if type(obj) in (tuple, list):
        return type(obj)(clone_tree(item, depth + 1) for item in obj)
    if type(obj) is dict:
        return {k: clone_tree(v, depth + 1) for k, v in obj.items()}
    if type(obj) in (set, frozenset):
        return type(obj)(obj)
    if type(obj).__module__ == "numpy" and type(obj).__name__ == "ndarray":
        return obj.copy()
    return obj


def same_tensor(a: torch.Tensor, b: torch.Tensor) -> bool:
    """Same shape, dtype and values (NaN equal to NaN, -0.0 equal to 0.0)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point() or a.is_complex():
        same_nan = torch.equal(torch.isnan(a), torch.isnan(b))
        return bool(same_nan and torch.equal(a.nan_to_num(0), b.nan_to_num(0)))
    return bool(torch.equal(a, b))


def changed_arguments(args: tuple | list, before: tuple | list) -> list[int]:
    """Which arguments differ from their copy in ``before`` (taken with ``clone_tree``): a tensor or an array
    changed in place, a list, dict or set changed in its items, at any depth ``clone_tree`` copies."""
    return [i for i, (a, b) in enumerate(zip(args, before, strict=True)) if not same_tree(a, b)]


def same_tree(a: Any, b: Any, depth: int = 0) -> bool:
    """``a`` still equals its copy ``b``: the same types, tensors and arrays of the same values, containers of
    the same length (keys) holding the same, numbers equal (NaN equal to NaN); other objects by identity."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_tensor(a, b)
    if type(a) is not type(b):
        return False
    if depth >= MAX_TREE_DEPTH:
        return True
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same_tree(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if type(a) is dict:
        return list(a) == list(b) and all(same_tree(a[k], b[k], depth + 1) for k in a)
    if type(a) in (set, frozenset):
        return a == b
    if type(a).__module__ == "numpy" and type(a).__name__ == "ndarray":
        import numpy as np

        return (
            a.shape == b.shape
            and a.dtype == b.dtype
            and bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        )
    if isinstance(a, float):
        return a == b or (a != a and b != b)
    if isinstance(a, (int, str, bytes, bool, complex)) or a is None:
        return a == b
    return a is b


def same_result(a: Any, b: Any, depth: int = 0) -> bool:
    """Two results of the same call are the same: equal tensors, numbers (NaN equal), containers, text."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        return isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and same_tensor(a, b)
    if depth >= MAX_TREE_DEPTH:
        return True
    if isinstance(a, float) and isinstance(b, float):
        return a == b or (a != a and b != b)
    if type(a) in (tuple, list) and type(b) is type(a):
        return len(a) == len(b) and all(same_result(x, y, depth + 1) for x, y in zip(a, b, strict=True))
    if type(a) is dict and type(b) is dict:
        return a.keys() == b.keys() and all(same_result(a[k], b[k], depth + 1) for k in a)
    if isinstance(a, (set, frozenset)) and isinstance(
        b, (set, frozenset)
    ):  # tensors in a set hash by identity
        return type(a) is type(b) and sorted(map(repr, a)) == sorted(map(repr, b))
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - objects that cannot be compared count as the same
        return True


def mutation_message(name: str, changed: list[int]) -> str:
    return say(
        "{name} changed its argument(s) number {numbers} in place "
        "(masked_fill_, +=, ...): compute new tensors, the caller still needs its own",
        name=name,
        numbers=", ".join(str(i + 1) for i in changed),
    )


def repeat_message(name: str) -> str:
    return say(
        "{name} gave a different result when called again with the same inputs: it must not keep state "
        "between calls (a global, a default argument, a cache) nor draw random numbers without its own seed",
        name=name,
    )


def dtype_message(args: tuple | list, value: Any, name: str) -> str:
    """'' if ``value`` keeps the floating dtype of the inputs, else what is wrong."""
    given = {t.dtype for t in tensors_in(list(args)) if t.is_floating_point()}
    if len(given) != 1:
        return ""
    dtype = given.pop()
    wrong = sorted({str(t.dtype) for t in tensors_in(value) if t.is_floating_point() and t.dtype != dtype})
    if not wrong:
        return ""
    return say(
        "{name} was given {dtype} tensors and returned {wrong}: keep the dtype of the inputs (new tensors "
        "with dtype=x.dtype, no .double() or .float() on the way)",
        name=name,
        dtype=str(dtype).removeprefix("torch."),
        wrong=", ".join(w.removeprefix("torch.") for w in wrong),
    )


def contract(fn: Any, args: tuple, name: str, exempt: tuple[str, ...] = ()) -> Any:
    """``fn(*args)`` under the contract above; raises AssertionError saying which rule it broke."""
    before = clone_tree(list(args))
    value = fn(*args)
    if "mutation" not in exempt:
        changed = changed_arguments(list(args), before)
        if changed:
            raise AssertionError(mutation_message(name, changed))
    if "repeat" not in exempt and tensors_in(list(args)):
        again = fn(*clone_tree(before))
        if not same_result(value, again):
            raise AssertionError(repeat_message(name))
    if "dtype" not in exempt:
        message = dtype_message(args, value, name)
        if message:
            raise AssertionError(message)
    return value
