"""What runs inside a sandbox: the learner's process, serving the grader's calls over one socket.

Runs in a fresh fork of the zygote, already inside its bubblewrap sandbox (``isolation._enter``), and never
imports the grader's side. It receives the notebook's code cells, caps its own resources, switches off what
the set forbids, runs the cells (each under a CPU-time and a wall-clock limit), reports the names the tests
use, then answers calls until the grader hangs up. Only plain data goes back (``codec``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import time
import types
from typing import Any

from attnlib.grading.messages import LANGUAGES, catalogue, in_language, say, tr
from attnlib_grader import codec, switching

MEMORY_LIMIT_MB = 4096  # per sandbox process, unless a set's config says "memory_limit_mb"
MAX_PROCESSES = 4  # tasks (processes and threads) the learner's code may add in its sandbox
WALL_FACTOR = 30.0  # a cell or call never takes more than this many times its CPU limit in wall time


class _TimeLimit(BaseException):
    """Raised inside the sandbox when a cell or a call runs past its CPU or wall-clock limit."""


def _on_limit(signum, frame):
    raise _TimeLimit(tr("time limit exceeded"))


class _Limit:
    """A CPU-time limit (ITIMER_PROF: this process's own CPU) and a wall-clock backstop (ITIMER_REAL, for
    code that sleeps or waits) on the code inside the block."""

    def __init__(self, cpu: float, wall: float) -> None:
        self.cpu, self.wall = max(cpu, 0.001), max(wall, 0.001)

    def __enter__(self) -> None:
        signal.setitimer(signal.ITIMER_PROF, self.cpu)
        signal.setitimer(signal.ITIMER_REAL, self.wall)

    def __exit__(self, *exc: Any) -> None:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)


class _Sink:
    """Swallows everything a learner prints (megabytes of output cost nothing)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


class _StubGrader:
    """Replaces otter's Notebook in the sandbox: grader.check(...) does nothing while grading."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: None


def runnable_source(source: str) -> str:
    """Comment out IPython magics and shell escapes (``%pip``, ``!ls``): plain Python cannot run them."""
    return "\n".join(
        f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )


def function_sources(cells: list[str], names: list[str]) -> dict[str, str]:
    """The source of the last top-level ``def NAME`` of each name in the cells (for checks that read code).
    Parsed here, in the sandbox: a cell built to exhaust the parser's memory costs only this submission."""
    import ast

    found: dict[str, str] = {}
    for source in cells:
        source = runnable_source(source)
        try:
            tree = ast.parse(source)
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
                found[node.name] = (ast.get_source_segment(source, node) or "")[: codec.MAX_STRING * 10]
    return found


def _limits(config: dict[str, Any]) -> None:
    """Resource limits of the learner's process, inherited by all it starts. Memory is per process; the
    number of processes and threads it may add is capped, so all of them together hold at most
    (1 + MAX_PROCESSES) times the memory cap; CPU seconds cover the whole submission."""
    import resource

    memory = int(config.get("memory_limit_mb", MEMORY_LIMIT_MB)) * 2**20
    cpu = int(config.get("cpu_limit", 120))
    for limit, value in (
        (resource.RLIMIT_FSIZE, 2**20),
        (resource.RLIMIT_DATA, memory),
        (resource.RLIMIT_CPU, cpu),
        (resource.RLIMIT_CORE, 0),
        (resource.RLIMIT_NOFILE, 256),
    ):
        resource.setrlimit(limit, (value, value))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError instead of killing
    if config.get("isolated"):
        # Counted per user in the sandbox's own user namespace: its shell, its PID 1 and this process.
        tasks = len([p for p in os.listdir("/proc") if p.isdigit()]) + int(
            config.get("max_processes", MAX_PROCESSES)
        )
        resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))


def _send(sock: socket.socket, message: dict[str, Any], values: dict[str, Any] | None = None) -> None:
    message = {**message, "reached": sorted(switching.REACHED)}
    codec.send_frame(sock, codec.pack(message, values))


def _run_cells(cells: list[str], config: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    cell_limit = float(config.get("cell_time_limit", 10))
    errors = []
    for i, source in enumerate(cells):
        try:
            with _Limit(cell_limit, WALL_FACTOR * cell_limit):
                # dont_inherit: the cell is compiled with its own __future__ flags only, as Jupyter does
                code = compile(runnable_source(source), f"<cell {i + 1}>", "exec", dont_inherit=True)
                exec(code, namespace)
        except _TimeLimit:
            errors.append(say("cell {n}: did not finish within {limit:g} s", n=i + 1, limit=cell_limit))
        except BaseException as e:  # noqa: B036 - SystemExit, KeyboardInterrupt: the next cell still runs
            errors.append(say("cell {n}: {error}", n=i + 1, error=f"{type(e).__name__}: {str(e)[:300]}"))
    return errors


def _end_strays(own_user: bool = False) -> None:
    """Once the cells have run, every process they started is killed: none takes part in an answer, and none
    may hold the process slots that the fresh copies of later calls need (a cell that forked as many sleepers
    as it could left none). Inside a sandbox, whose own PID namespace numbers them all after this one; or,
    ``own_user``, as a user of its own without a sandbox (Gradescope's fallback, one submission at a time):
    every other process of that user (``kill(-1)``)."""
    me = os.getpid()
    for _ in range(50):  # a thread of the learner's may still be forking
        if own_user:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:  # ProcessLookupError: none left
                return
        else:
            strays = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) > me]
            if not strays:
                return
            for pid in strays:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        time.sleep(0.02)  # the orphans among them are reaped by the namespace's PID 1 (or the zygote)


