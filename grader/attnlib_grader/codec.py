"""What crosses between the grader and a sandbox: framed messages of plain data, and their limits.

A message is one frame: an 8-byte header (the lengths of its two parts), a JSON tree of plain values, and the
raw bytes of the tensors and arrays it holds, in the order the tree names them. Never a pickle. Both ends use
this module; the grader treats every frame as hostile:

- ``read_frame`` has a deadline for the WHOLE message, not only for its first byte: a sandbox that sends a
  header and part of a body, then stops, fails that read (and is killed), never blocks a grading thread;
- ``decode`` does work linear in the frame's size: the JSON part is small and its containers are counted
  before it is parsed, integers are short, every byte of the tensor part is used once (no value can make the
  grader allocate more than the frame holds), and the hash containers it builds (sets, and the tuples and
  floats a test may put into one) refuse values chosen to collide, which would make hashing quadratic;
- all of it runs in the grading thread of that submission, so its CPU time is charged to that submission's
  own budget (``sandbox.Budget``), never to a classmate's.
"""

from __future__ import annotations

import json
import math
import re
import select
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from attnlib.grading.messages import say, tr

MAX_MESSAGE = 64 * 2**20  # bytes of one frame, tensors included
MAX_TREE = 4 * 2**20  # bytes of its JSON part
MAX_CONTAINERS = 100_000  # lists, tuples, sets and dicts in one frame (counted before parsing)
MAX_STRING = 10_000  # characters of a string value
MAX_ITEMS = 10_000  # items of one list, tuple or set that ``encode`` sends
MAX_DEPTH = 8  # nesting of containers in values that cross between the grader and a sandbox
MAX_SAME_HASH = 16  # distinct hashable values of one frame that may share a hash
BODY_SECONDS = 10.0  # once a frame has started, the rest of it must arrive within this (wall clock)
_HEADER = struct.Struct("!II")  # (JSON bytes, raw bytes)
_DTYPES = ("float16", "bfloat16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool")
_FLOAT = re.compile(r"-?(inf|nan|[0-9]+(\.[0-9]*)?(e[+-]?[0-9]+)?)")


class SandboxError(Exception):
    """The learner's code could not be run or called (crash, time limit, malformed reply)."""


class Opaque:
    """Stands for a value the sandbox could not send as data (a module, an object of a learner's class...)."""

    def __init__(self, type_name: str) -> None:
        self.type_name = str(type_name)[:200]

    def __repr__(self) -> str:
        return say("<a {type} object>", type=self.type_name)


# ---------------------------------------------------------------------------------------------- encoding
def encode(obj: Any, blobs: list[bytes], depth: int = 0) -> Any:
    """Plain JSON for numbers, strings and containers; tensors and arrays as dtype + shape, their bytes
    appended to ``blobs``; anything else becomes opaque."""
    import numpy as np
    import torch

    if depth > MAX_DEPTH:
        return {"t": "opaque", "type": tr("too deeply nested")}
    if obj is None or isinstance(obj, (bool, str)):
        return obj if not isinstance(obj, str) else str.__str__(obj)[:MAX_STRING]
    if isinstance(obj, int):
        return int(obj) if abs(obj) < 2**53 else {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, float):
        return {"t": "float", "v": repr(float(obj))}
    if isinstance(obj, torch.Tensor):
        x = torch.Tensor.contiguous(torch.Tensor.cpu(torch.Tensor.detach(obj)))
        dtype = str(x.dtype).removeprefix("torch.")
        if dtype not in _DTYPES:
            return {"t": "opaque", "type": say("tensor of dtype {dtype}", dtype=dtype)}
        raw = x.view(torch.int16) if dtype == "bfloat16" else x
        blobs.append(raw.numpy().tobytes())
        return {"t": "tensor", "dtype": dtype, "shape": list(x.shape)}
    if isinstance(obj, np.ndarray) and obj.dtype.name in _DTYPES:
        blobs.append(np.ascontiguousarray(obj).tobytes())
        return {"t": "ndarray", "dtype": obj.dtype.name, "shape": list(obj.shape)}
    if isinstance(obj, np.generic):
        return encode(obj.item(), blobs, depth + 1)
    if isinstance(obj, (tuple, list, set, frozenset)):
        kind = next(t for t in (frozenset, set, list, tuple) if isinstance(obj, t)).__name__
        return {"t": kind, "items": [encode(v, blobs, depth + 1) for v in list(obj)[:MAX_ITEMS]]}
    if isinstance(obj, dict):
        items = list(obj.items())[:1000]
        return {"t": "dict", "items": {str(k)[:200]: encode(v, blobs, depth + 1) for k, v in items}}
    return {"t": "opaque", "type": type(obj).__name__}


