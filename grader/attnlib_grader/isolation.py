"""Isolation of learner code: one bubblewrap sandbox per submission, entered by a fork of a warm zygote.

Importing torch costs about 3 s of CPU, so a process per submission that imports it would make 30
submissions take 45 s on two cores. Instead:

1. ``bwrap`` (Debian's ``bubblewrap``) builds the sandbox of one submission: new user, mount, PID, network,
   IPC, UTS and cgroup namespaces, uid and gid 65534 inside, no further user namespaces, a read-only root
   holding only ``/usr``, the Python environment and a clean copy of attnlib, an empty size-capped ``/tmp``,
   its own ``/proc`` and a minimal ``/dev``. Its only command is a shell that waits.
2. A zygote process, started once with a clean environment and command line, imported torch and attnlib and
   never receives anything but namespace pids and socket ends (no tests, no solutions, no learner code).
   For each sandbox it forks a child that joins the sandbox's namespaces (``setns``), drops every
   capability, sets ``no_new_privs`` and forks once more into the sandbox's PID namespace. Only then does the
   learner's code arrive, over a socket that only that process holds.
3. Killing ``bwrap`` kills the sandbox's PID 1 (``--die-with-parent``), and the kernel kills every process of
   that PID namespace with it: nothing a learner started outlives the grading of its submission.

Without isolation (``--no-isolation``) the zygote's child only starts a new session in an empty folder.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

NOBODY = 65534
TMP_BYTES = 64 * 2**20  # the sandbox's /tmp
CPU_PERIOD_US = 100_000  # the cpu cgroup's period; the quota is one period: one CPU per sandbox
_NAMESPACES = ("mnt", "pid", "net", "ipc", "uts", "cgroup", "user")  # user last: root joins the others first
# What the zygote imports once, so that no sandbox pays for it.
PRELOAD = (
    "torch",
    "numpy",
    "attnlib",
    "attnlib.grading",
    "attnlib_grader.sandbox",
    "attnlib.grading.checks",
    "attnlib.pretrained",  # the trained models that sets load (set 8: 0.4 s of imports and data per sandbox)
    "matplotlib.pyplot",  # sets that draw a map (set 8 q3): half a second of CPU per sandbox otherwise
    "attnlib.plotting",
)
# The environment of the zygote (and so of every learner): nothing of the grader's but the numeric settings.
_ENV_KEEP = ("OMP_", "MKL_", "ATEN_", "DNNL_", "ONEDNN_", "CUDA_VISIBLE_DEVICES", "PYTHONHASHSEED")


class IsolationError(Exception):
    """The sandbox could not be built (no bubblewrap, no user namespaces, ...)."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (os.path.exists("/usr/bin/bwrap") and "/usr/bin/bwrap") or None


# ------------------------------------------------------------------------------------------- the filesystem
def _blank(copy: Path, package: Path, switch_off: list[str]) -> None:
    """In the copy of attnlib, replace the source of every switched-off attnlib function, class or method by
    one that fails: reloading a module or executing its file gives back nothing that is switched off."""
    import ast
    import inspect

    from attnlib_grader.sandbox import _resolve, switched_off_message

    edits: dict[Path, dict[str, str]] = {}
    for dotted in switch_off:
        obj = _resolve(dotted)
        if not (inspect.isfunction(obj) or inspect.isclass(obj)):
            continue
        try:
            source = Path(inspect.getsourcefile(obj)).resolve()
            relative = source.relative_to(package)
        except (TypeError, ValueError, OSError):
            continue
        # a method (attnlib.layers.AdditiveScore.forward) is keyed "AdditiveScore.forward"
        edits.setdefault(copy / relative, {})[obj.__qualname__] = switched_off_message(dotted)
    for path, names in edits.items():
        try:  # a module that moved since it was imported: its functions are still switched off in memory
            lines = path.read_text().split("\n")
            tree = ast.parse("\n".join(lines))
        except (OSError, SyntaxError, ValueError):
            continue
        defs = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
        nodes = [(node.name, node) for node in tree.body if isinstance(node, defs) and node.name in names]
        nodes += [
            (f"{node.name}.{method.name}", method)
            for node in tree.body
            if isinstance(node, ast.ClassDef)
            for method in node.body
            if isinstance(method, defs[:2]) and f"{node.name}.{method.name}" in names
        ]
        for qualname, node in sorted(nodes, key=lambda n: n[1].lineno, reverse=True):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
            message, indent = names[qualname], " " * node.col_offset
            if isinstance(node, ast.ClassDef):
                stub = [
                    f"class {node.name}:",
                    "    def __init__(self, *args, **kwargs):",
                    f"        raise RuntimeError({message!r})",
                ]
            else:
                stub = [
                    f"{indent}def {node.name}(*args, **kwargs):",
                    f"{indent}    raise RuntimeError({message!r})",
                ]
            lines[first : node.end_lineno] = stub
        path.write_text("\n".join(lines))


