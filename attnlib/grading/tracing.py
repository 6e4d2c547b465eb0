"""What a learner's function ran: the checks that look at execution, not at the source text.

``run_traced`` runs a function and reports the loops its own code took and the torch operations it called;
``no_autograd``, ``uses_of``, ``functions_run``, ``largest_output`` and ``no_python_loops`` read that report.
In the teacher's grader the sandbox runs the same tracing in the learner's process and sends the report back.
Re-exported by ``attnlib.grading.checks``, where the tests reach them.
"""

from __future__ import annotations

import os
from typing import Any

import torch

from attnlib.grading.contract import tensors_in
from attnlib.grading.messages import say, tr


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
    report["largest"] = 0  # elements of the largest tensor memory a torch call made (not the arguments')
    given = {_storage(t)[0] for t in tensors_in([args, kwargs or {}])} - {-1}
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
            for t in outs:
                pointer, elements = _storage(t)
                if pointer not in given:
                    report["largest"] = max(report["largest"], elements)
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


def _storage(t: torch.Tensor) -> tuple[int, int]:
    """(address, size in elements) of the memory under ``t``: a view or an ``expand`` of a tensor counts as
    that tensor's memory, not as its own shape."""
    try:
        from torch._C import _functorch

        while _functorch.is_functorch_wrapped_tensor(t):  # inside vmap or grad: the tensor it wraps
            t = _functorch.get_unwrapped(t)
        storage = t.untyped_storage()
        return storage.data_ptr(), storage.nbytes() // max(1, t.element_size())
    except Exception:  # a tensor without ordinary memory (sparse, a functorch wrapper): its own size
        return -1, t.numel()


# torch calls that give the same data in another shape or dtype: a view or a copy of a tracked argument is
# tracked too (U.T, U.clone()); and the calls that run autograd
_SAME_DATA = set("T mT H t transpose permute clone contiguous detach to view reshape float double".split())
_SAME_DATA |= {"expand", "unsqueeze", "squeeze", "get"}  # "get": a property (U.T) is its __get__
_AUTOGRAD = {"backward", "grad", "requires_grad_", "jacobian", "hessian", "vjp", "jvp"}


def traced(fn: Any, args: tuple) -> tuple[Any, dict[str, Any]]:
    """``run_traced(fn, args)``, measured in the sandbox in the grader; a failed call fails the check."""
    name = getattr(fn, "__name__", "the function")
    if fn is None:
        raise AssertionError(say("the function is not defined: run the cell that defines it"))
    try:
        value, report = (getattr(fn, "traced", None) or (lambda *a: run_traced(fn, a)))(*args)
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(
            say("{name} raised {error}: {text}", name=name, error=type(e).__name__, text=str(e)[:300])
        ) from None
    if report.get("tampered"):
        raise AssertionError(say("{name} changed the tracing that this check uses", name=name))
    return value, report


def no_autograd(fn: Any, *args: Any) -> Any:
    """``fn(*args)`` runs no backward pass and builds no graph for one (``backward``, ``torch.autograd``,
    ``requires_grad``, ``torch.func``): what runs is inspected, not the source, so a comment may say
    anything. Returns the value."""
    value, report = traced(fn, args)
    if report.get("autograd"):
        raise AssertionError(
            say(
                "{name} uses autograd (a backward pass, torch.autograd or "
                "requires_grad ran): multiply the factors yourself",
                name=getattr(fn, "__name__", "the function"),
            )
        )
    return value


def uses_of(fn: Any, args: tuple, index: int) -> int:
    """How many torch calls received argument ``index`` of ``fn(*args)`` (or a view or copy of it), by what
    ran: ``uses_of(loop, (..., steps=2), i) == uses_of(loop, (..., steps=5), i)`` means it is used the same
    number of times whatever the number of steps (projected once, before the loop)."""
    return int(traced(fn, args)[1].get("uses", {}).get(str(index), 0))


def largest_output(fn: Any, args: tuple) -> int:
    """The number of elements of the largest tensor that any torch call made while ``fn(*args)`` ran, by
    what ran: the memory under each call's results (a view or ``expand`` counts as the memory it views, the
    arguments' own memory is not counted). What one torch call allocates inside itself is not seen."""
    return int(traced(fn, args)[1].get("largest", 0))


