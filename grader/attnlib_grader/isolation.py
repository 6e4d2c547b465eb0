"""Isolation of learner code: one bubblewrap sandbox per submission (its filesystem, box and cgroups).

1. ``bwrap`` (Debian's ``bubblewrap``) builds the sandbox of one submission: new user, mount, PID, network,
   IPC, UTS and cgroup namespaces, uid and gid 65534 inside, no further user namespaces, a read-only root
   holding only ``/usr``, the Python environment (at its real path and at the path it was invoked by, where
   a symbolic link leads to it) and a clean copy of attnlib, an empty size-capped ``/tmp``, its own
   ``/proc`` and a read-only minimal ``/dev`` with a size-capped ``/dev/shm``. Its only command is a shell
   that waits.
2. The zygote (``attnlib_grader.zygote``) forks the learner's process, which joins the sandbox's cgroups and
   namespaces, drops every capability and only then receives the learner's code.
3. Killing ``bwrap`` kills the sandbox's PID 1 (``--die-with-parent``), and the kernel kills every process of
   that PID namespace with it: nothing a learner started outlives the grading of its submission.

Without isolation (``--no-isolation``) the zygote's child only starts a new session in an empty folder.
The cgroups (where the grader may create them) cap memory, processes and CPU of a sandbox's processes
together, and ``Cgroups.cpu_seconds`` reads the CPU time they used: what the submission's budget is charged
(``processes_cpu_seconds`` where no cgroup accounts it).
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from attnlib.grading.messages import say, tr
from attnlib_grader import child, switching

NOBODY = 65534
TMP_BYTES = 64 * 2**20  # the sandbox's /tmp
SHM_BYTES = 16 * 2**20  # the sandbox's /dev/shm (the rest of /dev is read-only)
CPU_PERIOD_US = 100_000  # the cpu cgroup's period; the quota is one period: one CPU per sandbox
# The environment of the zygote (and so of every learner): nothing of the grader's but the numeric settings.
# (PYTHONHASHSEED fixes set order as in the notebooks; strings hash with SipHash, so knowing the seed does not
# let a learner choose many strings of one hash: the codec's collision check is for numbers and tuples.)
_ENV_KEEP = ("OMP_", "MKL_", "ATEN_", "DNNL_", "ONEDNN_", "CUDA_VISIBLE_DEVICES", "PYTHONHASHSEED")


class IsolationError(Exception):
    """The sandbox could not be built (no bubblewrap, no user namespaces, ...)."""


def bwrap_path() -> str | None:
    return shutil.which("bwrap") or (os.path.exists("/usr/bin/bwrap") and "/usr/bin/bwrap") or None


# ------------------------------------------------------------------------------------------- the filesystem
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
    switching.blank_sources(copy / "attnlib", package, switch_off)
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


def _links(roots: list[str], paths: list[str]) -> list[tuple[str, str]]:
    """(real path, link) for the first symbolic link on the way to each of ``paths`` (the Python environment
    as it was invoked, the entries of ``sys.path``) that leads into ``roots``: inside the sandbox the same
    link leads to the same bound folder, so a module imported later by its invoked path is found."""
    found: dict[str, str] = {}
    for path in paths:
        if not (isinstance(path, str) and os.path.isabs(path) and os.path.exists(path)):
            continue
        real = os.path.realpath(path)
        if real == os.path.abspath(path) or not any(real == r or real.startswith(r + os.sep) for r in roots):
            continue
        at = "/"
        for part in Path(os.path.abspath(path)).parts[1:]:
            at = os.path.join(at, part)
            if os.path.islink(at):
                found.setdefault(at, os.path.realpath(at))
                break
    return [(target, link) for link, target in sorted(found.items())]


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
        invoked = [sys.prefix, sys.exec_prefix, sys.base_prefix, os.path.dirname(sys.executable), *sys.path]
        for target, link in _links(roots, invoked):  # a venv reached through a symbolic link
            parents = list(Path(link).parents)[-2::-1]  # from the top, "/" left out
            for parent in parents:
                args += ["--perms", "0755", "--dir", str(parent)]
            args += ["--symlink", target, link]
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
        "--size",  # /dev is a tmpfs of half the machine's memory: only a small /dev/shm stays writable
        str(SHM_BYTES),
        "--tmpfs",
        "/dev/shm",
        "--remount-ro",
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
    """A pids, a memory and (where delegated) a cpu cgroup per sandbox, under the grader's own (cgroup v1 or
    v2), when it may create them: the caps then hold for all the learner's processes together, whatever they
    do, and their CPU time is read from the cgroup (v1 ``cpuacct``, v2 ``cpu.stat``)."""

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
        for controller in ("memory", "pids", "cpu", "cpuacct"):
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
    def cpu_seconds(folders: list[str]) -> float | None:
        """CPU seconds used by all processes of these cgroups together, or None where none accounts it."""
        for folder in folders:
            with contextlib.suppress(OSError, ValueError):
                return int(Path(folder, "cpuacct.usage").read_text()) / 1e9  # v1, nanoseconds
        for folder in folders:
            with contextlib.suppress(OSError, ValueError, StopIteration):
                stat = Path(folder, "cpu.stat").read_text().split()
                return int(stat[stat.index("usage_usec") + 1]) / 1e6  # v2, microseconds
        return None

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


_TICKS = os.sysconf("SC_CLK_TCK")


def processes_cpu_seconds(pid: int | None, namespace_of: int | None) -> float:
    """Without cgroup accounting: the CPU seconds of the processes in the PID namespace of ``namespace_of``
    (a sandbox), or else of the session of ``pid``, with the children they waited for."""
    try:
        namespace = os.stat(f"/proc/{namespace_of}/ns/pid").st_ino if namespace_of else None
    except OSError:
        return 0.0
    total = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if namespace is not None and os.stat(f"/proc/{entry}/ns/pid").st_ino != namespace:
                continue
            handle = os.open(f"/proc/{entry}/stat", os.O_RDONLY)  # plain calls: this runs for every process
            try:
                fields = os.read(handle, 4096).rpartition(b")")[2].split()
            finally:
                os.close(handle)
            if namespace is None and int(fields[3]) != pid:  # the session id
                continue
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
        except (OSError, ValueError, IndexError):
            continue
    return total / _TICKS


def clean_env() -> dict[str, str]:
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
                env=clean_env(),
                cwd="/",
                start_new_session=True,
            )
        except OSError as e:
            os.close(info_r)
            os.close(info_w)
            raise IsolationError(say("could not start bubblewrap: {error}", error=str(e))) from None
        os.close(info_w)
        try:
            ready, _, _ = select.select([self.process.stdout], [], [], timeout)
            line = self.process.stdout.readline() if ready else b""
            if line != b"ready\n":
                self.kill()
                error = self.process.stderr.read(2000).decode(errors="replace").strip()
                said = error or tr("no answer")
                raise IsolationError(say("bubblewrap did not start a sandbox: {error}", error=said))
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
            tr("bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        )
    fs = Filesystem()
    try:
        Box(fs).kill()
    finally:
        fs.cleanup()


class Isolation:
    """How sandboxes are built in one grading run: bubblewrap (``isolated``) or plain processes (run as the
    user ``run_as`` where given: Gradescope's fallback); ``switch_off`` lists the dotted implementations the
    set switches off (their sources are blanked)."""

    def __init__(self, isolated: bool = True, switch_off: list[str] = (), run_as: int | None = None) -> None:
        self.isolated, self.run_as = isolated, None if isolated else run_as
        self.filesystem = Filesystem(switch_off) if isolated else None
        self.cgroups = Cgroups() if isolated else None

    def cgroups_for(self, config: dict) -> list[str]:
        """A submission's cgroups: its memory cap plus 1 GiB for all its processes together, and as many
        processes as it may add, with the learner's process and the one that waits for it outside its PID
        namespace; [] where the grader may not create cgroups."""
        if not self.cgroups.available:
            return []
        memory = (int(config.get("memory_limit_mb", child.MEMORY_LIMIT_MB)) + 1024) * 2**20
        return self.cgroups.create(memory, 2 + int(config.get("max_processes", child.MAX_PROCESSES)))

    def close(self) -> None:
        if self.filesystem is not None:
            self.filesystem.cleanup()