def _package_copy(switch_off: list[str]) -> tuple[Path, Path]:
    """(where attnlib is imported from, a folder holding a copy of only its package files)."""
    import attnlib

    package = Path(attnlib.__file__).resolve().parent
    copy = Path(tempfile.mkdtemp(prefix="attnlib-package-"))
    shutil.copytree(
        package,
        copy / "attnlib",
        ignore=lambda folder, names: [
            n
            for n in names
            if not (Path(folder, n).is_dir() or n.endswith((".py", ".json", ".txt", ".pt")))
            or n == "__pycache__"
        ],
    )
    _blank(copy / "attnlib", package, switch_off)
    for path in [copy, *copy.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return package, copy / "attnlib"


def _python_roots() -> list[str]:
    roots = {
        os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    roots.add(os.path.realpath(os.path.dirname(os.path.realpath(sys.executable))))
    roots = {r for r in roots if r not in ("/", "/usr") and not r.startswith("/usr/")}
    # the outermost of nested roots is enough
    return sorted(r for r in roots if not any(r != o and r.startswith(o + os.sep) for o in roots))


class Filesystem:
    """The read-only view a sandbox gets: bwrap arguments built once per grading run."""

    def __init__(self, switch_off: list[str] = ()) -> None:
        package, self.copy = _package_copy(list(switch_off))
        roots = _python_roots()
        args: list[str] = ["--ro-bind", "/usr", "/usr"]
        for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
            if os.path.islink(top):
                args += ["--symlink", os.readlink(top), top]
            elif os.path.isdir(top):
                args += ["--ro-bind", top, top]
        for root in roots:
            args += ["--ro-bind", root, root]
        # attnlib itself: when installed from a checkout (editable), only a copy of its package files is seen,
        # at the path Python expects; the checkout around it (sources, bundles, results) is not.
        if not any(str(package).startswith(r + os.sep) for r in roots):
            args += ["--ro-bind", str(self.copy), str(package)]
        self.args = args
        self.visible = ["/usr", *roots, str(package)]

    def cleanup(self) -> None:
        shutil.rmtree(self.copy.parent, ignore_errors=True)


def bwrap_command(fs: Filesystem, info_fd: int) -> list[str]:
    return [
        bwrap_path() or "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",  # the sandbox's own shell (its PID 1) holds no capability either
        "ALL",
        "--die-with-parent",
        "--new-session",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        "--hostname",
        "sandbox",
        # The empty /tmp first: a venv or checkout that lives under /tmp is bound on top of it, not hidden.
        "--size",
        str(TMP_BYTES),
        "--tmpfs",
        "/tmp",
        *fs.args,
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        "/tmp",
        "--info-fd",
        str(info_fd),
        "--",
        "/bin/sh",
        "-c",
        "echo ready; read _",
    ]


class Cgroups:
    """A pids and a memory cgroup per sandbox, under the grader's own (cgroup v1 or v2), when it may create
    them: the caps then hold for all the learner's processes together, whatever they do."""

    def __init__(self) -> None:
        self.parents: dict[str, Path] = {}
        self.counter = 0
        self.lock = threading.Lock()
        try:
            lines = Path("/proc/self/cgroup").read_text().splitlines()
        except OSError:
            return
        own = {}
        for line in lines:
            _, controllers, path = line.split(":", 2)
            for controller in controllers.split(",") if controllers else ["unified"]:
                own[controller] = path.lstrip("/")
        for controller in ("memory", "pids", "cpu"):
            v1 = Path("/sys/fs/cgroup", controller, own.get(controller, "\0").lstrip("/"))
            if controller in own and (v1 / "cgroup.procs").is_file():
                self.parents[controller] = v1
        if not self.parents and "unified" in own:
            v2 = Path("/sys/fs/cgroup", own["unified"])
            with contextlib.suppress(OSError):
                (v2 / "cgroup.subtree_control").write_text("+memory +pids")
                self.parents = {"memory": v2, "pids": v2}
                with contextlib.suppress(OSError):  # the cpu controller is a bonus where it is delegated
                    (v2 / "cgroup.subtree_control").write_text("+cpu")
                    self.parents["cpu"] = v2
        if not {"memory", "pids"} <= set(self.parents):
            self.parents = {}  # both or nothing: the caps that bound a learner's processes together

    @property
    def available(self) -> bool:
        return bool(self.parents)

    def create(self, memory_bytes: int, processes: int) -> list[str]:
        """New cgroups with these caps; [] where the grader may not create them (the rlimits still hold)."""
        with self.lock:
            self.counter += 1
            name = f"attnlib-sandbox-{os.getpid()}-{self.counter}"
        made: list[str] = []
        try:
            for parent in self.parents.values():
                folder = parent / name
                if str(folder) in made:
                    continue
                folder.mkdir()
                made.append(str(folder))
                files = {
                    "memory.limit_in_bytes": memory_bytes,  # v1
                    "memory.memsw.limit_in_bytes": memory_bytes,  # v1 with swap accounting
                    "memory.max": memory_bytes,  # v2
                    "memory.swap.max": 0,  # v2
                    "pids.max": processes,
                    # one CPU for all the learner's processes together (a busy child per core starves nobody)
                    "cpu.cfs_period_us": CPU_PERIOD_US,  # v1
                    "cpu.cfs_quota_us": CPU_PERIOD_US,  # v1
                    "cpu.max": f"{CPU_PERIOD_US} {CPU_PERIOD_US}",  # v2
                }
                for file, value in files.items():
                    if (folder / file).is_file():
                        (folder / file).write_text(str(value))
        except OSError:
            self.remove(made)
            return []
        return made

    @staticmethod
    def remove(folders: list[str]) -> None:
        import time

        for folder in folders:
            for _ in range(50):  # the killed processes leave their cgroup within moments
                try:
                    os.rmdir(folder)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.02)


def _clean_env() -> dict[str, str]:
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "MPLBACKEND": "Agg"}
    env.update({k: v for k, v in os.environ.items() if k.startswith(_ENV_KEEP)})
    return env


