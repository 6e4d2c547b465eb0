"""The grader's end of a learner-written test: the implementation under test stays here.

A "write the test that catches the bug" question runs the learner's ``test_x(x)`` in the sandbox against a
right implementation and against mutants (``attnlib.grading.learner_tests``). The implementations never enter
the sandbox: its test receives a callable whose every call comes back over the socket as a request, which is
computed here, in the grading thread (its CPU charged to the submission), and answered with plain data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from attnlib.grading.messages import say, tr
from attnlib_grader import codec
from attnlib_grader.codec import SandboxError

MAX_CALLBACKS = 200  # calls a learner's test may make of the implementation under test, in one run
CALLBACK_NUMBERS = 10_000  # numbers in the tensors of one such call (the grader computes it)


def run(sandbox: Any, name: str, implementation: Callable[..., Any], budget: Any) -> Any:
    """Run the learner's test function ``name`` once, in a fresh copy of the learner's process, against
    ``implementation``: a ``learner_tests.TestRun`` (passed, error, the switched-off names it reached, the
    attributes of the implementation it read, how many calls it made)."""
    from attnlib.grading.learner_tests import TestRun

    if not sandbox.alive:
        raise SandboxError(tr("the notebook's process was stopped after an earlier failure"))
    (cpu, wall), (cpu_all, wall_all) = budget.left(), sandbox.budget.left()
    request = {"name": name, "cpu": min(cpu, cpu_all), "wall": min(wall, wall_all), "under_test": True}
    request["fresh"] = True  # no state carries from one run to the next (a test cannot count its runs)
    _send(sandbox, codec.pack(request, {}))
    for _ in range(MAX_CALLBACKS + 1):
        what = say("running {name}", name=name)
        reply, raw = sandbox._receive(request["wall"], what, (budget, sandbox.budget))
        if reply.get("callback") is not True:
            break
        _send(sandbox, _answer(sandbox, implementation, reply, raw))
    else:
        sandbox.kill()
        raise SandboxError(
            say(
                "{name} called the implementation under test more than {most} times",
                name=name,
                most=MAX_CALLBACKS,
            )
        )
    if reply.get("timeout"):
        sandbox.kill()
        raise TimeoutError(say("{name} did not return within the question's time limit", name=name))
    found = reply.get("run")
    if reply.get("ok") is not True or not isinstance(found, dict):
        raise SandboxError(
            say("{name} could not be run: {error}", name=name, error=str(reply.get("error"))[:500])
        )
    lists = [found.get(k) if isinstance(found.get(k), list) else [] for k in ("test_reached", "read")]
    reached, read = ([str(v)[:100] for v in items[:20]] for items in lists)
    passed, calls = found.get("passed") is True, found.get("calls")
    error = "" if passed else str(found.get("error"))[:500]
    return TestRun(passed, error, reached, read, calls if type(calls) is int else 0)


def _answer(sandbox: Any, implementation: Callable[..., Any], request: dict[str, Any], raw: bytes) -> bytes:
    """The reply frame to one call of the implementation under test: its value, or its error."""
    import torch

    try:
        found = codec.decode_values(request, raw, ("args", "kwargs"))
    except SandboxError:
        sandbox.kill()
        raise
    args, kwargs = list(found["args"]), found["kwargs"]
    try:
        if not isinstance(kwargs, dict):
            raise TypeError(tr("malformed keyword arguments"))
        numbers = sum(x.numel() for x in [*args, *kwargs.values()] if isinstance(x, torch.Tensor))
        if numbers > CALLBACK_NUMBERS:
            raise ValueError(
                say(
                    "the implementation under test takes at most {most} numbers a call", most=CALLBACK_NUMBERS
                )
            )
        return codec.pack({"ok": True}, {"value": implementation(*args, **kwargs)})
    except Exception as e:  # noqa: BLE001 - wrong arguments: the learner's test gets the error
        return codec.pack({"ok": False, "error": f"{type(e).__name__}: {str(e)[:300]}"})


def _send(sandbox: Any, frame: bytes) -> None:
    try:
        codec.send_frame(sandbox.sock, frame)
    except (OSError, ValueError):
        sandbox.kill()
        raise SandboxError(tr("the notebook's process has stopped")) from None
