"""Run a learner's notebook code in a disposable process and call its functions from the grader.

The grader never runs learner code in its own process: a hidden test calls ``attention(q, H, lengths)`` on a
proxy, the call travels to a sandbox process that executed the notebook's code cells, and only plain data
comes back (tensors as dtype + shape + raw bytes, numbers, strings, tuples; never pickles).
The comparison then
happens in the grader with pristine torch, so a submission that rebinds ``torch.allclose``, returns a tensor
subclass, redefines ``grader`` or writes to files cannot change a verdict; at worst it forges numbers, which
means computing the right ones.

Each submission's process is forked from a zygote that imported torch once and never sees the tests, the
solutions or any learner's code, and runs inside its own bubblewrap sandbox (``attnlib_grader.isolation``).
Inside: stdout and stderr sent to /dev/null, files capped at 1 MB, memory, CPU time, processes and open files
capped, one CPU thread, what the set forbids switched off by identity, a time limit on every cell and every
call. The grader kills the whole sandbox when a limit is exceeded.
"""

from __future__ import annotations

import base64
import json
import math
import os
import re
import signal
import socket
import sys
import time
import types
from typing import Any

MAX_MESSAGE = 64 * 2**20  # bytes; a reply larger than this fails the call
MEMORY_LIMIT_MB = 4096  # per sandbox process, unless a set's config says "memory_limit_mb"
MAX_STRING = 10_000
MAX_DEPTH = 8  # nesting of containers in values that cross between the grader and a sandbox
MAX_PROCESSES = 4  # tasks (processes and threads) the learner's code may add in its sandbox
# The contract's repeated call (checks.contract) is made on this many calls of each learner function per
# question (the first ones): the rule costs a second computation, and a function that keeps state shows it at
# its first repetition. Mutation and dtype are checked on every call.
REPEATED_CALLS = 6
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
    """Inverse of ``encode``: fresh objects built with the grader's own torch and numpy, sizes checked.

    Anything malformed (wrong types, nesting deeper than ``encode`` writes, sizes that do not match) raises
    SandboxError, never anything else."""
    try:
        return _decode(obj, 0)
    except SandboxError:
        raise
    except (Exception, RecursionError) as e:  # noqa: B014 - a forged reply must not raise anything else
        raise SandboxError(f"malformed value ({type(e).__name__})") from None


def _decode(obj: Any, depth: int) -> Any:
    import numpy as np
    import torch

    if depth > MAX_DEPTH + 2:
        raise SandboxError("malformed value: nested too deeply")
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if not isinstance(obj, dict):
        raise SandboxError(f"malformed value of type {type(obj).__name__}")
    kind = obj.get("t")
    if kind == "float":
        text = obj["v"] if isinstance(obj["v"], str) else ""
        return (
            float(text) if re.fullmatch(r"-?(inf|nan|[0-9]+(\.[0-9]*)?(e[+-]?[0-9]+)?)", text) else math.nan
        )
    if kind in ("tensor", "ndarray"):
        dtype, shape = obj["dtype"], obj["shape"]
        if (
            dtype not in _DTYPES
            or not isinstance(shape, list)
            or len(shape) > 16
            or not all(type(n) is int and 0 <= n < 2**40 for n in shape)
            or not isinstance(obj["data"], str)
        ):
            raise SandboxError(f"malformed {kind}")
        raw = base64.b64decode(obj["data"], validate=True)
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
    if kind in ("tuple", "list", "set", "frozenset") and not isinstance(obj.get("items"), list):
        raise SandboxError(f"malformed {kind}")
    if kind == "dict" and not isinstance(obj.get("items"), dict):
        raise SandboxError("malformed dict")
    if kind == "tuple":
        return tuple(_decode(v, depth + 1) for v in obj["items"])
    if kind == "list":
        return [_decode(v, depth + 1) for v in obj["items"]]
    if kind in ("set", "frozenset"):
        items = [_decode(v, depth + 1) for v in obj["items"]]
        try:
            return (frozenset if kind == "frozenset" else set)(items)
        except TypeError:  # unhashable items (tensors, lists) cannot be in a set
            raise SandboxError(f"malformed {kind}: its items are not hashable") from None
    if kind == "dict":
        return {str(k): _decode(v, depth + 1) for k, v in obj["items"].items()}
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