def pack(message: dict[str, Any], values: dict[str, Any] | None = None) -> bytes:
    """One frame: ``message`` (plain JSON) with each of ``values`` encoded under its key."""
    blobs: list[bytes] = []
    tree = dict(message)
    for key, value in (values or {}).items():
        tree[key] = encode(value, blobs)
    text = json.dumps(tree).encode()
    raw = b"".join(blobs)
    if len(text) > MAX_TREE or _HEADER.size + len(text) + len(raw) > MAX_MESSAGE:
        text = json.dumps({**message, "too_large": True, **{k: None for k in values or {}}}).encode()
        raw = b""
    return _HEADER.pack(len(text), len(raw)) + text + raw


# ---------------------------------------------------------------------------------------------- framing
def send_frame(sock: socket.socket, frame: bytes) -> None:
    sock.sendall(frame)


def _recv_exact(sock: socket.socket, n: int, deadline: float, check: Callable[[], None] | None) -> bytes:
    buffer = bytearray()
    while len(buffer) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([sock], [], [], min(left, 0.1))
        if check is not None:
            check()  # the caller's budgets: raises to give up
        if not ready:
            continue
        chunk = sock.recv(min(n - len(buffer), 1 << 20))
        if not chunk:
            raise EOFError(tr("the other end closed the connection"))
        buffer += chunk
    return bytes(buffer)


def read_frame(
    sock: socket.socket, first_deadline: float, check: Callable[[], None] | None = None
) -> tuple[bytes, bytes]:
    """(JSON part, raw part) of the next frame. The first byte must come by ``first_deadline``
    (time.monotonic()); the whole frame within ``BODY_SECONDS`` of it; ``check()`` runs every 0.1 s while
    waiting and may raise. Raises TimeoutError, EOFError, OSError or SandboxError (a frame too large)."""
    first = _recv_exact(sock, 1, first_deadline, check)
    body_deadline = time.monotonic() + BODY_SECONDS
    header = first + _recv_exact(sock, _HEADER.size - 1, body_deadline, check)
    tree_bytes, raw_bytes = _HEADER.unpack(header)
    if tree_bytes > MAX_TREE or _HEADER.size + tree_bytes + raw_bytes > MAX_MESSAGE:
        raise SandboxError(
            say("a reply of {size} bytes, more than the grader reads", size=tree_bytes + raw_bytes)
        )
    body_deadline += (tree_bytes + raw_bytes) / 50e6  # a slow machine still moves 50 MB/s through a socket
    tree = _recv_exact(sock, tree_bytes, body_deadline, check)
    return tree, _recv_exact(sock, raw_bytes, body_deadline, check)


def read_frame_blocking(sock: socket.socket) -> tuple[bytes, bytes]:
    """The sandbox's end: waits as long as the grader does (the grader is trusted)."""
    return read_frame(sock, math.inf)


# ---------------------------------------------------------------------------------------------- decoding
def _parse_int(text: str) -> int:
    if len(text) > 20:
        raise ValueError(tr("integer too long"))
    return int(text)


def _no_constant(text: str) -> Any:
    raise ValueError(say("{text} is not plain data", text=text))