def _names(config: dict[str, Any], namespace: dict[str, Any], sources: dict[str, str]) -> tuple[dict, dict]:
    """({name: {"kind": ..., "source": ...}}, {name: value}) of the names the tests use."""
    names, values = {}, {}
    for name in config.get("names", []):
        if name not in namespace:
            continue
        value = namespace[name]
        if callable(value):
            names[name] = {"kind": "function", "source": sources.get(name)}
        else:
            names[name] = {"kind": "value"}
            values[name] = value
    return names, values


def _implementation(sock: socket.socket, calls: list[int]) -> Any:
    """The implementation a learner's test receives: each call goes to the grader, which computes it there
    (the implementation never enters this process) and sends back plain data."""
    from attnlib.grading.learner_tests import UnderTest

    def call(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        codec.send_frame(sock, codec.pack({"callback": True}, {"args": list(args), "kwargs": dict(kwargs)}))
        tree, raw = codec.read_frame_blocking(sock)
        reply = json.loads(tree)
        if reply.get("ok") is not True:
            raise RuntimeError(str(reply.get("error"))[:500])
        return codec.decode_values(reply, raw, ("value",))["value"]

    return UnderTest(call)


def _run_test(
    request: dict[str, Any], namespace: dict[str, Any], names: list[str], sock: socket.socket
) -> bytes:
    """The learner's test function run once against the implementation the grader holds, in a fresh copy
    of this process: the set's other answers are switched off in the notebook's namespace (a test decides
    from what the implementation returns, not by comparing with the learner's own functions)."""
    from attnlib.grading import learner_tests

    fn = namespace[request["name"]]
    for name in names:
        if name != request["name"] and callable(namespace.get(name)):
            namespace[name] = switching._off_function(say("your {name}", name=name))
    before = set(switching.REACHED)
    switching.REACHED.clear()
    del learner_tests.READS[:]
    calls = [0]
    with _Limit(float(request["cpu"]), float(request["wall"])):
        try:
            fn(_implementation(sock, calls))
            passed, error = True, ""
        except Exception as e:  # noqa: BLE001 - a failing assert or any error: the test did not pass
            passed, error = False, f"{type(e).__name__}: {str(e)[:300]}"
    run = {
        "passed": passed,
        "error": error,
        "calls": calls[0],
        "test_reached": sorted(switching.REACHED)[:20],
    }
    run["read"] = sorted(set(learner_tests.READS))[:20]
    switching.REACHED.update(before)
    return codec.pack({"ok": True, "run": run, "reached": sorted(switching.REACHED)})


def _call(request: dict[str, Any], namespace: dict[str, Any], contract: Any) -> bytes:
    """The reply frame of one call, made (and its value encoded) under the call's CPU and wall limits."""
    fn = namespace[request["name"]]
    found = codec.decode_values(request, request.pop("raw"), ("args", "kwargs"))
    args, kwargs = list(found["args"]), dict(found["kwargs"])
    before, before_kwargs = contract.clone_tree(args), contract.clone_tree(kwargs)
    with _Limit(float(request["cpu"]), float(request["wall"])):
        if request.get("traced"):
            value, report = contract.run_traced(fn, args, kwargs)
        else:
            value, report = fn(*args, **kwargs), None
        mutated = contract.changed_arguments(args, before)
        if not contract.same_tree(kwargs, before_kwargs):
            mutated.append(len(args))
        repeatable = None
        if request.get("repeat") and not request.get("traced"):
            # the same call again, on fresh copies of the inputs: a function gives the same result
            again = fn(*contract.clone_tree(before), **contract.clone_tree(before_kwargs))
            repeatable = bool(contract.same_result(value, again))
        reply = {"ok": True, "report": report, "mutated": mutated, "repeatable": repeatable}
        # encoded under the limits too: encoding a learner's container runs its own __iter__
        return codec.pack({**reply, "reached": sorted(switching.REACHED)}, {"value": value})


def _switch_off(config: dict[str, Any]) -> None:
    """The set's switch-off, unless the zygote this process was forked from applied it already."""
    wanted = (list(config.get("switch_off", [])), list(config.get("operators", [])))
    if switching.APPLIED is None:  # a zygote without the set's switch-off (tests, a one-off sandbox)
        switching.switch_off(*wanted)
    elif switching.APPLIED != wanted:  # fails closed: no learner code runs in another set's process
        raise RuntimeError("this process was forked with another switch-off than its set's")


def serve(fd: int) -> None:
    """Sandbox main: receive the cells, run them, report the names, then serve calls until the grader ends."""
    sock = socket.socket(fileno=fd)
    sys.stdout = sys.stderr = _Sink()
    sys.argv = ["submission"]
    tree, _ = codec.read_frame_blocking(sock)
    setup = json.loads(tree)
    del tree
    config = dict(setup["config"])
    chosen = config.get("language") if config.get("language") in LANGUAGES else "en"
    catalogue(chosen)  # read now: the learner's code may use up the files or the memory it would need
    with in_language(chosen):  # this process's messages: a cell that failed, a switched-off call
        _serve(sock, list(setup.pop("cells")), config)  # the cells' only reference: freed once they ran


def _serve(sock: socket.socket, cells: list[str], config: dict[str, Any]) -> None:
    """``serve`` in the submission's language: run the cells, report the names, serve the calls."""
    _limits(config)

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)

    import attnlib.grading

    fake_otter = types.ModuleType("otter")
    fake_otter.Notebook = _StubGrader
    sys.modules["otter"] = fake_otter
    attnlib.grading.notebook = _StubGrader
    _switch_off(config)
    # bound before any learner code runs: the loop checks' tracing and the contract of every call
    from attnlib.grading import checks

    sources = function_sources(cells, config.get("names", []))
    signal.signal(signal.SIGALRM, _on_limit)
    signal.signal(signal.SIGPROF, _on_limit)
    namespace: dict[str, Any] = {"__name__": "__main__", "grader": _StubGrader()}
    errors = _run_cells(cells, config, namespace)
    del cells
    try:
        with _Limit(float(config.get("cell_time_limit", 10)), 60.0):
            if config.get("isolated"):
                _end_strays()  # under the limit: the learner's code may have replaced what it calls
            elif config.get("own_user"):
                _end_strays(own_user=True)
            names, values = _names(config, namespace, sources)
            frame = codec.pack({"ok": True, "names": names, "errors": errors}, {"values": values})
    except BaseException as e:  # noqa: B036 - a value whose encoding fails or never ends
        failed = say("names: {error}", error=type(e).__name__)
        frame = codec.pack({"ok": True, "names": {}, "errors": [*errors, failed]})
    sock.sendall(frame)
    _serve_calls(sock, namespace, checks, list(config.get("names", [])))