_REACHED: set[str] = set()  # the switched-off names the learner's code called


def _reached(dotted: str) -> None:
    _REACHED.add(str(dotted)[:200])


def switched_off_message(dotted: str) -> str:
    return f"{dotted} is switched off while grading: this exercise asks you to write it yourself"


def _off_function(dotted: str) -> types.FunctionType:
    """A function that records the call and fails; its code has no free variable and reaches the sandbox
    through ``sys.modules``, so it can also replace the code of the original function object."""
    namespace: dict[str, Any] = {}
    exec(
        "def off(*args, **kwargs):\n"
        "    import sys\n"
        f"    sys.modules['attnlib_grader.sandbox']._reached({dotted!r})\n"
        f"    raise RuntimeError({switched_off_message(dotted)!r})\n",
        namespace,
    )
    return namespace["off"]


def _resolve(dotted: str) -> Any:
    """The object a dotted name stands for (``torch.nn.MultiheadAttention``), or None."""
    import importlib

    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except Exception:  # noqa: BLE001 - not a module at this depth: try a shorter prefix
            continue
        try:
            for attr in parts[i:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


# Switching off torch's fused attention also switches off the entry points below it.
TORCH_ALIASES = {
    "torch.nn.functional.scaled_dot_product_attention": [
        "torch.ops.aten.scaled_dot_product_attention",
        "torch.ops.aten._scaled_dot_product_attention_math",
        "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu",
        "torch.ops.aten._scaled_dot_product_flash_attention",
        "torch.ops.aten._scaled_dot_product_efficient_attention",
    ],
    "torch.nn.functional.multi_head_attention_forward": ["torch._native_multi_head_attention"],
}


# Torch operators switched off in its dispatcher, below every Python or C entry point that reaches them.
TORCH_OPERATORS = {
    "torch.nn.functional.scaled_dot_product_attention": [
        "scaled_dot_product_attention",
        "_scaled_dot_product_attention_math",
        "_scaled_dot_product_flash_attention_for_cpu",
    ],
    "torch._native_multi_head_attention": ["_native_multi_head_attention"],
    "torch._transformer_encoder_layer_fwd": ["_transformer_encoder_layer_fwd"],
}


def _switch_off_operators(dotted_names: list[str]) -> None:
    """Register failing kernels for the aten operators behind what is switched off. The registration object
    is kept alive by a leaked reference only, so no Python object leads to it (``gc`` cannot undo it)."""
    import ctypes
    import warnings

    import torch

    operators = [(d, op) for d in dotted_names for op in TORCH_OPERATORS.get(d, [])]
    if not operators:
        return
    library = torch._C._dispatch_library("IMPL", "aten", "")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "overriding a previously registered kernel": that is the point
        for dotted, op in operators:
            for key in ("CompositeImplicitAutograd", "CPU", "AutogradCPU"):
                try:
                    library.impl(op, key, _off_function(dotted))
                except Exception:  # noqa: BLE001 - a key this operator has no kernel for
                    pass
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(library))
    del library


