"""Assertions for exercise tests, with messages that tell a learner what to look at.

The same test files run in two places: in the learner's notebook (``grader.check``, public tests) and in the
teacher's grader (public and hidden tests, with the learner's functions replaced by sandbox proxies).
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import torch

from attnlib.grading.compare import difference, largest_error, near, within  # noqa: F401

# The contract (checks.call) and the recorded references live in their own modules; tests reach them here.
from attnlib.grading.contract import (  # noqa: F401
    CONTRACT_EXEMPT,
    CONTRACT_RULES,
    MAX_TREE_DEPTH,
    changed_arguments,
    clone_tree,
    contract,
    dtype_message,
    mutation_message,
    repeat_message,
    same_result,
    same_tensor,
    same_tree,
    tensors_in,
)
from attnlib.grading.learner_tests import UnderTest, catches, passes, run_test  # noqa: F401
from attnlib.grading.maps import informative_weights, order_keeping_ties  # noqa: F401
from attnlib.grading.messages import in_language, language, say, thread_setting, tr  # noqa: F401
from attnlib.grading.recorded import from_data, recorded, reference, to_data  # noqa: F401
from attnlib.grading.tracing import (  # noqa: F401
    functions_run,
    largest_output,
    no_autograd,
    no_python_loops,
    run_traced,
    traced,
    uses_of,
)

# True in the teacher's grader: the sandbox already switches attnlib functions off for the learner's code, and
# the grader's own attnlib must stay intact for the reference values (tests of several learners run at once).
GRADING = False
_CASE = threading.local()  # .hidden: the grader is running a hidden test case in this thread


def hidden_case(hidden: bool = True) -> contextlib.AbstractContextManager[None]:
    """In the grader, while a hidden case runs: the checks' messages say what is wrong in words and show no
    number computed from the expected values (one graded attempt must not tell a resubmission the answers)."""
    return thread_setting(_CASE, "hidden", hidden)


def in_hidden_case() -> bool:
    return bool(getattr(_CASE, "hidden", False))


_ONCE: dict[str, Any] = {}
_ONCE_LOCK = threading.Lock()


def once(key: str, compute: Any) -> Any:
    """``compute()`` the first time ``key`` is asked for in this process, the same value after: data that the
    tests of every submission share (a trained model's outputs and maps), computed by the tests themselves,
    never by a learner's code. The grader runs the tests of several submissions in threads of one process,
    and a set's test file is executed afresh for every submission: without this, each would recompute it."""
    with _ONCE_LOCK:
        if key not in _ONCE:
            _ONCE[key] = compute()
        return _ONCE[key]


NONE_RESULT = "{what} is None: replace the `...` by your code and `return` the result"
NOT_DEFINED = "{name} is not defined: run the cell that defines it"
SWITCHED_OFF = "{dotted} is switched off in this test: the exercise asks you to write it yourself"


def _raised(what: str, error: Exception, hint: str) -> str:
    """The message of a learner function that raised ``error``."""
    return say(
        "{what} raised {error}: {text}. {hint}",
        what=what,
        error=type(error).__name__,
        text=str(error)[:300],
        hint=hint,
    ).strip()


def answered(value: Any, what: str) -> Any:
    """``value``, a learner's name or a function's result, unless the question is still unanswered: None (a
    name left ``...`` in the notebook, or a function whose body is ``...``) or ``...`` itself fail with
    "replace the `...`", before a test goes on to read the value."""
    if value is None or value is Ellipsis:
        raise AssertionError(say("{what} is None: replace the `...` by your code", what=what))
    return value


def tensor(
    got: Any,
    what: str,
    shape: tuple[int, ...] | None = None,
    dtype: torch.dtype | None = None,
    hint: str = "",
) -> torch.Tensor:
    """``got`` is a tensor of the given shape and dtype; returns it."""
    if got is None:
        raise AssertionError(say(NONE_RESULT, what=what))
    if isinstance(got, tuple) and shape is not None and len(got) != len(shape):
        raise AssertionError(
            say("{what} should be one tensor, got a tuple of {n} values", what=what, n=len(got))
        )
    if not isinstance(got, torch.Tensor):
        raise AssertionError(
            say("{what} should be a torch.Tensor, got {type}", what=what, type=type(got).__name__)
        )
    if shape is not None and tuple(got.shape) != tuple(shape):
        raise AssertionError(
            say(
                "{what} should have shape {shape}, got {got}. {hint}",
                what=what,
                shape=tuple(shape),
                got=tuple(got.shape),
                hint=hint,
            ).strip()
        )
    if dtype is not None and got.dtype != dtype:
        raise AssertionError(
            say(
                "{what} should keep the dtype of the inputs ({dtype}), got {got}",
                what=what,
                dtype=dtype,
                got=got.dtype,
            )
        )
    return got


def close(
    got: Any,
    expected: Any,
    what: str,
    hint: str = "",
    atol: float | None = None,
    rtol: float | None = None,
) -> None:
    """``got`` agrees with ``expected`` (``compare.difference``): the same shape, no NaN or infinity where a
    finite value is expected, within ``atol + rtol |expected|`` (by default float32's tolerance, float64's for
    float64 tensors). In the grader's hidden cases the message gives no number."""
    shaped = isinstance(expected, torch.Tensor) and expected.dim() > 0
    if shaped:
        got = tensor(got, what, shape=tuple(expected.shape))
    problem = difference(got, expected, atol, rtol)
    if not problem:
        return
    if problem == say("has wrong values"):
        problem = say("has the right shape but wrong values" if shaped else "is wrong")
        if not in_hidden_case():
            problem += say(" (largest error {error:.3g})", error=largest_error(got, expected))
    raise AssertionError(say("{what} {problem}. {hint}", what=what, problem=problem, hint=hint).strip())


def between(value: Any, low: float, high: float, what: str, hint: str = "") -> None:
    """``low <= value <= high`` for a finite number: NaN lies in no interval (``value > high`` would let it
    pass)."""
    if not within(value, low, high):
        shown = "" if in_hidden_case() else say(", got {value!r}", value=value)
        raise AssertionError(
            say(
                "{what} should lie between {low:g} and {high:g}{shown}. {hint}",
                what=what,
                low=low,
                high=high,
                shown=shown,
                hint=hint,
            ).strip()
        )


def source_of(fn: Any) -> str:
    """The source code of a learner's function (in the grader, read from the submitted notebook)."""
    source = getattr(fn, "__source__", None)
    if source is None:
        try:
            source = inspect.getsource(fn)
        except (TypeError, OSError):
            name = getattr(fn, "__name__", fn)
            raise AssertionError(say("could not read the source code of {name}", name=name)) from None
    return textwrap.dedent(source)


def _switched_off(dotted: str):
    def off(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(say(SWITCHED_OFF, dotted=dotted))

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
            raise AssertionError(_raised(what, e, hint)) from None
    else:
        if fn is None:
            raise AssertionError(say(NOT_DEFINED, name=what.split("(")[0]))
        copies = clone_tree(list(args))
        try:
            value = fn(*copies)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(_raised(what, e, hint)) from None
        changed = changed_arguments(list(args), copies)
    if changed:
        raise AssertionError(mutation_message(what, changed))
    return value


def call(fn: Any, *args: Any, what: str, hint: str = "") -> Any:
    """``fn(*args)``, turning a missing function or an error into a failed check that says what to look at.

    Every call also holds the learner's function to the contract of a function of tensors (``contract``):
    it leaves its arguments as they were, gives the same result when called again with the same inputs,
    and keeps the floating dtype of its inputs. In the teacher's grader the learner's function is a proxy
    that checks the same on every call, wherever a test calls it. None, the value of an unanswered question
    (its body still ``...``), fails with "replace the `...`", whatever the test goes on to check."""
    if fn is None:
        raise AssertionError(say(NOT_DEFINED, name=what.split("(")[0]))
    try:
        # the grader's proxy, or its bound method (fresh calls): checked on its side, every call
        owner = getattr(fn, "__self__", None)
        if getattr(fn, "checks_contract", False) or getattr(owner, "checks_contract", False):
            value = fn(*args)
        else:
            name = getattr(fn, "__name__", what.split("(")[0])
            value = contract(fn, args, name, tuple(CONTRACT_EXEMPT.get(name, ())))
    except AssertionError:
        raise
    except Exception as e:
        raise AssertionError(_raised(what, e, hint)) from None
    if value is None:  # an unanswered question: its body is still `...`, or the result is not returned
        raise AssertionError(say(NONE_RESULT, what=what))
    return value


@contextlib.contextmanager
def replayable(*fns: Any) -> Iterator[None]:
    """A block of calls to the learner's functions ``fns`` that can be replayed cleanly: in the grader a copy
    of the learner's process makes the block's calls and ends with the block, so ``fn.fresh`` after it runs
    in a copy of the process as it was before the block, whose memory never saw those calls (a function that
    keeps state, even one that remembers its answers, gives other values there). Elsewhere (plain functions,
    no ``session``) the block runs as it is."""
    session = next((fn.session for fn in fns if callable(getattr(fn, "session", None))), None)
    with session() if session is not None else contextlib.nullcontext():
        yield


def responsive(fn: Any, inputs: list[tuple], what: str) -> list[Any]:
    """The learner's ``fn`` does something with its inputs: given the grader's ``inputs`` (tuples of
    arguments: a first one, then others that each change it so that the right answer changes), each value
    after the first differs from the first, and none is None or NaN. Returns them. The means for a test that
    accepts an answer because it agrees with the learner's own earlier functions: a function that returns the
    same for everything (a constant, an empty set, its argument unread) makes any answer "agree" and must earn
    nothing (which credit such answers get is the set's rule). Only changes from the first input are asked
    for: a function with an error of its own (set 8's crossings listing the pairs in the same order, the empty
    set for two inputs that cross) still computes with its inputs.
    In the grader each call is made by a fresh copy of the learner's process (``fresh``): no state carries
    from one call to the next."""
    call = getattr(fn, "fresh", None) or fn
    values = []
    for args in inputs:
        try:
            value = call(*args)
        except AssertionError:
            raise
        except Exception as e:
            raise AssertionError(
                say("{what} raised {error} on the grader's check inputs", what=what, error=type(e).__name__)
            ) from None
        floats = [t for t in tensors_in([value]) if t.is_floating_point()]
        nan = (isinstance(value, float) and value != value) or any(t.isnan().any() for t in floats)
        if value is None or nan:
            raise AssertionError(
                say("{what} gives None or NaN: answers that agree with it cannot count", what=what)
            )
        values.append(value)
    if any(same_result(value, values[0]) for value in values[1:]):
        raise AssertionError(
            say(
                "{what} gives the same value for inputs whose answers differ: it does not compute with its "
                "inputs, so answers that agree with it do not count",
                what=what,
            )
        )
    return values


def attends_without_loops(fn: Any, small: tuple, large: tuple, what: str, h_at: int) -> tuple[Any, Any]:
    """How an attention answer computes, not its exact values (issue 27's partial credit): a slip in the
    formula keeps a test built on this, a loop or a function that computes nothing does not.
    ``fn(*args)`` returns (context (B, T, d_h), weights (B, T, S)) for decoder states ``args[0]`` (B, T, d)
    and encoder states ``args[h_at]`` (B, S, d_h). Checks: the contract (``call``), no Python loop
    (``no_python_loops`` on ``small`` and ``large``), and on ``large`` the right shapes and dtype, nonnegative
    weights that respond to the decoder states (``responsive``), the context the weights times H.
    Returns (context, weights) on ``large``."""
    call(fn, *large, what=what)
    no_python_loops(fn, small, large)
    moved = (torch.roll(large[0], 1, dims=1) + 0.5, *large[1:])  # other decoder states, other weights
    got, _ = responsive(
        fn, [large, moved], say("{what} (its weights, on two sets of decoder states)", what=what)
    )
    if not (isinstance(got, tuple) and len(got) == 2):
        raise AssertionError(
            say(
                "{what} should return a tuple (context, weights), got {type}",
                what=what,
                type=type(got).__name__,
            )
        )
    context, weights = got
    Q, H = large[0], large[h_at]
    tensor(weights, say("{what}: weights", what=what), shape=(*Q.shape[:2], H.shape[1]), dtype=Q.dtype)
    tensor(context, say("{what}: context", what=what), shape=(*Q.shape[:2], H.shape[2]), dtype=Q.dtype)
    if not bool((weights >= 0).all()):
        raise AssertionError(say("{what}: the weights must be nonnegative (a softmax)", what=what))
    close(context, weights @ H, say("{what}: context", what=what), hint="the context is the weights times H")
    return context, weights