SESSION_ENDED = 75  # the exit status of a session's copy that the grader ended (``_session``)


def _session(sock: socket.socket, request: dict[str, Any], depth: int) -> int:
    """A session: the calls until the grader ends it are served by a copy of this process, which then exits;
    this one waits and never sees them, so fresh copies made after the session start from the state before
    it (a replay of a call made in the session runs in a process that never saw the session). Returns the
    depth of sessions the serving process is in (the copy's is one more)."""
    if request["session"] == "end":
        if depth:
            os._exit(SESSION_ENDED)
        _send(sock, {"ok": False, "error": tr("no session to end")})
        return depth
    try:
        child = os.fork()
    except OSError:
        _send(sock, {"ok": False, "error": tr("no process left for a session")})
        return depth
    if child == 0:
        _send(sock, {"ok": True})
        return depth + 1
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status) == SESSION_ENDED:
        _send(sock, {"ok": True})
    else:  # it died during a call: that call's answer, and the grader stops this sandbox
        _send(sock, {"ok": False, "error": tr("the notebook's process stopped during a call"), "lost": True})
    return depth


def _serve_calls(sock: socket.socket, namespace: dict[str, Any], contract: Any, names: list[str]) -> None:
    depth = 0
    while True:
        try:
            tree, raw = codec.read_frame_blocking(sock)
            request = json.loads(tree)
        except (EOFError, OSError, ValueError, codec.SandboxError):
            os._exit(0)
        if request.get("session") in ("begin", "end"):
            depth = _session(sock, request, depth)
            continue
        request["raw"] = raw
        child = 0
        if request.get("fresh"):
            # A fresh copy of this process makes the call and answers; this one never sees its state change.
            try:
                child = os.fork()
            except OSError:
                child = -1
            if child > 0:
                os.waitpid(child, 0)
                continue
        try:
            if child < 0:
                raise RuntimeError(tr("no process left for a fresh call"))
            if request.get("under_test"):
                sock.sendall(_run_test(request, namespace, names, sock))
            else:
                sock.sendall(_call(request, namespace, contract))
        except _TimeLimit:
            _send(sock, {"ok": False, "error": tr("did not finish within its time limit"), "timeout": True})
        except BaseException as e:  # noqa: B036 - report every failure of learner code as data
            _send(sock, {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}"})
        if request.get("fresh") and child == 0:
            os._exit(0)