def switch_off(dotted_names: list[str]) -> None:
    """Make what a set forbids unusable under every name, by identity of the real objects.

    Each forbidden object is found once (``attnlib.masking.masked_softmax``); then every module attribute, and
    every dict or list that the garbage collector knows to hold it, is pointed at a function that records the
    call and fails; a Python function's own code is replaced as well (so a reference kept anywhere else fails
    too) and a class's ``__init__`` and ``forward``. ``importlib.reload`` switches them off again afterwards.
    """
    import gc
    import importlib

    names = list(dotted_names)
    for dotted in dotted_names:
        names += TORCH_ALIASES.get(dotted, [])
    targets: dict[int, tuple[Any, str, Any]] = {}
    for dotted in names:
        obj = _resolve(dotted)
        if obj is None or id(obj) in targets or isinstance(obj, types.ModuleType):
            continue
        off = _off_function(dotted)
        targets[id(obj)] = (obj, dotted, off)
        if isinstance(obj, types.FunctionType):
            try:
                obj.__code__ = off.__code__
                obj.__defaults__, obj.__kwdefaults__ = None, None
            except ValueError:  # a closure: its references are still replaced below
                pass
        elif isinstance(obj, type):  # every method it defines, its constructor included
            methods = [
                k
                for k, v in vars(obj).items()
                if isinstance(v, (types.FunctionType, staticmethod, classmethod))
            ]
            for method in {"__init__", *methods}:
                try:
                    setattr(obj, method, off)
                except (TypeError, AttributeError):
                    pass
        if dotted.startswith("torch.ops."):  # an op namespace caches what it found; replace the cache
            namespace = _resolve(dotted.rpartition(".")[0])
            try:
                setattr(namespace, dotted.rpartition(".")[2], off)
            except Exception:  # noqa: BLE001
                pass
    if not targets:
        return
    objects = [entry[0] for entry in targets.values()]
    for module in list(sys.modules.values()):
        space = getattr(module, "__dict__", None)
        if isinstance(space, dict):
            for key, value in list(space.items()):
                if id(value) in targets and value is targets[id(value)][0]:
                    space[key] = targets[id(value)][2]
    mine = {id(targets), id(objects)}

    def swap(value: Any) -> Any:
        if id(value) in targets and value is targets[id(value)][0]:
            return targets[id(value)][2]
        if isinstance(value, tuple) and any(id(v) in targets for v in value):
            return tuple(swap(v) for v in value)
        return value

    holders = [h for h in gc.get_referrers(*objects) if id(h) not in mine]
    tuples = [h for h in holders if isinstance(h, tuple)]  # immutable: replaced where they are held
    if tuples:
        holders += [h for h in gc.get_referrers(*tuples) if id(h) not in mine]
    for holder in holders:
        if isinstance(holder, dict):
            for key, value in list(holder.items()):
                if swap(value) is not value:
                    holder[key] = swap(value)
        elif isinstance(holder, list):
            for i, value in enumerate(holder):
                if swap(value) is not value:
                    holder[i] = swap(value)
    del objects, holders, tuples
    _switch_off_operators(names)
    real_reload = importlib.reload

    def reload(module):
        result = real_reload(module)
        switch_off(dotted_names)
        return result

    importlib.reload = reload


def runnable_source(source: str) -> str:
    """Comment out IPython magics and shell escapes (``%pip``, ``!ls``): plain Python cannot run them."""
    return "\n".join(
        f"# {line}" if line.lstrip().startswith(("%", "!")) else line for line in source.split("\n")
    )


def _function_sources(cells: list[str], names: list[str]) -> dict[str, str]:
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
                found[node.name] = (ast.get_source_segment(source, node) or "")[: MAX_STRING * 10]
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


