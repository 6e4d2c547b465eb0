"""Run a learner's notebook code in a disposable process and call its functions from the grader.

The grader never runs learner code in its own process: a hidden test calls ``attention(q, H, lengths)`` on a
proxy, the call travels to a sandbox process that executed the notebook's code cells, and only plain data
comes back (tensors as dtype + shape + raw bytes, numbers, strings, tuples; never pickles).
The comparison then
happens in the grader with pristine torch, so a submission that rebinds ``torch.allclose``, returns a tensor
subclass, redefines ``grader`` or writes to files cannot change a verdict; at worst it forges numbers, which
means computing the right ones.

Sandboxes are forked from a fresh ``forkserver`` process that imported torch once and never sees the tests or
the reference solutions. Each sandbox: its own process group, cwd in an empty temporary folder, stdout and
stderr sent to /dev/null, files capped at 1 MB, one CPU thread, the attnlib functions under test switched off,
and a time limit on every cell and every call (the grader kills the process group when one is exceeded).
"""

from __future__ import annotations

import base64
import json
import math
import multiprocessing
import os
import re
import signal
import sys
import time
import types
from typing import Any

MAX_MESSAGE = 64 * 2**20  # bytes; a reply larger than this fails the call
MEMORY_LIMIT_MB = 4096  # per sandbox process, unless a set's config says "memory_limit_mb"
MAX_STRING = 10_000
_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")


class SandboxError(Exception):
    """The learner's code could not be run or called (crash, time limit, malformed reply)."""


# ---------------------------------------------------------------------------------------------- codec
def encode(obj: Any, depth: int = 0) -> Any:
    """Plain JSON for tensors, arrays, numbers, strings and containers; anything else becomes opaque."""
    import numpy as np
    import torch

    if depth > 8:
        return {"t": "opaque", "type": "too deeply nested"}
    if obj is None or isinstance(obj, (bool, str)):
        return obj if not isinstance(obj, str) else obj[:MAX_STRING]
    if isinstance(obj, int):
        return obj if abs(obj) < 2**53 else {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, float):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, torch.Tensor):
        x = torch.Tensor.contiguous(torch.Tensor.cpu(torch.Tensor.detach(obj)))
        dtype = str(x.dtype).removeprefix("torch.")
        if dtype not in _DTYPES:
            return {"t": "opaque", "type": f"tensor of dtype {dtype}"}
        raw = x.view(torch.int16) if dtype == "bfloat16" else x
        data = base64.b64encode(raw.numpy().tobytes()).decode()
        return {"t": "tensor", "dtype": dtype, "shape": list(x.shape), "data": data}
    if isinstance(obj, np.ndarray) and obj.dtype.name in _DTYPES:
        data = base64.b64encode(np.ascontiguousarray(obj).tobytes()).decode()
        return {"t": "ndarray", "dtype": obj.dtype.name, "shape": list(obj.shape), "data": data}
    if isinstance(obj, np.generic):
        return encode(obj.item(), depth + 1)
    if isinstance(obj, (tuple, list)):
        return {
            "t": type(obj).__name__ if type(obj) in (tuple, list) else "tuple",
            "items": [encode(v, depth + 1) for v in list(obj)[:10_000]],
        }
    if isinstance(obj, (set, frozenset)):  # e.g. alignment links {(t, s), ...}
        return {
            "t": "frozenset" if isinstance(obj, frozenset) else "set",
            "items": [encode(v, depth + 1) for v in list(obj)[:10_000]],
        }
    if isinstance(obj, dict):
        return {"t": "dict", "items": {str(k): encode(v, depth + 1) for k, v in list(obj.items())[:1000]}}
    return {"t": "opaque", "type": type(obj).__name__}


class Opaque:
    """Stands for a value the sandbox could not send as data (a module, an object of a learner's class...)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = str(type_name)[:200]

    def __repr__(self) -> str:
        return f"<a {self.type_name} object>"


def decode(obj: Any) -> Any:
    """Inverse of ``encode``: fresh objects built with the grader's own torch and numpy, sizes checked."""
    import numpy as np
    import torch

    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, list):  # only produced by parent-side encode of lists? keep tolerant
        return [decode(v) for v in obj]
    if not isinstance(obj, dict):
        raise SandboxError(f"malformed value of type {type(obj).__name__}")
    kind = obj.get("t")
    if kind == "float":
        return float(obj["v"]) if re.fullmatch(r"-?(inf|nan|[0-9.e+-]+)", str(obj["v"])) else math.nan
    if kind in ("tensor", "ndarray"):
        dtype, shape = obj["dtype"], [int(n) for n in obj["shape"]]
        if dtype not in _DTYPES or any(n < 0 for n in shape):
            raise SandboxError(f"malformed {kind}")
        raw = base64.b64decode(obj["data"])
        if kind == "ndarray":
            np_dtype = np.dtype(dtype)
            if len(raw) != math.prod(shape) * np_dtype.itemsize:
                raise SandboxError("malformed array: size does not match its shape")
            return np.frombuffer(raw, dtype=np_dtype).reshape(shape).copy()
        torch_dtype = getattr(torch, dtype)
        storage = torch.int16 if dtype == "bfloat16" else torch_dtype
        itemsize = torch.empty((), dtype=storage).element_size()
        if len(raw) != math.prod(shape) * itemsize:
            raise SandboxError("malformed tensor: size does not match its shape")
        if not raw:
            return torch.empty(shape, dtype=torch_dtype)
        x = torch.frombuffer(bytearray(raw), dtype=storage).reshape(shape).clone()
        return x.view(torch.bfloat16) if dtype == "bfloat16" else x
    if kind == "tuple":
        return tuple(decode(v) for v in obj["items"])
    if kind == "list":
        return [decode(v) for v in obj["items"]]
    if kind in ("set", "frozenset"):
        items = [decode(v) for v in obj["items"]]
        try:
            return (frozenset if kind == "frozenset" else set)(items)
        except TypeError:  # unhashable items (tensors, lists) cannot be in a set
            raise SandboxError(f"malformed {kind}: its items are not hashable") from None
    if kind == "dict":
        return {str(k): decode(v) for k, v in obj["items"].items()}
    if kind == "opaque":
        return Opaque(obj.get("type", "unknown"))
    raise SandboxError(f"malformed value of kind {kind!r}")


