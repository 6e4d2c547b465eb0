"""Tests the learner writes: run a learner's test function against an implementation it cannot look into.

A "write the test that catches the bug" question asks for ``def test_x(x): ...``, a function that takes the
implementation under test and raises (an ``assert`` that fails) when it is wrong. The grader runs it against
the reference (it must pass) and against hidden mutants, each a real published attention bug (it must fail).
The learner's test gets an ``UnderTest``: a callable that answers calls and nothing else. In the teacher's
grader each call travels back to the grader, which computes it (the mutants never enter the sandbox); reading
any attribute of it (``inspect.getsource``, ``__module__``, ``__code__``) is recorded and scores 0.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from attnlib.grading.messages import say

READS: list[str] = []  # the attributes a learner's test asked an UnderTest for (in this process)
# what the message of a switched-off function says (checks.SWITCHED_OFF), in each language
SWITCHED_OFF_MARK = "switched off in this test"
_HARMLESS = frozenset({"__class__"})  # isinstance() asks for it; it tells nothing about the implementation


class UnderTest:
    """The implementation under test, as a learner's test receives it: it can be called, nothing more."""

    __slots__ = ("_call",)

    def __init__(self, call: Callable[..., Any]) -> None:
        object.__setattr__(self, "_call", call)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return object.__getattribute__(self, "_call")(*args, **kwargs)

    def __getattribute__(self, name: str) -> Any:
        if name in _HARMLESS:
            return object.__getattribute__(self, name)
        READS.append(str(name)[:100])
        raise AttributeError(
            say("the implementation under test can only be called: your test may not read it")
        )

    def __setattr__(self, name: str, value: Any) -> None:
        READS.append(str(name)[:100])
        raise AttributeError(say("the implementation under test can only be called"))

    def __dir__(self) -> list[str]:
        READS.append("__dir__")
        return []

    def __repr__(self) -> str:
        return say("<the implementation under test>")


@dataclass
class TestRun:
    """What one run of a learner's test gave: whether it passed, and what it did that it must not."""

    passed: bool
    error: str = ""  # the exception it raised, when it failed
    reached: list[str] = field(default_factory=list)  # switched-off names it called
    read: list[str] = field(default_factory=list)  # attributes of the implementation it read
    calls: int = 0  # how many times it called the implementation


@contextlib.contextmanager
def _own_answers_off(test: Any, own: tuple[str, ...]) -> Any:
    """The learner's own answers (``own``, names in the notebook) switched off in the test's globals."""
    space = getattr(test, "__globals__", None)
    saved = {n: space[n] for n in own if isinstance(space, dict) and callable(space.get(n))}

    def off(name: str) -> Callable[..., Any]:
        def stand_in(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError(
                say(
                    "your {name} is switched off in this test: decide from what the "
                    "implementation under test returns",
                    name=name,
                )
            )

        return stand_in

    if saved:
        space.update({n: off(n) for n in saved})
    try:
        yield
    finally:
        if saved:
            space.update(saved)


def run_here(
    test: Callable[..., Any],
    implementation: Callable[..., Any],
    off: tuple[str, ...] = (),
    own: tuple[str, ...] = (),
) -> TestRun:
    """Run ``test(UnderTest(implementation))`` in this process (the learner's notebook: the public checks),
    with the attnlib functions ``off`` and the learner's own answers ``own`` switched off while the test
    runs, and not while the implementation computes its answer."""
    from attnlib.grading import checks

    switched = contextlib.ExitStack()

    calls = [0]

    def call(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        paused = switched.pop_all()  # the implementation may use what the learner's test may not
        paused.close()
        try:
            return implementation(*args, **kwargs)
        finally:
            switched.enter_context(checks.switched_off(*off))

    del READS[:]
    with switched, _own_answers_off(test, own):
        switched.enter_context(checks.switched_off(*off))
        try:
            test(UnderTest(call))
            passed, error = True, ""
        except Exception as e:  # a failing assert, or any error: the test did not pass
            passed, error = False, f"{type(e).__name__}: {str(e)[:300]}"
    switched_off = any(mark in error for mark in (SWITCHED_OFF_MARK, say(SWITCHED_OFF_MARK)))
    reached = [error.split(":")[1].strip()] if switched_off else []
    return TestRun(passed, error, reached, sorted(set(READS)), calls[0])


def run_test(
    test: Any,
    implementation: Callable[..., Any],
    what: str,
    off: tuple[str, ...] = (),
    own: tuple[str, ...] = (),
) -> TestRun:
    """The learner's ``test`` run against ``implementation``: in the grader through the sandbox proxy (each
    call of the implementation answered on the grader's side, in a fresh copy of the learner's process), in
    the notebook here. A test that calls a switched-off implementation or reads the one under test fails
    the check, whatever it found."""
    if test is None:
        raise AssertionError(
            say("{name} is not defined: run the cell that defines it", name=what.split("(")[0])
        )
    runner = getattr(test, "run_test", None)
    run = runner(implementation) if runner is not None else run_here(test, implementation, off, own)
    if run.read:
        raise AssertionError(
            say(
                "{what} reads the implementation under test ({names}): a test may only call "
                "it and check what it returns. This scores 0.",
                what=what,
                names=", ".join(run.read[:3]),
            )
        )
    if run.reached:
        raise AssertionError(
            say(
                "{what} calls an implementation that is switched off ({names}): a test must decide from "
                "what the implementation under test returns, not compare it with the reference or your own "
                "answers. This scores 0.",
                what=what,
                names=", ".join(run.reached[:3]),
            )
        )
    return run


def passes(
    test: Any,
    implementation: Callable[..., Any],
    what: str,
    off: tuple[str, ...] = (),
    own: tuple[str, ...] = (),
) -> None:
    """The learner's test passes a right implementation: a test that fails it blames right code. ``off``:
    the attnlib functions switched off while the test runs in the notebook; ``own``: the learner's answers
    switched off there (in the grader the sandbox switches both off)."""
    run = run_test(test, implementation, what, off, own)
    if run.passed and not run.calls:
        raise AssertionError(
            say("{what} never calls the implementation it is given: replace the `...` by a test", what=what)
        )
    if not run.passed:
        raise AssertionError(
            say(
                "{what} fails against a right implementation ({error}): check what your test expects; "
                "a test that fails right code catches nothing",
                what=what,
                error=run.error,
            )
        )


def catches(
    test: Any,
    right: Callable[..., Any],
    wrong: Callable[..., Any],
    what: str,
    bug: str,
    off: tuple[str, ...] = (),
    own: tuple[str, ...] = (),
) -> None:
    """The learner's test passes the right implementation and fails the wrong one (``bug`` says, in words,
    what kind of mistake the wrong one makes; a hidden test does not say it: which bugs the hidden tests plant
    stays hidden, from the feedback too, so that a resubmission cannot guard against exactly those)."""
    from attnlib.grading.checks import in_hidden_case

    passes(test, right, what, off, own)
    if run_test(test, wrong, what, off, own).passed:
        if in_hidden_case():
            raise AssertionError(
                say(
                    "{what} lets one of the hidden bugs pass: guard against every bug of the kind the "
                    "question names",
                    what=what,
                )
            )
        raise AssertionError(
            say("{what} lets {bug} pass: add a check that such an implementation fails", what=what, bug=bug)
        )


__all__ = ["READS", "TestRun", "UnderTest", "catches", "passes", "run_here", "run_test"]
