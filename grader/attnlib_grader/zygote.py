"""The zygote: one process that imported torch and attnlib once, and forks every learner's process.

Importing torch costs about 3 s of CPU, so a process per submission that imports it would make 30 submissions
take 45 s on two cores. The zygote, started once with a clean environment and command line, imports torch
and attnlib, switches off what its set switches off (``switching.switch_off``: the set's bundle names it; a
zygote per switch-off, so that no sandbox repeats that heap-wide search, 0.1-0.4 s each), and never receives
anything but that list, namespace pids, cgroup folders and socket ends (no tests, no solutions, no learner
code). For each sandbox it forks a child that joins the cgroups and the sandbox's
namespaces (``setns``), drops every capability, sets ``no_new_privs`` and forks once more into the sandbox's
PID namespace; only then does that process run ``child.serve``, and the learner's code arrive over a socket
that only it holds. Its heap is frozen (``gc.freeze``) after the switch-off and the warming: no learner's
process scans torch's 170,000 objects in a collection (0.07 s at its first).
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import json
import os
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from attnlib.grading.messages import say, tr
from attnlib_grader import child  # noqa: F401 - run in the zygote's children (child.serve)
from attnlib_grader.isolation import IsolationError, clean_env

_NAMESPACES = ("mnt", "pid", "net", "ipc", "uts", "cgroup", "user")  # user last: root joins the others first
# What the zygote imports once, so that no sandbox pays for it; the sandbox sees none of the grader's files,
# so every module of attnlib_grader that runs in it is imported here.
PRELOAD = (
    "torch",
    "numpy",
    "attnlib",
    "attnlib.grading",
    "attnlib_grader.child",
    "attnlib_grader.codec",
    "attnlib_grader.switching",
    "attnlib.grading.checks",
    "attnlib.grading.implementations",
    "attnlib.pretrained",  # the trained models that sets load (set 8: 0.4 s of imports and data per sandbox)
    "matplotlib.pyplot",  # sets that draw a map (set 8 q3): half a second of CPU per sandbox otherwise
    "attnlib.plotting",
)


def _warm() -> None:
    """Cached work that a set's given cells repeat in every sandbox, done once here so that every later fork
    inherits it: set 8's cells build chapter 8's corpus (0.4 s of CPU per sandbox otherwise)."""
    with contextlib.suppress(Exception):
        from attnlib.data.translation import make_translation_pairs

        make_translation_pairs(0, 1)  # fills the cache of every sentence of the grammar
    from attnlib_grader import switching

    switching.REACHED.clear()  # had it touched something switched off, no learner would be blamed for it


_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_CHILD_SUBREAPER = 1, 24, 36
_PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT = 38, 47


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _drop_privileges() -> None:
    """No capability in any set, and no way back (no_new_privs); fails closed."""
    for cap in range(64):
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    _libc.prctl(_PR_CAP_AMBIENT, 4, 0, 0, 0)  # PR_CAP_AMBIENT_CLEAR_ALL
    header, data = _CapHeader(0x20080522, 0), (_CapData * 2)()
    if _libc.capset(ctypes.byref(header), data) != 0:
        raise OSError(ctypes.get_errno(), "capset")
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    status = Path("/proc/self/status").read_text()
    caps = {
        line.split(":")[0]: int(line.split()[1], 16) for line in status.splitlines() if line.startswith("Cap")
    }
    if any(caps.get(k) for k in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")):
        raise OSError(f"capabilities left: {caps}")


def _become(uid: int, workdir: str) -> None:
    """Without a sandbox (Gradescope's fallback, ``Isolation(run_as=uid)``): the learner's process as the
    unprivileged user ``uid``, owning only its empty working folder; no capability, no way back."""
    os.chown(workdir, uid, uid)
    for cap in range(64):  # while it still may (CAP_SETPCAP)
        _libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0)
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)
    if os.getuid() != uid or os.geteuid() != uid or os.getegid() != uid:
        raise OSError("could not become the unprivileged user")
    _drop_privileges()
    # RLIMIT_NPROC counts all of the user's processes: this one and as many more as a sandbox may start
    # (fewer while an earlier sandbox's process of the same user is still being reaped)
    tasks = 1 + child.MAX_PROCESSES
    resource.setrlimit(resource.RLIMIT_NPROC, (tasks, tasks))


def end_user(uid: int) -> None:
    """Gradescope's fallback: end every process of the unprivileged user ``uid`` (its learner's). Without a
    PID namespace, a process that left its session (``setsid``) outlives the kill of the session;
    ``kill -9 -1`` run as that user reaches exactly the processes of that user, and no other."""
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        as_user = {"user": uid, "group": uid, "extra_groups": [], "env": clean_env(), "cwd": "/"}
        subprocess.run(["/bin/sh", "-c", "kill -9 -1"], timeout=30, **as_user, **quiet)


def _enter(request: dict[str, Any], fd: int) -> None:
    """In a fresh fork of the zygote: become the learner's process, then serve the grader on ``fd``."""
    status = 70
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        devnull = os.open(os.devnull, os.O_RDWR)
        for target in (0, 1, 2):
            os.dup2(devnull, target)
        keep = sorted({0, 1, 2, fd})
        for low, high in zip(keep, [*keep[1:], 65536], strict=True):
            os.closerange(low + 1, high)
        for folder in request.get("cgroups") or []:  # before anything else: all it starts is counted
            Path(folder, "cgroup.procs").write_text(str(os.getpid()))
        ns_pid = request.get("ns_pid")
        if ns_pid:
            handles = [os.open(f"/proc/{int(ns_pid)}/ns/{n}", os.O_RDONLY) for n in _NAMESPACES]
            os.setgroups([])
            for name, handle in zip(_NAMESPACES, handles, strict=True):
                if _libc.setns(handle, 0) != 0:
                    raise OSError(ctypes.get_errno(), f"setns {name}")
                os.close(handle)
            os.chdir("/tmp")
            os.setsid()
            inner = os.fork()  # the PID namespace applies to children only
            if inner:
                os.close(fd)
                os.waitpid(inner, 0)
                os._exit(0)
            _drop_privileges()
        else:
            os.chdir(request["workdir"])
            os.setsid()
            if request.get("run_as") is not None:
                _become(int(request["run_as"]), request["workdir"])
        child.serve(fd)
        status = 0
    except BaseException:  # noqa: B036 - nothing may return into the zygote's loop
        pass
    os._exit(status)