# ---------------------------------------------------------------------------------------------- child side
class _TimeLimit(BaseException):
    """Raised inside the sandbox when a cell or a call runs past its time limit."""


def _on_alarm(signum, frame):
    raise _TimeLimit("time limit exceeded")


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


def _switched_off(dotted: str):
    def off(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            f"{dotted} is switched off while grading: this exercise asks you to write it yourself"
        )

    return off


def _switch_off(dotted_names: list[str]) -> None:
    import importlib

    for dotted in dotted_names:
        module_name, _, attr = dotted.rpartition(".")
        module = importlib.import_module(module_name)
        setattr(module, attr, _switched_off(dotted))


def runnable_source(source: str) -> str:
    """Comment out IPython magics and shell escapes (``%pip``, ``!ls``): plain Python cannot run them."""
    return "\n".join(
        f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )


def _child(conn, cells: list[str], config: dict[str, Any], workdir: str) -> None:
    """Sandbox main: run the cells, report the names, then serve calls until the grader hangs up."""
    os.setpgrp()  # the grader kills the whole group, learner subprocesses included
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    sys.stdout = sys.stderr = _Sink()
    sys.argv = ["submission"]
    os.chdir(workdir)
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (2**20, 2**20))
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # an oversized write raises OSError instead of killing
        # Heap and anonymous mappings (Linux >= 4.7): an allocation past the cap raises MemoryError (or
        # torch's RuntimeError) in the learner's code instead of driving the machine into the OOM killer.
        memory = int(config.get("memory_limit_mb", MEMORY_LIMIT_MB)) * 2**20
        resource.setrlimit(resource.RLIMIT_DATA, (memory, memory))
    except (ImportError, ValueError, OSError):
        pass

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)

    import attnlib.grading

    fake_otter = types.ModuleType("otter")
    fake_otter.Notebook = _StubGrader
    sys.modules["otter"] = fake_otter
    attnlib.grading.notebook = _StubGrader
    _switch_off(config.get("switch_off", []))

    signal.signal(signal.SIGALRM, _on_alarm)
    cell_limit = float(config.get("cell_time_limit", 10))
    namespace: dict[str, Any] = {"__name__": "__main__", "grader": _StubGrader()}
    errors = []
    for i, source in enumerate(cells):
        try:
            signal.setitimer(signal.ITIMER_REAL, cell_limit)
            exec(compile(runnable_source(source), f"<cell {i + 1}>", "exec"), namespace)
        except _TimeLimit:
            errors.append(f"cell {i + 1}: did not finish within {cell_limit:g} s")
        except BaseException as e:  # noqa: B036 - SystemExit, KeyboardInterrupt: the next cell still runs
            errors.append(f"cell {i + 1}: {type(e).__name__}: {str(e)[:300]}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)

    names = {}
    for name in config.get("names", []):
        if name not in namespace:
            continue
        value = namespace[name]
        names[name] = {"kind": "function"} if callable(value) else {"kind": "value", "value": encode(value)}
    conn.send_bytes(json.dumps({"ok": True, "names": names, "errors": errors}).encode())

    while True:
        try:
            request = json.loads(conn.recv_bytes())
        except (EOFError, OSError):
            os._exit(0)
        try:
            fn = namespace[request["name"]]
            args = [decode(a) for a in request["args"]]
            kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
            signal.setitimer(signal.ITIMER_REAL, float(request["timeout"]))
            try:
                value = fn(*args, **kwargs)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            reply = {"ok": True, "value": encode(value)}
        except _TimeLimit:
            reply = {"ok": False, "error": f"did not return within {request['timeout']:g} s", "timeout": True}
        except BaseException as e:  # noqa: B036 - report every failure of learner code as data
            reply = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}"}
        conn.send_bytes(json.dumps(reply).encode())


