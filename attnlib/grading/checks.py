"""Assertions for exercise tests, with messages that tell a learner what to look at.

The same test files run in two places: in the learner's notebook (``grader.check``, public tests) and in the
teacher's grader (public and hidden tests, with the learner's functions replaced by sandbox proxies).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import os
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


def _library_roots() -> tuple[str, ...]:
    """Folders of installed code (Python, torch, attnlib): frames from there are not the learner's."""
    import sys
    import sysconfig

    import attnlib

    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}
    roots |= {
        p for k, p in sysconfig.get_paths().items() if k in ("stdlib", "platstdlib", "purelib", "platlib")
    }
    roots.add(os.path.dirname(os.path.dirname(os.path.abspath(attnlib.__file__))) + os.sep + "attnlib")
    return tuple(sorted({os.path.realpath(r) for r in roots if r}))


def run_traced(fn: Any, args: tuple, kwargs: dict | None = None) -> tuple[Any, dict[str, Any]]:
    """``fn(*args, **kwargs)`` and what actually ran: torch calls (a TorchFunctionMode), backward jumps in the
    learner's own frames (loops and comprehensions, whatever their source looks like) and how often each of
    the learner's code objects was entered (helpers, lambdas given to ``map``, recursion)."""
    import sys

    from torch.overrides import TorchFunctionMode

    roots = _library_roots()
    report: dict[str, Any] = {"ops": 0, "jumps": 0, "entries": {}, "tampered": False, "autograd": 0}
    # uses[i]: torch calls that received tensor argument i, or a view or copy of it (U.T, U.clone())
    report["uses"] = {str(i): 0 for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    tracked = {id(a): str(i) for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    last: dict[Any, int] = {}
    mine: dict[str, bool] = {}

    def learner(code) -> bool:
        name = code.co_filename
        if name not in mine:
            mine[name] = (
                not os.path.realpath(name).startswith(roots) if not name.startswith("<frozen") else False
            )
        return mine[name]

    def tracer(frame, event, arg):
        if not learner(frame.f_code):
            return None
        if event == "call":
            key = f"{frame.f_code.co_name}:{frame.f_code.co_firstlineno}"
            report["entries"][key] = report["entries"].get(key, 0) + 1
        elif event == "line":
            if frame in last and frame.f_lasti <= last[frame]:
                report["jumps"] += 1
            last[frame] = frame.f_lasti
        return tracer

    class Count(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            report["ops"] += 1
            value = func(*args, **(kwargs or {}))
            used = {tracked[id(t)] for t in tensors_in([args, kwargs or {}]) if id(t) in tracked}
            for i in used:
                report["uses"][i] += 1
            name = getattr(func, "__name__", "")
            if len(used) == 1 and isinstance(value, torch.Tensor) and name.strip("_") in _SAME_DATA:
                tracked[id(value)] = next(iter(used))
                keep.append(value)  # the id stays this tensor's while the call runs
            outs = tensors_in(value)
            if name in _AUTOGRAD or any(t.requires_grad for t in outs):
                report["autograd"] += 1  # a backward pass, or a graph built for one
            return value

    keep: list[torch.Tensor] = []
    previous = sys.gettrace()
    mode = Count()
    with mode:
        sys.settrace(tracer)
        try:
            value = fn(*args, **(kwargs or {}))
        finally:
            report["tampered"] = sys.gettrace() is not tracer
            sys.settrace(previous)
    return value, report


# torch calls that give the same data in another shape or dtype: a view or a copy of a tracked argument is
# tracked too (U.T, U.clone()); and the calls that run autograd
_SAME_DATA = set("T mT H t transpose permute clone contiguous detach to view reshape float double".split())
_SAME_DATA |= {"expand", "unsqueeze", "squeeze", "get"}  # "get": a property (U.T) is its __get__
_AUTOGRAD = {"backward", "grad", "requires_grad_", "jacobian", "hessian", "vjp", "jvp"}


def traced(fn: Any, args: tuple) -> tuple[Any, dict[str, Any]]:
    """``run_traced(fn, args)``, measured in the sandbox in the grader; a failed call fails the check."""
    name = getattr(fn, "__name__", "the function")
    if fn is None:
        raise AssertionError("the function is not defined: run the cell that defines it")
    try:
        value, report = (getattr(fn, "traced", None) or (lambda *a: run_traced(fn, a)))(*args)
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{name} raised {type(e).__name__}: {str(e)[:300]}") from None
    if report.get("tampered"):
        raise AssertionError(f"{name} changed the tracing that this check uses")
    return value, report


def no_autograd(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` runs no backward pass and builds no graph for one (``backward``, ``torch.autograd``,
    ``requires_grad``, ``torch.func``): what runs is inspected, not the source, so a comment may say
    anything. Returns the value."""
    value, report = traced(fn, args)
    if report.get("autograd"):
        raise AssertionError(
            f"{getattr(fn, '__name__', 'the function')} uses autograd (a backward pass, torch.autograd or "
            "requires_grad ran): multiply the factors yourself"
        )
    return value


def uses_of(fn: Any, args: tuple, index: int) -> int:
    """How many torch calls received argument ``index`` of ``fn(*args)`` (or a view or copy of it), by what
    ran: ``uses_of(loop, (..., steps=2), i) == uses_of(loop, (..., steps=5), i)`` means it is used the same
    number of times whatever the number of steps (projected once, before the loop)."""
    return int(traced(fn, args)[1].get("uses", {}).get(str(index), 0))


def functions_run(fn: Any, *args: Any) -> set[str]:
    """The names of the learner's own functions that ran during ``fn(*args)`` (``fn`` itself included): what
    ran, not what the source mentions, so a name in a comment or in a branch never taken does not count."""
    return {key.rpartition(":")[0] for key in traced(fn, args)[1].get("entries", {})}


def no_python_loops(fn: Any, small: tuple, large: tuple) -> None:
    """Run on two input sizes and inspect what actually ran: no loop or comprehension in the learner's code
    (wherever it is: a helper, a decorator), and the same number of torch operations and of calls of the
    learner's functions for both sizes (a ``map`` or a recursion over the inputs changes them)."""
    name = getattr(fn, "__name__", "the function")
    if fn is None:
        raise AssertionError("the function is not defined: run the cell that defines it")
    traced = getattr(fn, "traced", None) or (lambda *a: run_traced(fn, a))
    reports = []
    for args in (small, large):
        try:
            value, report = traced(*args)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(f"{name} raised {type(e).__name__}: {str(e)[:300]}") from None
        if value is None:
            raise AssertionError(
                f"{name} returned None: replace the `...` by your code and `return` the result"
            )
        reports.append(report)
    if any(r.get("tampered") for r in reports):
        raise AssertionError(f"{name} changed the tracing that this check uses")
    if any(r.get("jumps") for r in reports):
        raise AssertionError(
            f"{name} uses Python loops (a for, while or comprehension ran, perhaps in a helper): "
            "compute all batch items, queries and positions at once with batched matrix products (@)"
        )
    small_report, large_report = reports
    if small_report.get("ops") == 0:
        raise AssertionError(f"{name} does not compute anything with torch yet: write its body")
    if small_report.get("ops") != large_report.get("ops") or small_report.get("entries") != large_report.get(
        "entries"
    ):
        raise AssertionError(
            f"{name} does more work in Python for larger inputs ({small_report.get('ops')} torch operations "
            f"for the small input, {large_report.get('ops')} for the larger one): a Python loop, map or "
            "recursion over the inputs. Compute all batch items, queries and positions at once"
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


def leaves_inputs_alone(fn: Any, *args: Any, what: str, hint: str = "") -> Any:
    """``call(fn, *args)``, failing if the call changed a tensor argument in place (``masked_fill_``, ``+=``):
    the caller's data must stay as it was. Returns the value. (``call`` checks the same on every call; this
    one says so in a check of its own.)"""
    mutations = getattr(fn, "mutations", None)  # in the grader: compared in the learner's sandbox
    if mutations is not None:
        try:
            value, changed = mutations(*args)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(
                f"{what} raised {type(e).__name__}: {str(e)[:300]}. {hint}".strip()
            ) from None
    else:
        if fn is None:
            raise AssertionError(f"{what.split('(')[0]} is not defined: run the cell that defines it")
        copies = clone_tree(list(args))
        try:
            value = fn(*copies)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(
                f"{what} raised {type(e).__name__}: {str(e)[:300]}. {hint}".strip()
            ) from None
        changed = changed_arguments(list(args), copies)
    if changed:
        raise AssertionError(mutation_message(what, changed))
    return value


def call(fn: Any, *args: Any, what: str, hint: str = "") -> Any:
    """``fn(*args)``, turning a missing function or an error into a failed check that says what to look at.

    Every call also holds the learner's function to the contract of a function of tensors (``contract``):
    it leaves its arguments as they were, gives the same result when called again with the same inputs,
    and keeps the floating dtype of its inputs. In the teacher's grader the learner's function is a proxy
    that checks the same on every call, wherever a test calls it."""
    if fn is None:
        raise AssertionError(f"{what.split('(')[0]} is not defined: run the cell that defines it")
    try:
        if getattr(fn, "checks_contract", False):  # the grader's proxy: checked on its side, every call
            return fn(*args)
        name = getattr(fn, "__name__", what.split("(")[0])
        return contract(fn, args, name, tuple(CONTRACT_EXEMPT.get(name, ())))
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(f"{what} raised {type(e).__name__}: {str(e)[:300]}. {hint}".strip()) from None


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
    """``obj`` with every tensor in it (tuples, lists, dict values) cloned; anything else shared."""
    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if depth >= MAX_TREE_DEPTH:
        return obj
    if type(obj) in (tuple, list):
        return type(obj)(clone_tree(item, depth + 1) for item in obj)
    if type(obj) is dict:
        return {k: clone_tree(v, depth + 1) for k, v in obj.items()}
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
    """Which arguments hold a tensor that differs from its copy in ``before`` (taken with ``clone_tree``)."""
    changed = []
    for i, (a, b) in enumerate(zip(args, before, strict=True)):
        now, then = tensors_in(a), tensors_in(b)
        if len(now) != len(then) or not all(same_tensor(x, y) for x, y in zip(now, then, strict=True)):
            changed.append(i)
    return changed


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
    return (
        f"{name} changed its argument(s) number {', '.join(str(i + 1) for i in changed)} in place "
        "(masked_fill_, +=, ...): compute new tensors, the caller still needs its own"
    )


def repeat_message(name: str) -> str:
    return (
        f"{name} gave a different result when called again with the same inputs: it must not keep state "
        "between calls (a global, a default argument, a cache) nor draw random numbers without its own seed"
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
    return (
        f"{name} was given {str(dtype).removeprefix('torch.')} tensors and returned "
        f"{', '.join(w.removeprefix('torch.') for w in wrong)}: keep the dtype of the inputs (new tensors "
        "with dtype=x.dtype, no .double() or .float() on the way)"
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
            f"{name} is a recorded reference: it knows only the public examples' inputs, not these"
        )

    stand_in.__name__ = name
    return stand_in
