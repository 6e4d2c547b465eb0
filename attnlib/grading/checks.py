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


@contextlib.contextmanager
def hidden_case(hidden: bool = True) -> Iterator[None]:
    """In the grader, while a hidden case runs: the checks' messages say what is wrong in words and show no
    number computed from the expected values (one graded attempt must not tell a resubmission the answers)."""
    before = getattr(_CASE, "hidden", False)
    _CASE.hidden = hidden
    try:
        yield
    finally:
        _CASE.hidden = before


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


def answered(value: Any, what: str) -> Any:
    """``value``, a learner's name or a function's result, unless the question is still unanswered: None (a
    name left ``...`` in the notebook, or a function whose body is ``...``) or ``...`` itself fail with
    "replace the `...`", before a test goes on to read the value."""
    if value is None or value is Ellipsis:
        raise AssertionError(f"{what} is None: replace the `...` by your code")
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
    if problem == "has wrong values":
        problem = "has the right shape but wrong values" if shaped else "is wrong"
        if not in_hidden_case():
            problem += f" (largest error {largest_error(got, expected):.3g})"
    raise AssertionError(f"{what} {problem}. {hint}".strip())


def between(value: Any, low: float, high: float, what: str, hint: str = "") -> None:
    """``low <= value <= high`` for a finite number: NaN lies in no interval (``value > high`` would let it
    pass)."""
    if not within(value, low, high):
        shown = "" if in_hidden_case() else f", got {value!r}"
        raise AssertionError(f"{what} should lie between {low:g} and {high:g}{shown}. {hint}".strip())


def source_of(fn: Any) -> str:
    """The source code of a learner's function (in the grader, read from the submitted notebook)."""
    source = getattr(fn, "__source__", None)
    if source is None:
        try:
            source = inspect.getsource(fn)
        except (TypeError, OSError):
            raise AssertionError(f"could not read the source code of {getattr(fn, '__name__', fn)}") from None
    return textwrap.dedent(source)


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
    that checks the same on every call, wherever a test calls it. None, the value of an unanswered question
    (its body still ``...``), fails with "replace the `...`", whatever the test goes on to check."""
    if fn is None:
        raise AssertionError(f"{what.split('(')[0]} is not defined: run the cell that defines it")
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
        raise AssertionError(f"{what} raised {type(e).__name__}: {str(e)[:300]}. {hint}".strip()) from None
    if value is None:  # an unanswered question: its body is still `...`, or the result is not returned
        raise AssertionError(f"{what} is None: replace the `...` by your code and `return` the result")
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
            raise AssertionError(f"{what} raised {type(e).__name__} on the grader's check inputs") from None
        floats = [t for t in tensors_in([value]) if t.is_floating_point()]
        nan = (isinstance(value, float) and value != value) or any(t.isnan().any() for t in floats)
        if value is None or nan:
            raise AssertionError(f"{what} gives None or NaN: answers that agree with it cannot count")
        values.append(value)
    if any(same_result(value, values[0]) for value in values[1:]):
        raise AssertionError(
            f"{what} gives the same value for inputs whose answers differ: it does not compute with its "
            "inputs, so answers that agree with it do not count"
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
    got, _ = responsive(fn, [large, moved], f"{what} (its weights, on two sets of decoder states)")
    if not (isinstance(got, tuple) and len(got) == 2):
        raise AssertionError(f"{what} should return a tuple (context, weights), got {type(got).__name__}")
    context, weights = got
    Q, H = large[0], large[h_at]
    tensor(weights, f"{what}: weights", shape=(*Q.shape[:2], H.shape[1]), dtype=Q.dtype)
    tensor(context, f"{what}: context", shape=(*Q.shape[:2], H.shape[2]), dtype=Q.dtype)
    if not bool((weights >= 0).all()):
        raise AssertionError(f"{what}: the weights must be nonnegative (a softmax)")
    close(context, weights @ H, f"{what}: context", hint="the context is the weights times H")
    return context, weights


def informative_weights(weights: Any, what: str, mask: Any = None) -> torch.Tensor:
    """Attention maps that an answer may be read off (issue 27 item 4): ``weights`` (..., S) are
    distributions, nonnegative and summing to 1 in every row with a real position (``mask`` (..., S), True =
    real; rows with none are not read; weight on padding is a slip, not a degenerate map), and they are not
    degenerate: not uniform over the real positions in every row, and not all on one and the same position in
    every row. (A map whose rows are all alike but spread, as a score without its tanh gives, is a slip of the
    earlier answer, not a degenerate one: it passes.) A later answer agreeing with the learner's own earlier
    function earns its credit only from maps that pass this; otherwise it is graded against the reference.
    Returns the weights as a float64 tensor."""
    w = torch.as_tensor(weights).detach().to(torch.float64)
    real = torch.ones_like(w, dtype=torch.bool) if mask is None else torch.as_tensor(mask).to(torch.bool)
    rows, real = w.reshape(-1, w.shape[-1]), real.expand_as(w).reshape(-1, w.shape[-1])
    used = real.any(-1)
    if not bool(used.any()) or not bool(torch.isfinite(rows).all()) or bool((rows < 0).any()):
        raise AssertionError(f"{what}: the weights are not finite nonnegative numbers")
    if not near(rows[used].sum(-1), torch.ones(int(used.sum()), dtype=torch.float64), atol=1e-4, rtol=0):
        raise AssertionError(f"{what}: the weights of a row do not sum to 1")
    rows, real = rows[used], real[used]
    uniform = real / real.sum(-1, keepdim=True)
    if near(rows, uniform, atol=1e-4, rtol=0):
        raise AssertionError(f"{what}: the weights are uniform over the real positions in every row")
    one_place = bool((rows.argmax(-1) == rows[0].argmax()).all()) and bool((rows.amax(-1) > 0.99).all())
    if rows.shape[-1] > 1 and one_place:
        raise AssertionError(f"{what}: every row puts all its weight on one and the same position")
    return w


def order_keeping_ties(tops: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """A random order of the n rows of ``tops`` (n, m), bool, in which rows that are both True in one column
    keep their order. Shuffling a map's rows in this order, with ``tops`` marking each column's largest
    weights, changes no argmax over the rows: an argmax breaks a tie by order, and tied rows keep theirs."""
    n = tops.shape[0]
    ties = (tops.to(torch.int64) @ tops.T.to(torch.int64)) > 0  # (n, n): rows tied in some column
    waiting = torch.triu(ties, 1).sum(0).tolist()  # row j waits for the rows before it that it ties with
    ready, order = [j for j in range(n) if waiting[j] == 0], []
    while ready:
        i = ready.pop(int(torch.randint(len(ready), (1,), generator=generator)))
        order.append(i)
        for j in range(i + 1, n):
            if ties[i, j]:
                waiting[j] -= 1
                if waiting[j] == 0:
                    ready.append(j)
    return torch.tensor(order, dtype=torch.long)