def parse_tree(tree: bytes) -> Any:
    """The JSON part, its containers counted before it is parsed (a byte that opens one inside a string is
    counted too: a safe overestimate)."""
    if tree.count(b"[") + tree.count(b"{") > MAX_CONTAINERS:
        raise SandboxError(tr("malformed reply: too many values"))
    try:
        return json.loads(tree, parse_int=_parse_int, parse_constant=_no_constant)
    except (ValueError, RecursionError) as e:
        raise SandboxError(say("malformed reply ({error})", error=type(e).__name__)) from None


def _refuse_collisions(pairs: list[tuple[int, Any]]) -> None:
    """Refuse more than MAX_SAME_HASH distinct values sharing one hash among ``pairs`` (hash, value): a set
    of them, built here or by a test, would take time quadratic in their number. Linear after a sort."""
    hashes = sorted(h for h, _ in pairs)
    run = longest = 1
    for a, b in zip(hashes, hashes[1:], strict=False):
        run = run + 1 if a == b else 1
        longest = max(longest, run)
    if longest <= MAX_SAME_HASH:
        return
    by_hash: dict[int, list[str]] = {}
    for h, value in pairs:  # keyed by the hashes themselves: integers below 2**64, no chosen collision
        by_hash.setdefault(h, []).append(repr(value))
    for reprs in by_hash.values():
        if len(reprs) > MAX_SAME_HASH:
            ordered = sorted(reprs)
            if 1 + sum(a != b for a, b in zip(ordered, ordered[1:], strict=False)) > MAX_SAME_HASH:
                raise SandboxError(tr("malformed value: values chosen to collide in a hash table"))


class _Reader:
    """Decodes one frame's values: the raw part consumed in order, hashable values collected."""

    def __init__(self, raw: bytes) -> None:
        self.raw, self.at = memoryview(raw), 0
        self.hashed: list[tuple[int, Any]] = []

    def take(self, n: int) -> memoryview:
        if n < 0 or self.at + n > len(self.raw):
            raise SandboxError(tr("malformed value: its data is missing"))
        self.at += n
        return self.raw[self.at - n : self.at]

    def hashable(self, value: Any) -> Any:
        """Floats, tuples and frozensets: values whose hashes a sender can choose to collide."""
        try:
            self.hashed.append((hash(value), value))
        except TypeError:  # a tuple holding a list: no set can hold it
            pass
        return value

    def finish(self) -> None:
        if self.at != len(self.raw):
            raise SandboxError(tr("malformed value: data left over"))
        _refuse_collisions(self.hashed)


def decode(tree: Any, raw: bytes = b"") -> Any:
    """Inverse of ``encode``: fresh objects built with the grader's own torch and numpy, sizes checked.

    Anything malformed (wrong types, nesting deeper than ``encode`` writes, sizes that do not match, data
    left over or missing, colliding hashes) raises SandboxError, never anything else."""
    reader = _Reader(raw)
    try:
        value = _decode(tree, 0, reader)
        reader.finish()
        return value
    except SandboxError:
        raise
    except (Exception, RecursionError) as e:  # noqa: B014 - a forged reply must not raise anything else
        raise SandboxError(say("malformed value ({error})", error=type(e).__name__)) from None


def decode_values(tree: dict[str, Any], raw: bytes, keys: tuple[str, ...]) -> dict[str, Any]:
    """The values under ``keys`` of a decoded frame, which share its raw part in that order."""
    reader = _Reader(raw)
    try:
        values = {k: _decode(tree.get(k), 0, reader) for k in keys}
        reader.finish()
        return values
    except SandboxError:
        raise
    except (Exception, RecursionError) as e:  # noqa: B014
        raise SandboxError(say("malformed value ({error})", error=type(e).__name__)) from None


