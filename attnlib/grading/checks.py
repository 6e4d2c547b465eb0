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
    report: dict[str, Any] = {"ops": 0, "jumps": 0, "entries": {}, "tampered": False}
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
            return func(*args, **(kwargs or {}))

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
    the caller's data must stay as it was. Returns the value."""
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
        copies = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
        value = call(fn, *copies, what=what, hint=hint)
        changed = [
            i
            for i, (a, c) in enumerate(zip(args, copies, strict=True))
            if isinstance(a, torch.Tensor) and not torch.equal(a.nan_to_num(), c.nan_to_num())
        ]
    if changed:
        raise AssertionError(
            f"{what} changed its argument(s) number {', '.join(str(i + 1) for i in changed)} in place "
            "(masked_fill_, +=, ...): compute new tensors, the caller still needs its own"
        )
    return value


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