class Box:
    """One bubblewrap sandbox; ``ns_pid`` is the pid (seen from outside) whose namespaces a child joins."""

    def __init__(self, fs: Filesystem, timeout: float = 30.0) -> None:
        info_r, info_w = os.pipe()
        try:
            self.process = subprocess.Popen(
                bwrap_command(fs, info_w),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(info_w,),
                env=_clean_env(),
                cwd="/",
                start_new_session=True,
            )
        except OSError as e:
            os.close(info_r)
            os.close(info_w)
            raise IsolationError(f"could not start bubblewrap: {e}") from None
        os.close(info_w)
        try:
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            line = self.process.stdout.readline() if ready else b""
            if line != b"ready\n":
                self.kill()
                error = self.process.stderr.read(2000).decode(errors="replace").strip()
                raise IsolationError(f"bubblewrap did not start a sandbox: {error or 'no answer'}")
            info = json.loads(os.read(info_r, 65536))
            self.ns_pid = int(info["child-pid"])
        finally:
            os.close(info_r)
        self.process.stdout.close()  # whatever the sandbox writes there now fails

    def kill(self) -> None:
        """Kill the sandbox and every process in it (its PID namespace dies with its PID 1)."""
        with contextlib.suppress(OSError):
            self.process.kill()
        with contextlib.suppress(Exception):
            self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            with contextlib.suppress(Exception):
                stream.close()


def check_bwrap() -> None:
    """Raise IsolationError unless bubblewrap can build a sandbox here."""
    if bwrap_path() is None:
        raise IsolationError(
            "bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
        )
    fs = Filesystem()
    try:
        Box(fs).kill()
    finally:
        fs.cleanup()