def serve(fd: int) -> None:
    """Sandbox main: receive the cells, run them, report the names, then serve calls until the grader stops.

    Runs in a fresh fork of the zygote, already inside its sandbox (``isolation._enter``)."""
    from multiprocessing.connection import Connection

    conn = Connection(fd)
    sys.stdout = sys.stderr = _Sink()
    sys.argv = ["submission"]
    setup = json.loads(conn.recv_bytes(MAX_MESSAGE))
    cells, config = list(setup["cells"]), dict(setup["config"])
    _limits(config)

    import torch

    torch.set_num_threads(1)
    torch.manual_seed(0)

    import attnlib.grading

    fake_otter = types.ModuleType("otter")
    fake_otter.Notebook = _StubGrader
    sys.modules["otter"] = fake_otter
    attnlib.grading.notebook = _StubGrader
    switch_off(config.get("switch_off", []))
    del setup
    # bound before any learner code runs: the loop checks' tracing and the contract of every call
    from attnlib.grading.checks import changed_arguments, clone_tree, run_traced, same_result

    sources = _function_sources(cells, config.get("names", []))

    signal.signal(signal.SIGALRM, _on_alarm)
    cell_limit = float(config.get("cell_time_limit", 10))
    namespace: dict[str, Any] = {"__name__": "__main__", "grader": _StubGrader()}
    errors = []
    for i, source in enumerate(cells):
        try:
            signal.setitimer(signal.ITIMER_REAL, cell_limit)
            # dont_inherit: the cell is compiled with its own __future__ flags only, as Jupyter does
            exec(compile(runnable_source(source), f"<cell {i + 1}>", "exec", dont_inherit=True), namespace)
        except _TimeLimit:
            errors.append(f"cell {i + 1}: did not finish within {cell_limit:g} s")
        except BaseException as e:  # noqa: B036 - SystemExit, KeyboardInterrupt: the next cell still runs
            errors.append(f"cell {i + 1}: {type(e).__name__}: {str(e)[:300]}")
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    del cells

    names = {}
    for name in config.get("names", []):
        if name not in namespace:
            continue
        value = namespace[name]
        if callable(value):
            names[name] = {"kind": "function", "source": sources.get(name)}
        else:
            names[name] = {"kind": "value", "value": encode(value)}
    conn.send_bytes(
        json.dumps({"ok": True, "names": names, "errors": errors, "reached": sorted(_REACHED)}).encode()
    )

    while True:
        try:
            request = json.loads(conn.recv_bytes(MAX_MESSAGE))
        except (EOFError, OSError):
            os._exit(0)
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
                raise RuntimeError("no process left for a fresh call")
            fn = namespace[request["name"]]
            args = [decode(a) for a in request["args"]]
            kwargs = {k: decode(v) for k, v in request["kwargs"].items()}
            before = clone_tree(args)
            repeatable = None
            signal.setitimer(signal.ITIMER_REAL, float(request["timeout"]))
            try:
                if request.get("traced"):
                    value, report = run_traced(fn, args, kwargs)
                else:
                    value, report = fn(*args, **kwargs), None
                mutated = changed_arguments(args, before)
                if request.get("repeat") and not request.get("traced"):
                    # the same call again, on fresh copies of the inputs: a function gives the same result
                    again = fn(*clone_tree(before), **clone_tree(kwargs))
                    repeatable = bool(same_result(value, again))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            reply = {
                "ok": True,
                "value": encode(value),
                "report": report,
                "mutated": mutated,
                "repeatable": repeatable,
            }
        except _TimeLimit:
            reply = {"ok": False, "error": f"did not return within {request['timeout']:g} s", "timeout": True}
        except BaseException as e:  # noqa: B036 - report every failure of learner code as data
            reply = {"ok": False, "error": f"{type(e).__name__}: {str(e)[:500]}"}
        reply["reached"] = sorted(_REACHED)
        conn.send_bytes(json.dumps(reply).encode())
        if request.get("fresh") and child == 0:
            os._exit(0)


# ---------------------------------------------------------------------------------------------- grader side
class Isolation:
    """How sandboxes are built in one grading run: bubblewrap (``isolated``) or plain processes."""

    def __init__(self, isolated: bool = True, switch_off: list[str] = ()) -> None:
        from attnlib_grader import isolation

        self.isolated = isolated
        self.filesystem = isolation.Filesystem(switch_off) if isolated else None
        self.cgroups = isolation.Cgroups() if isolated else None

    def close(self) -> None:
        if self.filesystem is not None:
            self.filesystem.cleanup()


def warm_up(timeout: float = 600.0) -> None:
    """Start the zygote (it imports torch once, seconds on a busy machine) before any time limit runs."""
    from attnlib_grader import isolation

    isolation.zygote().start(timeout)