def _array(obj: dict[str, Any], kind: str, reader: _Reader) -> Any:
    import numpy as np
    import torch

    dtype, shape = obj["dtype"], obj["shape"]
    if (
        dtype not in _DTYPES
        or not isinstance(shape, list)
        or len(shape) > 16
        or not all(type(n) is int and 0 <= n < 2**40 for n in shape)
    ):
        raise SandboxError(say("malformed {kind}", kind=kind))
    np_dtype = np.dtype("int16" if dtype == "bfloat16" else dtype)
    size = math.prod(shape) * np_dtype.itemsize
    if size > len(reader.raw):
        raise SandboxError(say("malformed {kind}: its shape is larger than the reply", kind=kind))
    data = reader.take(size)
    if kind == "ndarray":
        return np.frombuffer(data, dtype=np_dtype).reshape(shape).copy()
    if not size:
        return torch.empty(shape, dtype=getattr(torch, dtype))
    storage = torch.int16 if dtype == "bfloat16" else getattr(torch, dtype)
    x = torch.frombuffer(bytearray(data), dtype=storage).reshape(shape)
    return x.view(torch.bfloat16) if dtype == "bfloat16" else x


def _decode(obj: Any, depth: int, reader: _Reader) -> Any:
    if depth > MAX_DEPTH + 2:
        raise SandboxError(tr("malformed value: nested too deeply"))
    if obj is None or isinstance(obj, (bool, str)):
        return obj
    if isinstance(obj, int):
        if abs(obj) >= 2**53:  # ``encode`` sends larger integers as floats; their hashes could be chosen
            raise SandboxError(tr("malformed value: an integer too large"))
        return obj
    if not isinstance(obj, dict):
        raise SandboxError(say("malformed value of type {type}", type=type(obj).__name__))
    kind = obj.get("t")
    if kind == "float":
        text = obj.get("v") if isinstance(obj.get("v"), str) else ""
        return reader.hashable(float(text) if _FLOAT.fullmatch(text) else math.nan)
    if kind in ("tensor", "ndarray"):
        return _array(obj, kind, reader)
    items = obj.get("items")
    if kind == "dict":
        if not isinstance(items, dict):
            raise SandboxError(tr("malformed dict"))
        return {str(k): _decode(v, depth + 1, reader) for k, v in items.items()}
    if kind in ("tuple", "list", "set", "frozenset"):
        if not isinstance(items, list):
            raise SandboxError(say("malformed {kind}", kind=kind))
        values = [_decode(v, depth + 1, reader) for v in items]
        if kind == "list":
            return values
        if kind == "tuple":
            return reader.hashable(tuple(values))
        try:
            pairs = [(hash(v), v) for v in values]
        except TypeError:  # unhashable items (tensors are hashable, lists are not) cannot be in a set
            raise SandboxError(say("malformed {kind}: its items are not hashable", kind=kind)) from None
        _refuse_collisions(pairs)  # before the set is built
        built = (frozenset if kind == "frozenset" else set)(values)
        return reader.hashable(built) if kind == "frozenset" else built
    if kind == "opaque":
        return Opaque(obj.get("type", "unknown"))
    raise SandboxError(say("malformed value of kind {kind!r}", kind=kind))


def check_report(report: Any, name: str) -> dict[str, Any]:
    """``checks.run_traced``'s report, checked to be plain counts."""
    entries = report.get("entries") if isinstance(report, dict) else None
    uses = report.get("uses") if isinstance(report, dict) else None
    if not (
        isinstance(report, dict)
        and all(type(report.get(k)) is int for k in ("ops", "jumps", "autograd", "largest"))
        and type(report.get("tampered")) is bool
        and all(isinstance(d, dict) and len(d) < 10_000 for d in (entries, uses))
        and all(type(v) is int for d in (entries, uses) for v in d.values())
    ):
        raise SandboxError(say("malformed report of the call of {name}", name=name))
    clean = {k: report[k] for k in ("ops", "jumps", "tampered", "autograd", "largest")}
    clean["entries"] = {str(k)[:200]: v for k, v in entries.items()}
    clean["uses"] = {str(k)[:20]: v for k, v in uses.items()}
    return clean