def _read_line(sock: socket.socket, limit: int = 2**20) -> bytes:
    """One line from ``sock`` (both ends of the control socket); b"" where it ends first or runs too long."""
    line = b""
    while not line.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk or len(line) > limit:
            return b""
        line += chunk
    return line


def _zygote_main(fd: int) -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    # Orphans of learner processes outside a sandbox (--no-isolation, Gradescope's fallback) become the
    # zygote's, which reaps them (SIGCHLD ignored, below): in a container whose PID 1 reaps nothing, their
    # zombies would count against the user's process limit until no learner process could start.
    _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    control = socket.socket(fileno=fd)
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    # The modules of every implementation of every equation, imported once here (resolving a switch-off
    # imports them; torch.nn.attention.varlen pulls torch._dynamo: set 9, 1.7 -> 0.5 s per submission).
    with contextlib.suppress(Exception):
        from attnlib.grading.implementations import EQUATIONS
        from attnlib_grader import switching

        for dotted in switching.resolve_equations(list(EQUATIONS))[0]:
            switching.resolve(dotted)
    with contextlib.suppress(Exception):  # the catalogues, read here: a sandbox may not see their files
        from attnlib.grading import messages

        for language in messages.LANGUAGES:
            messages.catalogue(language)
    import torch

    torch.set_num_threads(1)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    _serve(control)


def _serve(control: socket.socket) -> None:
    """Switch off what the grader sends first, say "ready", then fork on each request: a learner's process,
    or (``{"zygote": true}``, asked of the zygote that switched nothing off) the zygote of another set, which
    serves on the socket end it is sent. Never returns."""
    from attnlib_grader import switching

    switch = json.loads(_read_line(control) or os._exit(0))
    if switch["switch_off"] or switch["operators"]:
        switching.switch_off(switch["switch_off"], switch["operators"])  # an error: the zygote never starts
    gc.freeze()  # after the switch-off (its search reads every generation; switching unfreezes first)
    control.sendall(b"ready\n")
    warmed = False
    while True:
        as_zygote = False
        try:
            message, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        try:
            request = json.loads(message)
            as_zygote = request.get("zygote") is True and switching.APPLIED is None
            pid = os.fork() if fds and (as_zygote or not request.get("zygote")) else -1
        except Exception:  # noqa: BLE001 - a bad request gets pid -1
            pid = -1
        if pid == 0:
            control.close()
            if as_zygote:  # dies with this zygote, as this one dies with the grader
                _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
                _serve(socket.socket(fileno=fds[0]))
            _enter(request, fds[0])
        for extra in fds:
            os.close(extra)
        control.sendall(json.dumps({"pid": pid}).encode() + b"\n")
        if not warmed and pid > 0 and not as_zygote:  # after the first learner's fork (the self-check's,
            warmed = True  # running meanwhile on the other core); a set's zygote warms its own
            _warm()
            gc.freeze()


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding attnlib_grader
# The zygote's whole command line: it finds this package whether it is installed or run from the repository.
_ZYGOTE_START = (
    "import sys; sys.path.insert(0, {folder!r}); from attnlib_grader import zygote; zygote._zygote_main({fd})"
)


