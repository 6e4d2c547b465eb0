"""What a hidden test holds in place of a learner's function: a proxy whose every call runs in the sandbox.

The grader's side of the trust boundary, above the socket's end (``sandbox.Sandbox``): each call travels to
the learner's process and only plain data comes back; every plain call is held to ``checks.contract``.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from attnlib_grader import under_test
from attnlib_grader.sandbox import Budget, Sandbox

# checks.contract repeats this many first calls of a learner function per question (kept state shows at once)
REPEATED_CALLS = 6


class LearnerFunction:
    """Stands for a learner's function in a hidden test: each call runs in the sandbox within the budget, and
    every plain call is held to ``checks.contract`` (no argument changed in place, the same result when made
    again, the floating dtype of the inputs kept), except for the rules the set exempts this name from."""

    checks_contract = True  # checks.call leaves the contract to this proxy

    def __init__(self, sandbox: Sandbox, name: str, budget: Budget, source=None, exempt=()) -> None:
        self.sandbox, self.__name__, self.budget = sandbox, name, budget
        self.__source__ = source  # the learner's code of this function, read from the notebook by the grader
        self.exempt = tuple(exempt)
        self.repeats_left = REPEATED_CALLS  # the contract's second call, on the first calls only

    def _repeat(self) -> bool:
        if "repeat" in self.exempt or self.repeats_left <= 0:
            return False
        self.repeats_left -= 1
        return True

    def _held(self, args: tuple, value: Any) -> Any:
        from attnlib.grading import checks

        if "mutation" not in self.exempt and self.sandbox.last_mutated:
            raise AssertionError(checks.mutation_message(self.__name__, self.sandbox.last_mutated))
        if "repeat" not in self.exempt and not self.sandbox.last_repeatable:
            raise AssertionError(checks.repeat_message(self.__name__))
        message = "" if "dtype" in self.exempt else checks.dtype_message(args, value, self.__name__)
        if message:
            raise AssertionError(message)
        return value

    def _call(self, args: tuple, kwargs: dict, **how: Any) -> Any:
        return self.sandbox.call(self.__name__, args, kwargs, self.budget, **how)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._held(args, self._call(args, kwargs, repeat=self._repeat()))

    def fresh(self, *args: Any) -> Any:
        """The value of a call made by a copy of the learner's process: the same state for every such call."""
        return self._held(args, self._call(args, {}, fresh=True, repeat=self._repeat()))

    def session(self) -> AbstractContextManager[None]:
        """A block whose calls a copy of the learner's process makes and takes with it when the block ends:
        ``fresh`` calls after the block replay them from the state before it (``Sandbox.session``)."""
        return self.sandbox.session(self.budget)

    def mutations(self, *args: Any) -> tuple[Any, list[int]]:
        """The value and which arguments the call changed in place, compared in the sandbox."""
        value = self._call(args, {})
        return value, list(self.sandbox.last_mutated)

    def run_test(self, implementation: Callable[..., Any]) -> Any:
        """This learner's test function run against ``implementation``, kept here (``under_test.run``)."""
        return under_test.run(self.sandbox, self.__name__, implementation, self.budget)

    def traced(self, *args: Any) -> tuple[Any, dict[str, Any]]:
        """The value and what ran (``checks.run_traced``), measured in the sandbox."""
        return self._call(args, {}, traced=True)

    def __repr__(self) -> str:
        from attnlib.grading.messages import say

        return say("<learner function {name}>", name=self.__name__)