# ---------------------------------------------------------------------------------------------- grader side
_CONTEXT = None


def _context():
    """The forkserver context; torch and attnlib are imported once in the server, not in every sandbox."""
    global _CONTEXT
    if _CONTEXT is None:
        _CONTEXT = multiprocessing.get_context("forkserver")
        _CONTEXT.set_forkserver_preload(["torch", "numpy", "attnlib", "attnlib.grading.sandbox"])
    return _CONTEXT


def _noop() -> None:
    pass


def warm_up(timeout: float = 600.0) -> None:
    """Start the forkserver (it imports torch once, seconds on a busy machine) before any time limit runs."""
    process = _context().Process(target=_noop, daemon=True)
    process.start()
    process.join(timeout)


class Sandbox:
    """One learner's notebook code running in its own process, called through ``LearnerFunction`` proxies."""

    def __init__(self, cells: list[str], config: dict[str, Any], workdir: str) -> None:
        self.cells, self.config, self.workdir = cells, config, workdir
        self.process = None
        self.conn = None
        self.names: dict[str, Any] = {}
        self.errors: list[str] = []

    @property
    def alive(self) -> bool:
        return self.process is not None and self.conn is not None

    def start(self) -> None:
        ctx = _context()
        parent_conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(
            target=_child, args=(child_conn, self.cells, self.config, self.workdir), daemon=True
        )
        try:
            self.process.start()
        except Exception as e:  # e.g. the forkserver was killed by a previous submission: retry once
            self.process = ctx.Process(
                target=_child, args=(child_conn, self.cells, self.config, self.workdir), daemon=True
            )
            try:
                self.process.start()
            except Exception:
                child_conn.close()
                parent_conn.close()
                self.process = None
                raise SandboxError(
                    f"could not start the notebook's process ({type(e).__name__}: {e})"
                ) from None
        child_conn.close()
        self.conn = parent_conn
        limit = float(self.config.get("startup_time_limit", 60))
        reply = self._receive(limit, what="running the notebook's cells")
        self.names = reply.get("names", {}) if isinstance(reply.get("names"), dict) else {}
        self.errors = [str(e)[:400] for e in reply.get("errors", [])][:50]

    def _receive(self, timeout: float, what: str) -> dict[str, Any]:
        try:
            ready = self.conn.poll(max(timeout, 0.0))
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise SandboxError(f"{what} did not finish within {timeout:.0f} s")
        try:
            reply = json.loads(self.conn.recv_bytes(MAX_MESSAGE))
        except (EOFError, OSError, ValueError, UnicodeDecodeError) as e:
            self.kill()
            raise SandboxError(
                f"the notebook's process stopped or sent too much while {what} ({e})"
            ) from None
        if not isinstance(reply, dict):
            self.kill()
            raise SandboxError("malformed reply")
        return reply

    def call(self, name: str, args: tuple, kwargs: dict, timeout: float) -> Any:
        if not self.alive:
            raise SandboxError("the notebook's process was stopped after an earlier failure")
        request = {
            "name": name,
            "args": [encode(a) for a in args],
            "kwargs": {k: encode(v) for k, v in kwargs.items()},
            "timeout": timeout,
        }
        try:
            self.conn.send_bytes(json.dumps(request).encode())
        except OSError:
            self.kill()
            raise SandboxError("the notebook's process has stopped") from None
        # the sandbox stops a call at `timeout` itself; one that blocks that signal is killed 2 s later
        reply = self._receive(timeout + 2.0, what=f"calling {name}")
        if reply.get("timeout"):
            self.kill()  # its state may be broken; the next question starts a fresh process
            raise TimeoutError(f"{name} did not return within {timeout:g} s")
        if not reply.get("ok"):
            raise SandboxError(f"{name} raised {str(reply.get('error'))[:500]}")
        return decode(reply.get("value"))

    def kill(self) -> None:
        if self.process is not None:
            pid = self.process.pid
            if pid is not None:  # None when the process could not even be started
                for target in (lambda: os.killpg(pid, signal.SIGKILL), self.process.kill):
                    try:
                        target()
                    except (ProcessLookupError, PermissionError, OSError, AttributeError):
                        pass
                self.process.join(5)
        if self.conn is not None:
            self.conn.close()
        self.process = self.conn = None


class LearnerFunction:
    """Stands for a learner's function in a hidden test: each call runs in the sandbox within the budget."""

    def __init__(self, sandbox: Sandbox, name: str, budget: Budget, source: str | None = None) -> None:
        self.sandbox, self.__name__, self.budget = sandbox, name, budget
        self.__source__ = source  # the learner's code of this function, read from the notebook by the grader

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.sandbox.call(self.__name__, args, kwargs, timeout=self.budget.remaining())

    def __repr__(self) -> str:
        return f"<learner function {self.__name__}>"


class Budget:
    """The time a question's learner calls may take in total."""

    def __init__(self, seconds: float) -> None:
        self.deadline = time.monotonic() + seconds

    def remaining(self) -> float:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the question's time limit is used up")
        return left