# ---------------------------------------------------------------------------------------------- the zygote
_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG, _PR_CAPBSET_DROP, _PR_SET_NO_NEW_PRIVS, _PR_CAP_AMBIENT = 1, 24, 38, 47


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


def _enter(request: dict[str, Any], fd: int) -> None:
    """In a fresh fork of the zygote: become the learner's process, then serve the grader on ``fd``."""
    from attnlib_grader import sandbox

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
            child = os.fork()  # the PID namespace applies to children only
            if child:
                os.close(fd)
                os.waitpid(child, 0)
                os._exit(0)
            _drop_privileges()
        else:
            os.chdir(request["workdir"])
            os.setsid()
        sandbox.serve(fd)
        status = 0
    except BaseException:  # noqa: B036 - nothing may return into the zygote's loop
        pass
    os._exit(status)


def _zygote_main(fd: int) -> None:
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    control = socket.socket(fileno=fd)
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(Exception):
            importlib.import_module(name)
    import torch

    torch.set_num_threads(1)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    control.sendall(b"ready\n")
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 4096, 1)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        try:
            request = json.loads(message)
            pid = os.fork() if fds else -1
        except Exception:  # noqa: BLE001 - a bad request gets pid -1
            pid = -1
        if pid == 0:
            control.close()
            _enter(request, fds[0])
        for extra in fds:
            os.close(extra)
        control.sendall(json.dumps({"pid": pid}).encode() + b"\n")


_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the folder holding attnlib_grader
# The zygote's whole command line: it finds this package whether it is installed or run from the repository.
_ZYGOTE_START = (
    "import sys; sys.path.insert(0, {folder!r}); "
    "from attnlib_grader import isolation; isolation._zygote_main({fd})"
)


class Zygote:
    """The grader's handle on the zygote process (started on first use, restarted if it died)."""

    def __init__(self) -> None:
        self.process: subprocess.Popen | None = None
        self.control: socket.socket | None = None
        self.lock = threading.Lock()
        self.folder = tempfile.mkdtemp(prefix="attnlib-zygote-")

    def _start(self, timeout: float) -> None:
        ours, theirs = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE_START.format(folder=_HERE, fd=theirs.fileno())],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=_clean_env(),
            cwd=self.folder,
        )
        theirs.close()
        ours.settimeout(timeout)
        try:
            ready = ours.recv(16)
        except OSError:
            ready = b""
        if ready != b"ready\n":
            self.process.kill()
            raise IsolationError("the zygote process did not start (could it import torch and attnlib?)")
        ours.settimeout(30)
        self.control = ours

    def start(self, timeout: float = 600.0) -> None:
        with self.lock:
            if self.process is None or self.process.poll() is not None:
                self._start(timeout)

    def fork(self, fd: int, ns_pid: int | None, workdir: str | None, cgroups: list[str] = ()) -> int:
        """A new learner process that serves on the other end of ``fd``; returns its pid (outside)."""
        with self.lock:
            for attempt in (1, 2):
                if self.process is None or self.process.poll() is not None:
                    self._start(600.0)
                try:
                    request = {"ns_pid": ns_pid, "workdir": workdir, "cgroups": list(cgroups)}
                    request = json.dumps(request).encode()
                    socket.send_fds(self.control, [request], [fd])
                    reply = b""
                    while not reply.endswith(b"\n"):
                        chunk = self.control.recv(256)
                        if not chunk:
                            raise OSError("the zygote hung up")
                        reply += chunk
                    pid = int(json.loads(reply)["pid"])
                    if pid > 0:
                        return pid
                    raise OSError("the zygote could not fork")
                except (OSError, ValueError, KeyError) as e:
                    with contextlib.suppress(Exception):
                        self.process.kill()
                    self.process = None
                    if attempt == 2:
                        raise IsolationError(f"could not start the notebook's process ({e})") from None
        raise AssertionError("unreachable")

    def stop(self) -> None:
        with self.lock:
            if self.process is not None:
                with contextlib.suppress(Exception):
                    self.process.kill()
                    self.process.wait(5)
            self.process = None


_ZYGOTE: Zygote | None = None


def zygote() -> Zygote:
    global _ZYGOTE
    if _ZYGOTE is None:
        _ZYGOTE = Zygote()
    return _ZYGOTE