def functions_run(fn: Any, *args: Any) -> set[str]:
    """The names of the learner's own functions that ran during ``fn(*args)`` (``fn`` itself included): what
    ran, not what the source mentions, so a name in a comment or in a branch never taken does not count.
    A function that returns None is unanswered: its check says "replace the `...`", not which names did not
    run."""
    value, report = traced(fn, args)
    if value is None:
        name = getattr(fn, "__name__", "the function")
        raise AssertionError(say(RETURNED_NONE, name=name))
    return {key.rpartition(":")[0] for key in report.get("entries", {})}


def looped_over(sizes: dict[str, tuple[int, int]], jumps: tuple[int, int]) -> list[str]:
    """Which of ``sizes`` ({what: (its size in the small input, in the large one)}) a loop ran over, from the
    backward jumps of the two runs: a loop over n items jumps back once per item, so a loop (or k loops one
    after the other) over it jumps k n_small and k n_large times, for a whole k >= 1.
    Empty when no single one fits (nested loops, a loop over something else): the message then names them
    all."""
    small, large = jumps
    found = []
    for what, (a, b) in sizes.items():
        if b == a or (large - small) % (b - a):
            continue
        k = (large - small) // (b - a)
        if k >= 1 and small == k * a:
            found.append(what)
    return found


RETURNED_NONE = "{name} returned None: replace the `...` by your code and `return` the result"
LOOPED = {"batch items": (0, 0), "queries": (0, 0), "positions": (0, 0)}  # the default message's names


def no_python_loops(
    fn: Any, small: tuple, large: tuple, sizes: dict[str, tuple[int, int]] | None = None
) -> None:
    """Run on two input sizes and inspect what actually ran: no loop or comprehension in the learner's code
    (wherever it is: a helper, a decorator), and the same number of torch operations and of calls of the
    learner's functions for both sizes (a ``map`` or a recursion over the inputs changes them).
    ``sizes`` ({what: (size in ``small``, size in ``large``)}, e.g. {"heads": (1, 2), "batch items": (2, 3)})
    names what the inputs hold: a loop's message names the one it ran over (``looped_over``), or all of
    them."""
    sizes = sizes or LOOPED
    name = getattr(fn, "__name__", "the function")
    if fn is None:
        raise AssertionError(say("the function is not defined: run the cell that defines it"))
    traced = getattr(fn, "traced", None) or (lambda *a: run_traced(fn, a))
    reports = []
    for args in (small, large):
        try:
            value, report = traced(*args)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(
                say("{name} raised {error}: {text}", name=name, error=type(e).__name__, text=str(e)[:300])
            ) from None
        if value is None:
            raise AssertionError(say(RETURNED_NONE, name=name))
        reports.append(report)
    if any(r.get("tampered") for r in reports):
        raise AssertionError(say("{name} changed the tracing that this check uses", name=name))
    names = [tr(what) for what in sizes]
    everything = (
        say("{some} and {last}", some=", ".join(names[:-1]), last=names[-1]) if len(names) > 1 else names[0]
    )
    if any(r.get("jumps") for r in reports):
        over = [tr(what) for what in looped_over(sizes, tuple(r.get("jumps", 0) for r in reports))]
        where = ""
        if len(over) == 1:
            where = say(", over the {what}", what=over[0])
        elif len(over) == 2:
            where = say(", over the {what} or the {other}", what=over[0], other=over[1])
        raise AssertionError(
            say(
                "{name} uses Python loops (a for, while or comprehension ran, perhaps in a helper){where}: "
                "compute all {everything} at once with batched matrix products (@)",
                name=name,
                where=where,
                everything=everything,
            )
        )
    small_report, large_report = reports
    if small_report.get("ops") == 0:
        raise AssertionError(
            say("{name} does not compute anything with torch yet: write its body", name=name)
        )
    if small_report.get("ops") != large_report.get("ops") or small_report.get("entries") != large_report.get(
        "entries"
    ):
        raise AssertionError(
            say(
                "{name} does more work in Python for larger inputs ({small} torch operations "
                "for the small input, {large} for the larger one): a Python loop, map or "
                "recursion over the inputs. Compute all {everything} at once",
                name=name,
                small=small_report.get("ops"),
                large=large_report.get("ops"),
                everything=everything,
            )
        )