class Sandbox:
    """One learner's notebook code running in its own process, called through ``LearnerFunction`` proxies."""

    def __init__(
        self,
        cells: list[str],
        config: dict[str, Any],
        workdir: str,
        isolation: Isolation | None = None,
        deadline: float | None = None,
    ) -> None:
        self.cells, self.workdir = cells, workdir
        self.isolation = isolation if isolation is not None else Isolation(isolated=False)
        keys = ("names", "switch_off", "cell_time_limit", "memory_limit_mb", "max_processes", "cpu_limit")
        self.config = {k: config[k] for k in keys if k in config}
        self.config["isolated"] = self.isolation.isolated
        self.startup_limit = float(config.get("startup_time_limit", 60))
        self.deadline = deadline  # time.monotonic() after which nothing more is asked of this submission
        self.box = None
        self.cgroups: list[str] = []
        self.pid: int | None = None
        self.conn = None
        self.names: dict[str, Any] = {}
        self.errors: list[str] = []
        self.reached: set[str] = set()
        self.last_mutated: list[int] = []  # the tensor arguments the last call changed in place
        self.last_repeatable = True  # False when the last call, made twice, gave two different results

    @property
    def alive(self) -> bool:
        return self.conn is not None

    def _left(self, timeout: float) -> float:
        if self.deadline is None:
            return timeout
        return min(timeout, self.deadline - time.monotonic())

    def start(self) -> None:
        from multiprocessing.connection import Connection

        from attnlib_grader import isolation

        if self._left(1.0) <= 0:
            raise SandboxError("the submission's total time budget is used up")
        ours, theirs = socket.socketpair()
        try:
            ns_pid = None
            if self.isolation.isolated:
                self.box = isolation.Box(self.isolation.filesystem)
                ns_pid = self.box.ns_pid
                if self.isolation.cgroups.available:
                    memory = (int(self.config.get("memory_limit_mb", MEMORY_LIMIT_MB)) + 1024) * 2**20
                    # the learner's process, the one that waits for it outside the PID namespace, and more
                    processes = 2 + int(self.config.get("max_processes", MAX_PROCESSES))
                    self.cgroups = self.isolation.cgroups.create(memory, processes)
            workdir = None if ns_pid else self.workdir
            self.pid = isolation.zygote().fork(theirs.fileno(), ns_pid, workdir, self.cgroups)
        except isolation.IsolationError as e:
            ours.close()
            self.kill()
            raise SandboxError(str(e)) from None
        finally:
            theirs.close()
        self.conn = Connection(ours.detach())
        try:
            self.conn.send_bytes(json.dumps({"cells": self.cells, "config": self.config}).encode())
        except (OSError, ValueError):
            self.kill()
            raise SandboxError("the notebook's process stopped before it got its cells") from None
        reply = self._receive(self.startup_limit, what="running the notebook's cells")
        names = reply.get("names")
        self.names = {
            str(k): v for k, v in (names.items() if isinstance(names, dict) else []) if isinstance(v, dict)
        }
        errors = reply.get("errors")
        self.errors = [str(e)[:400] for e in (errors if isinstance(errors, list) else [])][:50]

    def _receive(self, timeout: float, what: str) -> dict[str, Any]:
        timeout = self._left(timeout)
        try:
            ready = timeout > 0 and self.conn.poll(timeout)
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            if timeout <= 0 or (self.deadline is not None and time.monotonic() >= self.deadline):
                raise SandboxError(f"the submission's total time budget ran out while {what}")
            raise SandboxError(f"{what} did not finish within {timeout:.0f} s")
        try:
            reply = json.loads(self.conn.recv_bytes(MAX_MESSAGE))
        except (Exception, RecursionError) as e:  # noqa: B014 - EOF, too long, not JSON, nested too deeply
            self.kill()
            raise SandboxError(
                f"the notebook's process stopped or sent a malformed reply while {what} ({type(e).__name__})"
            ) from None
        if not isinstance(reply, dict):
            self.kill()
            raise SandboxError("malformed reply")
        reached = reply.get("reached")
        if isinstance(reached, list):
            self.reached.update(str(r)[:200] for r in reached[:50])
        return reply

    def call(
        self,
        name: str,
        args: tuple,
        kwargs: dict,
        timeout: float,
        traced: bool = False,
        fresh: bool = False,
        repeat: bool = False,
    ) -> Any:
        """``name(*args, **kwargs)`` in the sandbox; with ``traced``, ``(value, report)`` as
        ``checks.run_traced`` gives them (the report checked to be plain counts); with ``fresh``, made by a
        copy of the learner's process that ends with the call (no state carries over to later calls); with
        ``repeat``, made twice (on fresh copies of the inputs) and ``last_repeatable`` says whether the
        results were the same. ``last_mutated`` lists the arguments the call changed in place."""
        if not self.alive:
            raise SandboxError("the notebook's process was stopped after an earlier failure")
        request = {
            "name": name,
            "args": [encode(a) for a in args],
            "kwargs": {k: encode(v) for k, v in kwargs.items()},
            "timeout": timeout,
            "traced": traced,
            "fresh": fresh,
            "repeat": repeat,
        }
        try:
            self.conn.send_bytes(json.dumps(request).encode())
        except (OSError, ValueError):
            self.kill()
            raise SandboxError("the notebook's process has stopped") from None
        # the sandbox stops a call at `timeout` itself; one that blocks that signal is killed 2 s later
        reply = self._receive(timeout + 2.0, what=f"calling {name}")
        if reply.get("timeout"):
            self.kill()  # its state may be broken; the next question starts a fresh process
            raise TimeoutError(f"{name} did not return within {timeout:g} s")
        if reply.get("ok") is not True:
            raise SandboxError(f"{name} raised {str(reply.get('error'))[:500]}")
        value = decode(reply.get("value"))
        mutated = reply.get("mutated")
        self.last_mutated = [i for i in mutated if type(i) is int][:50] if isinstance(mutated, list) else []
        self.last_repeatable = reply.get("repeatable") is not False
        if not traced:
            return value
        report = reply.get("report")
        entries = report.get("entries") if isinstance(report, dict) else None
        uses = report.get("uses") if isinstance(report, dict) else None
        if not (
            isinstance(report, dict)
            and all(type(report.get(k)) is int for k in ("ops", "jumps", "autograd", "largest"))
            and type(report.get("tampered")) is bool
            and all(isinstance(d, dict) and len(d) < 10_000 for d in (entries, uses))
            and all(type(v) is int for d in (entries, uses) for v in d.values())
        ):
            raise SandboxError(f"malformed report of the call of {name}")
        clean = {k: report[k] for k in ("ops", "jumps", "tampered", "autograd", "largest")}
        clean["entries"] = {str(k)[:200]: v for k, v in entries.items()}
        clean["uses"] = {str(k)[:20]: v for k, v in uses.items()}
        return value, clean

    def kill(self) -> None:
        if self.box is not None:
            self.box.kill()  # the whole sandbox: every process the learner started dies with it
        elif self.pid is not None:
            try:
                os.killpg(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError, OSError):
                pass
        if self.conn is not None:
            self.conn.close()
        if self.cgroups:
            from attnlib_grader.isolation import Cgroups

            Cgroups.remove(self.cgroups)
        self.box = self.pid = self.conn = None
        self.cgroups = []