class Zygote:
    """The grader's handle on a zygote (started on first use, restarted if it died). The one that switches
    nothing off is a process of its own; a set's is forked from it (torch imported already: a fraction of a
    second) and applies the set's switch-off before it says it is ready."""

    def __init__(self, switch_off: list[str] = (), operators: list[str] = ()) -> None:
        self.switch = {"switch_off": list(switch_off), "operators": list(operators)}
        self.plain = not (self.switch["switch_off"] or self.switch["operators"])
        self.process: subprocess.Popen | None = None  # the plain zygote's process
        self.pid: int | None = None  # a set's zygote: a child of the plain one
        self.control: socket.socket | None = None
        self.lock = threading.Lock()
        self.folder = tempfile.mkdtemp(prefix="attnlib-zygote-") if self.plain else None

    def _alive(self) -> bool:
        if self.process is not None:
            return self.process.poll() is None
        if self.pid is None or self.control is None:
            return False
        try:
            os.kill(self.pid, 0)
        except OSError:
            return False
        return True

    def _start(self, timeout: float, meanwhile: Callable[[], None] | None = None) -> None:
        ours, theirs = socket.socketpair()
        try:
            if self.plain:
                self.process = subprocess.Popen(
                    [sys.executable, "-c", _ZYGOTE_START.format(folder=_HERE, fd=theirs.fileno())],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    env=clean_env(),
                    cwd=self.folder,
                )
            else:
                plain = zygote()
                plain.start(timeout, meanwhile)
                meanwhile = None
                self.pid = plain._request({"zygote": True}, theirs.fileno())
        finally:
            theirs.close()
        with contextlib.suppress(OSError):  # a zygote that died at once: no "ready" below says so
            ours.sendall(json.dumps(self.switch).encode() + b"\n")
        if meanwhile is not None:  # this process's own work, done while the zygote imports torch
            meanwhile()
        ours.settimeout(timeout)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready\n":
            self._kill()
            raise IsolationError(tr("the zygote process did not start (could it import torch and attnlib?)"))
        ours.settimeout(30)
        self.control = ours
        if self.process is not None:
            self.pid = self.process.pid

    def start(self, timeout: float = 600.0, meanwhile: Callable[[], None] | None = None) -> None:
        """Start the zygote unless it runs; ``meanwhile`` (if given) runs here while it starts."""
        with self.lock:
            if not self._alive():
                self._start(timeout, meanwhile)
            elif meanwhile is not None:
                meanwhile()

    def _request(self, request: dict[str, Any], fd: int) -> int:
        """Send one request with the socket end ``fd``; the pid of what the zygote forked for it."""
        with self.lock:
            for attempt in (1, 2):
                if not self._alive():
                    self._start(600.0)
                try:
                    socket.send_fds(self.control, [json.dumps(request).encode()], [fd])
                    reply = _read_line(self.control, 256)
                    if not reply:
                        raise OSError(tr("the zygote hung up"))
                    pid = int(json.loads(reply)["pid"])
                    if pid > 0:
                        return pid
                    raise OSError(tr("the zygote could not fork"))
                except (OSError, ValueError, KeyError) as e:
                    self._kill()
                    if attempt == 2:
                        said = say("could not start the notebook's process ({error})", error=str(e))
                        raise IsolationError(said) from None
        raise AssertionError("unreachable")

    def fork(
        self,
        fd: int,
        ns_pid: int | None,
        workdir: str | None,
        cgroups: list[str] = (),
        run_as: int | None = None,
    ) -> int:
        """A new learner process that serves on the other end of ``fd`` (as the user ``run_as`` where one is
        given and there is no sandbox); returns its pid (outside)."""
        request = {"ns_pid": ns_pid, "workdir": workdir, "cgroups": list(cgroups), "run_as": run_as}
        return self._request(request, fd)

    def _kill(self) -> None:
        with contextlib.suppress(Exception):
            if self.process is not None:
                self.process.kill()
                self.process.wait(5)
            elif self.pid is not None:
                os.kill(self.pid, signal.SIGKILL)  # reaped by the plain zygote (SIGCHLD ignored there)
        with contextlib.suppress(Exception):
            if self.control is not None:
                self.control.close()
        self.process, self.pid, self.control = None, None, None

    def stop(self) -> None:
        with self.lock:
            self._kill()


_ZYGOTES: dict[tuple, Zygote] = {}  # by switch-off, the most recently used last
_ZYGOTES_LOCK = threading.Lock()
MAX_ZYGOTES = 4  # the plain one and three sets' (a grading run uses one; the test suite grades many sets)


def zygote(switch_off: list[str] = (), operators: list[str] = ()) -> Zygote:
    """The zygote of this switch-off (started on first use); the least used past MAX_ZYGOTES stops."""
    key = (tuple(switch_off), tuple(operators))
    with _ZYGOTES_LOCK:
        found = _ZYGOTES.pop(key, None) or Zygote(*key)
        _ZYGOTES[key] = found
        evicted = [k for k in _ZYGOTES if k != ((), ()) and k != key][: max(0, len(_ZYGOTES) - MAX_ZYGOTES)]
        stopping = [_ZYGOTES.pop(k) for k in evicted]
    for old in stopping:  # outside the lock: stop() waits for a zygote that may be starting
        old.stop()
    return found
