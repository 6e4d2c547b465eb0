"""The grader's end of a learner's sandbox: the ``Sandbox`` handle and budgets (the proxies: ``proxies``).

The grader never runs learner code in its own process: a hidden test calls ``attention(q, H, lengths)`` on a
proxy, the call travels to a sandbox process that executed the notebook's code cells (``child``), and only
plain data comes back (``codec``), rebuilt with the grader's own torch. A submission that rebinds
``torch.allclose``, returns a tensor subclass, redefines ``grader`` or writes to files cannot change a
verdict; at worst it forges numbers, which means computing the right ones.

Budgets are CPU time, not wall clock: a submission is charged the CPU of its own sandbox (all its processes,
read from its cgroup) and of the grader's work for it (the CPU time of the thread that grades it: decoding
its replies, running its tests), never the time a classmate graded beside it makes it wait. Idle time (code
that sleeps) is bounded too (``Budget``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from typing import Any

from attnlib.grading.messages import language, say, tr
from attnlib_grader import child, codec, isolation, zygote
from attnlib_grader.codec import Opaque, SandboxError  # noqa: F401 - the tests' names for them
from attnlib_grader.isolation import Isolation

MEMORY_LIMIT_MB, MAX_PROCESSES, WALL_FACTOR = child.MEMORY_LIMIT_MB, child.MAX_PROCESSES, child.WALL_FACTOR
IDLE_SHARE = 0.01  # below this share of one CPU (sandbox and grading thread together) a second counts as idle
GRACE_CPU = 1.0  # CPU seconds past its limit before the grader kills a call that did not stop itself


class Meter:
    """The CPU seconds charged to one submission so far: its grading thread's and its sandboxes'. Read it
    from the thread that grades the submission (``time.thread_time`` is per thread)."""

    def __init__(self, thread_clock: Callable[[], float] = time.thread_time) -> None:
        self.thread_clock, self.thread_start = thread_clock, thread_clock()
        self.sandboxes_done = 0.0  # the CPU of sandboxes already killed
        self.sandbox: Callable[[], float] | None = None  # the CPU of the running one

    def __call__(self) -> float:
        running = self.sandbox() if self.sandbox is not None else 0.0
        return self.thread_clock() - self.thread_start + self.sandboxes_done + running


class Budget:
    """``seconds`` of CPU time (``meter``) from now. Code that sleeps uses no CPU: it may be idle (sandbox and
    grading thread under 1% of a CPU, over windows of a second) as many seconds as the budget has, and never
    take more than ``WALL_FACTOR`` times it in wall time. A machine busy with other work slows an honest
    submission down but does not make it idle."""

    def __init__(self, seconds: float, meter: Meter, what: str | None = None) -> None:
        self.seconds, self.meter = float(seconds), meter
        self.what = what or tr("the question's time limit")  # in the grading thread's language
        self.start = meter()
        self.wall_deadline = time.monotonic() + WALL_FACTOR * self.seconds
        self.idle, self._window = 0.0, (time.monotonic(), self.start)

    def used(self) -> float:
        """CPU seconds used since the budget started; counts idle time too (call it often while waiting)."""
        cpu, now = self.meter(), time.monotonic()
        since, cpu_then = self._window
        if now - since >= 1.0:
            if cpu - cpu_then < IDLE_SHARE * (now - since):
                self.idle += now - since
            self._window = (now, cpu)
        return cpu - self.start

    def left(self) -> tuple[float, float]:
        """(CPU seconds, wall seconds) left; TimeoutError when the budget is used up."""
        cpu = self.seconds - self.used()
        wall = min(self.seconds - self.idle, self.wall_deadline - time.monotonic())
        if cpu <= 0 or wall <= 0:
            raise TimeoutError(say("{what} is used up", what=self.what))
        return cpu, self.wall_deadline - time.monotonic()

    def remaining(self) -> float:
        return self.left()[0]

    def check(self, grace: float = 0.0) -> None:
        """TimeoutError once ``grace`` seconds past the budget (CPU, idle or wall time)."""
        over = self.used() - self.seconds
        if over > grace or self.idle - self.seconds > grace or time.monotonic() > self.wall_deadline + grace:
            raise TimeoutError(say("{what} is used up", what=self.what))


# What the grader's own side imports for the first hidden test it runs (the tests' otter-grader runner pulls
# nbconvert, pandas and 700 modules in all: 0.7 s of CPU), imported while the zygote starts on the other core.
GRADER_SIDE = ("otter.test_files", "attnlib.grading.checks")


def _import_grader_side() -> None:
    import importlib

    for name in GRADER_SIDE:
        with contextlib.suppress(Exception):  # if one is missing, the self-check says so in its own words
            importlib.import_module(name)


def warm_up(timeout: float = 600.0, switch_off: list[str] = (), operators: list[str] = ()) -> None:
    """Start the zygote of a set's switch-off before any budget runs (torch's import: seconds on a busy
    machine); meanwhile import what this side needs, which no budget then pays for."""
    zygote.zygote(switch_off, operators).start(timeout, meanwhile=_import_grader_side)


class Sandbox:
    """One learner's notebook code running in its own process, called through ``LearnerFunction`` proxies."""

    KEYS = "names switch_off operators cell_time_limit memory_limit_mb max_processes cpu_limit".split()
    # the child's own messages (a cell that failed, a switched-off call) are in the submission's language
    _last_cpu, _read_at = 0.0, -1.0  # the running sandbox's CPU as last read, and when (start() resets them)

    def __init__(self, cells, config, workdir, isolation=None, budget: Budget | None = None) -> None:
        self.cells, self.workdir = cells, workdir
        self.isolation = isolation if isolation is not None else Isolation(isolated=False)
        self.config = {k: config[k] for k in self.KEYS if k in config}
        self.config["isolated"], self.config["language"] = self.isolation.isolated, language()
        self.config["own_user"] = self.isolation.run_as is not None  # child._end_strays
        limit = float(config.get("submission_time_limit", 120))
        self.budget = budget or Budget(limit, Meter(), tr("the budget"))
        self.meter = self.budget.meter
        self.box, self.cgroups, self.pid, self.sock = None, [], None, None
        self.names: dict[str, Any] = {}
        self.values: tuple[Any, bytes] = ({}, b"")  # the names' values as sent: decoded afresh per question
        self.errors: list[str] = []
        self.reached: set[str] = set()
        self.last_mutated: list[int] = []  # the arguments the last call changed in place
        self.last_repeatable = True  # False when the last call, made twice, gave two different results

    @property
    def alive(self) -> bool:
        return self.sock is not None

    def cpu_seconds(self, now: bool = False) -> float:
        """The sandbox's CPU so far, read at most every 20 ms unless ``now`` (no cgroup: a scan)."""
        if now or time.monotonic() - self._read_at >= 0.02:
            used = isolation.Cgroups.cpu_seconds(self.cgroups) if self.cgroups else None
            if used is None:
                used = isolation.processes_cpu_seconds(self.pid, self.box.ns_pid if self.box else None)
            self._last_cpu, self._read_at = max(self._last_cpu, used), time.monotonic()
        return self._last_cpu

    def start(self) -> None:
        self.budget.left()
        ours, theirs = socket.socketpair()
        try:
            ns_pid = None
            if self.isolation.isolated:
                self.box = isolation.Box(self.isolation.filesystem)
                ns_pid, self.cgroups = self.box.ns_pid, self.isolation.cgroups_for(self.config)
            run_as, workdir = self.isolation.run_as, None if ns_pid else self.workdir
            origin = zygote.zygote(self.config.get("switch_off", ()), self.config.get("operators", ()))
            self.pid = origin.fork(theirs.fileno(), ns_pid, workdir, self.cgroups, run_as)
        except isolation.IsolationError as e:
            ours.close()
            self.kill()
            raise SandboxError(str(e)) from None
        finally:
            theirs.close()
        self.sock, self._last_cpu, self._read_at = ours, 0.0, -1.0
        self.meter.sandbox = self.cpu_seconds
        try:
            codec.send_frame(self.sock, codec.pack({"cells": self.cells, "config": self.config}))
        except (OSError, ValueError):
            self.kill()
            raise SandboxError(tr("the notebook's process stopped before it got its cells")) from None
        what = tr("running the notebook's cells")
        reply, raw = self._receive(self.budget.left()[1], what, (self.budget,))
        names = reply.get("names")
        self.names = {
            str(k): v for k, v in (names.items() if isinstance(names, dict) else []) if isinstance(v, dict)
        }
        self.values = (reply.get("values"), raw)
        errors = reply.get("errors") if isinstance(reply.get("errors"), list) else []
        large = tr("the notebook's values were larger than the grader accepts")  # too large to send
        self.errors = [str(e)[:400] for e in errors][:50] + ([large] if reply.get("too_large") else [])

    def value_names(self) -> dict[str, Any]:
        """The names' values, decoded afresh (a test that changes one changes no other question's)."""
        try:
            values = codec.decode(*self.values) if self.values[0] is not None else {}
        except SandboxError:
            values = {}
        return values if isinstance(values, dict) else {}

    def _receive(self, wall: float, what: str, budgets: tuple[Budget, ...]) -> tuple[dict, bytes]:
        def check() -> None:
            for budget in budgets:
                budget.check(GRACE_CPU)

        try:
            tree, raw = codec.read_frame(self.sock, time.monotonic() + wall + 2.0, check)
            reply = codec.parse_tree(tree)
            if not isinstance(reply, dict):
                raise SandboxError(tr("malformed reply"))
        except TimeoutError as e:
            self.kill()
            raise TimeoutError(
                str(e) or say("{what} did not finish within its time limit", what=what)
            ) from None
        except (SandboxError, EOFError, OSError, ValueError) as e:
            self.kill()
            raise SandboxError(
                say(
                    "the notebook's process stopped or sent a malformed reply while {what} ({error})",
                    what=what,
                    error=type(e).__name__,
                )
            ) from None
        reached = reply.get("reached")
        if isinstance(reached, list):
            self.reached.update(str(r)[:200] for r in reached[:50])
        return reply, raw

    def call(
        self, name, args, kwargs, budget: Budget | float, traced=False, fresh=False, repeat=False
    ) -> Any:
        """``name(*args, **kwargs)`` in the sandbox within ``budget`` (and the submission's); with ``traced``,
        ``(value, report)`` as ``checks.run_traced`` gives them (the report checked to be plain counts); with
        ``fresh``, made by a copy of the learner's process that ends with the call (no state carries over to
        later calls); with ``repeat``, made twice (on fresh copies of the inputs) and ``last_repeatable`` says
        whether the results were the same. ``last_mutated`` lists the arguments the call changed in place."""
        if not self.alive:
            raise SandboxError(tr("the notebook's process was stopped after an earlier failure"))
        budget = budget if isinstance(budget, Budget) else Budget(budget, self.meter)
        (cpu, wall), (cpu_all, wall_all) = budget.left(), self.budget.left()
        request = {"name": name, "cpu": min(cpu, cpu_all), "wall": min(wall, wall_all)}
        request.update(traced=traced, fresh=fresh, repeat=repeat)
        try:
            codec.send_frame(self.sock, codec.pack(request, {"args": list(args), "kwargs": dict(kwargs)}))
        except (OSError, ValueError):
            self.kill()
            raise SandboxError(tr("the notebook's process has stopped")) from None
        what = say("calling {name}", name=name)
        reply, raw = self._receive(request["wall"], what, (budget, self.budget))
        if reply.get("timeout") or reply.get("lost"):
            self.kill()  # its state may be broken; the next question starts a fresh process
            if reply.get("lost"):
                raise SandboxError(say("{name} stopped the notebook's process", name=name))
            raise TimeoutError(say("{name} did not return within the question's time limit", name=name))
        if reply.get("ok") is not True:
            raise SandboxError(say("{name} raised {error}", name=name, error=str(reply.get("error"))[:500]))
        if reply.get("too_large"):
            raise SandboxError(say("{name} returned a value larger than the grader accepts", name=name))
        value = codec.decode(reply.get("value"), raw)
        mutated = reply.get("mutated")
        self.last_mutated = [i for i in mutated if type(i) is int][:50] if isinstance(mutated, list) else []
        self.last_repeatable = reply.get("repeatable") is not False
        return (value, codec.check_report(reply.get("report"), name)) if traced else value

    @contextlib.contextmanager
    def session(self, budget: Budget | float) -> Iterator[None]:
        """The calls inside the block are made by a copy of the learner's process that ends with the block
        (``child._session``): its state dies with it, and a ``fresh`` call after the block is made by a copy
        of the process as it was before the block (a replay that never saw the block's calls)."""
        budget = budget if isinstance(budget, Budget) else Budget(budget, self.meter)
        self._control({"session": "begin"}, budget)
        try:
            yield
        finally:
            if self.alive:
                self._control({"session": "end"}, budget)

    def _control(self, request: dict[str, Any], budget: Budget) -> None:
        if not self.alive:
            raise SandboxError(tr("the notebook's process was stopped after an earlier failure"))
        try:
            codec.send_frame(self.sock, codec.pack(request))
        except (OSError, ValueError):
            self.kill()
            raise SandboxError(tr("the notebook's process has stopped")) from None
        what = tr("starting or ending a session")
        reply, _ = self._receive(budget.left()[1], what, (budget, self.budget))
        if reply.get("ok") is not True:
            self.kill()  # the grader's sessions nest: a refused one leaves the process in an unknown state
            raise SandboxError(say("the notebook's process {error}", error=str(reply.get("error"))[:200]))

    def kill(self) -> None:
        if self.sock is not None:
            self.meter.sandboxes_done += self.cpu_seconds(now=True)
            self.meter.sandbox = None
        if self.box is not None:
            self.box.kill()  # the whole sandbox: every process the learner started dies with it
        elif self.pid is not None:
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            if self.isolation.run_as is not None:  # and what left the session (no PID namespace here)
                zygote.end_user(self.isolation.run_as)
        if self.pid is not None:
            with contextlib.suppress(OSError):
                os.kill(self.pid, signal.SIGKILL)
        if self.sock is not None:
            self.sock.close()
        if self.cgroups:
            isolation.Cgroups.remove(self.cgroups)
        self.box = self.pid = self.sock = None
        self.cgroups = []