class LearnerFunction:
    """Stands for a learner's function in a hidden test: each call runs in the sandbox within the budget, and
    every plain call is held to ``checks.contract`` (no argument changed in place, the same result when made
    again, the floating dtype of the inputs kept), except for the rules the set exempts this name from."""

    checks_contract = True  # checks.call leaves the contract to this proxy

    def __init__(
        self,
        sandbox: Sandbox,
        name: str,
        budget: Budget,
        source: str | None = None,
        exempt: tuple[str, ...] = (),
    ) -> None:
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

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        value = self.sandbox.call(
            self.__name__, args, kwargs, timeout=self.budget.remaining(), repeat=self._repeat()
        )
        return self._held(args, value)

    def fresh(self, *args: Any) -> Any:
        """The value of a call made by a copy of the learner's process: the same state for every such call,
        so a stateful function cannot tell them apart."""
        value = self.sandbox.call(
            self.__name__, args, {}, timeout=self.budget.remaining(), fresh=True, repeat=self._repeat()
        )
        return self._held(args, value)

    def mutations(self, *args: Any) -> tuple[Any, list[int]]:
        """The value and which tensor arguments the call changed in place, compared in the sandbox."""
        value = self.sandbox.call(self.__name__, args, {}, timeout=self.budget.remaining())
        return value, list(self.sandbox.last_mutated)

    def traced(self, *args: Any) -> tuple[Any, dict[str, Any]]:
        """The value and what ran (``checks.run_traced``), measured in the sandbox."""
        return self.sandbox.call(self.__name__, args, {}, timeout=self.budget.remaining(), traced=True)

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
