"""The bubblewrap sandbox: a learner's code sees none of the course's files, the submissions or the grader,
nothing it starts outlives it, its processes and memory are capped all together, and the grading command
refuses to run without it unless told."""

import os
import time
from pathlib import Path

import nbformat
import pytest
from attnlib_grader import isolation
from attnlib_grader.grade import find_submissions, grade_folder, main
from attnlib_grader.sandbox import MAX_PROCESSES, Isolation, Sandbox, SandboxError
from exercise_helpers import GRADER_SECRET, ROOT, exercises

SET = "03_dot_product_attention"

pytestmark = pytest.mark.skipif(isolation.bwrap_path() is None, reason="bubblewrap is not installed")


@pytest.fixture(scope="module")
def sandboxed():
    box = Isolation(isolated=True, switch_off=[])
    yield box
    box.close()


def run(isolated, cells, names, **config):
    sandbox = Sandbox(cells, {"names": names, **config}, "/tmp", isolation=isolated)
    sandbox.start()
    return sandbox


@pytest.mark.slow  # grades a notebook in the sandbox
def test_a_blank_notebook_finds_no_course_file_submission_or_grader(tmp_path):
    """Graded end to end: the notebook looks for the masters, the bundles, the submissions folder and the
    grader's /proc entry, and reports in an error message what it found (none)."""
    submissions, out = tmp_path / "submissions", tmp_path / "results"
    submissions.mkdir()
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
    targets = [
        ROOT / "exercises" / "source",
        ROOT / "exercises" / "source" / f"{SET}.ipynb",
        ROOT / "exercises" / "dist",
        ROOT / "exercises",
        ROOT / "tests",
        submissions,
        submissions / "classmate.ipynb",
        bundle,
        Path(f"/proc/{os.getpid()}"),
        Path(f"/proc/{os.getpid()}/environ"),
    ]
    probe = (
        "import os\n"
        f"targets = {[str(t) for t in targets]!r}\n"
        "found = [t for t in targets if os.path.exists(t)]\n"
        f"found += [k for k, v in os.environ.items() if {GRADER_SECRET!r} in v]\n"
        "visible = sorted(os.listdir(os.path.dirname(os.path.dirname(__import__('attnlib').__file__))))\n"
        "raise RuntimeError(f'FOUND={found} VISIBLE={visible}')"
    )
    blank = exercises.submission(SET, cells_after=[probe], untouched=True)
    nbformat.write(blank, submissions / "blank.ipynb")
    nbformat.write(exercises.submission(SET), submissions / "classmate.ipynb")
    results = {r.name: r for r in grade_folder(bundle, submissions, out, jobs=1, time_limit=10)}
    notes = " ".join(results["blank"].notes)
    assert "FOUND=[] VISIBLE=['.venv', 'attnlib']" in notes, notes
    assert all(q.score == 0 for q in results["blank"].questions)


def test_the_learner_is_nobody_without_capabilities_network_or_other_processes(sandboxed):
    cell = (
        "import os, socket\n"
        "def facts():\n"
        "    lines = open('/proc/self/status').read().splitlines()\n"
        "    status = dict(line.split(':\\t') for line in lines if ':\\t' in line)\n"
        "    try:\n"
        "        socket.create_connection(('1.1.1.1', 53), timeout=2)\n"
        "        network = 'open'\n"
        "    except OSError as e:\n"
        "        network = type(e).__name__\n"
        "    processes = [p for p in os.listdir('/proc') if p.isdigit()]\n"
        "    caps = status['CapEff'], status['NoNewPrivs']\n"
        "    return os.getuid(), os.getgid(), *caps, network, len(processes)\n"
    )
    sandbox = run(sandboxed, [cell], ["facts"])
    try:
        uid, gid, caps, no_new_privs, network, processes = sandbox.call("facts", (), {}, 20)
    finally:
        sandbox.kill()
    assert (uid, gid, int(caps, 16), no_new_privs) == (65534, 65534, 0, "1")
    assert network != "open"
    assert processes <= 3  # the sandbox's PID 1, its shell, the learner's process


def test_nothing_the_learner_started_outlives_the_sandbox(sandboxed):
    marker = "31.41592"
    # started by a call: what the cells start ends once the cells have run (child._end_strays)
    cell = (
        "import os, time\n"
        "def alive():\n"
        "    if os.fork() == 0:\n"
        "        os.setsid()\n"
        "        if os.fork() == 0:\n"
        f"            os.execv('/bin/sleep', ['sleep', '{marker}'])\n"
        "        os._exit(0)\n"
        "    time.sleep(0.5)\n"
        "    return True\n"
    )

    def sleepers():
        found = []
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                if Path(f"/proc/{pid}/cmdline").read_bytes() == f"sleep\0{marker}\0".encode():
                    found.append(pid)
            except OSError:
                pass
        return found

    sandbox = run(sandboxed, [cell], ["alive"])
    assert sandbox.call("alive", (), {}, 20) is True
    assert sleepers(), "the daemon should run while the sandbox does"
    sandbox.kill()
    deadline = time.monotonic() + 5
    while sleepers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sleepers()


def test_processes_are_capped_for_all_descendants(sandboxed):
    if not sandboxed.cgroups.available:
        pytest.skip("the grader may not create cgroups here")
    cell = (
        "import os, time\n"
        "def fork_all():\n"
        "    made = 0\n"
        "    for _ in range(200):\n"
        "        try:\n"
        "            if os.fork() == 0:\n"
        "                time.sleep(30)\n"
        "                os._exit(0)\n"
        "        except OSError:\n"
        "            break\n"
        "        made += 1\n"
        "    return made\n"
    )
    sandbox = run(sandboxed, [cell], ["fork_all"])
    try:
        made = sandbox.call("fork_all", (), {}, 20)
    finally:
        sandbox.kill()
    assert 0 < made <= MAX_PROCESSES


def test_memory_is_capped_for_all_processes_together(sandboxed):
    """Six processes of 400 MB each stay under the 512 MB cap per process but not under the sandbox's total
    (512 MB + 1 GiB): not all of them can hold their memory at once."""
    if not sandboxed.cgroups.available:
        pytest.skip("the grader may not create cgroups here")
    cell = (
        "import os, time\n"
        "def hold():\n"
        "    r, w = os.pipe()\n"
        "    for _ in range(6):\n"
        "        try:\n"
        "            if os.fork() == 0:\n"
        "                block = bytearray(400 * 2**20)\n"
        "                for i in range(0, len(block), 4096):\n"
        "                    block[i] = 1\n"
        "                os.write(w, b'x')\n"
        "                time.sleep(30)\n"
        "                os._exit(0)\n"
        "        except OSError:\n"
        "            pass\n"
        "    os.close(w)\n"
        "    deadline, held = time.time() + 8, 0\n"
        "    while time.time() < deadline and held < 6:\n"
        "        held += len(os.read(r, 6))\n"
        "    return held\n"
    )
    sandbox = run(sandboxed, [cell], ["hold"], memory_limit_mb=512, max_processes=8)
    try:
        held = sandbox.call("hold", (), {}, 30)
    except SandboxError:  # the kernel chose the learner's own process: contained as well
        held = 0
    finally:
        sandbox.kill()
    assert held < 6


def test_cpu_is_capped_for_all_processes_together(sandboxed):
    """Three busy children for 2 s of wall time use at most about one CPU between them (the sandbox's cpu
    cgroup), whatever the machine's load: without it they could take every core."""
    if "cpu" not in sandboxed.cgroups.parents:
        pytest.skip("the grader may not create cpu cgroups here")
    cell = (
        "import os, time\n"
        "def burn():\n"
        "    start, children = time.time(), []\n"
        "    for _ in range(3):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            while time.time() < start + 2:\n"
        "                pass\n"
        "            os._exit(0)\n"
        "        children.append(pid)\n"
        "    for pid in children:\n"
        "        os.waitpid(pid, 0)\n"
        "    times = os.times()\n"
        "    return (times.children_user + times.children_system) / (time.time() - start)\n"
    )
    sandbox = run(sandboxed, [cell], ["burn"])
    try:
        cpus = sandbox.call("burn", (), {}, 20)
    finally:
        sandbox.kill()
    assert 0 < cpus <= 1.2, cpus


def test_the_sandbox_shell_holds_no_capability():
    """bwrap's own PID 1 (a shell that waits) is started with --cap-drop ALL."""
    fs = isolation.Filesystem()
    try:
        command = isolation.bwrap_command(fs, 3)
    finally:
        fs.cleanup()
    assert command[command.index("--cap-drop") + 1] == "ALL"


def test_notebooks_are_regular_files_named_ipynb_and_odd_names_are_written_safely(tmp_path):
    folder = tmp_path / "submissions"
    folder.mkdir()
    blank = nbformat.writes(exercises.submission(SET, untouched=True))
    (folder / "UPPER.IPYNB").write_text(blank)
    (Path(os.fsdecode(bytes(folder) + b"/caf\xe9.ipynb"))).write_text(blank)
    (folder / "=formula.ipynb").write_text(blank)
    (folder / "folder.ipynb").mkdir()
    outside = tmp_path / "solutions.ipynb"
    outside.write_text(nbformat.writes(exercises.submission(SET)))
    (folder / "link.ipynb").symlink_to(outside)
    (folder / "notes.txt").write_text("not a notebook")
    found, skipped = find_submissions(folder)
    # labels (report.label): one-to-one, "%XX" for a byte that is not UTF-8, the extension's other case kept
    assert sorted(name for name, _ in found) == ["=formula", "UPPER!IPYNB", "caf%E9"]
    assert sorted(s.split(":")[0] for s in skipped) == ["folder.ipynb", "link.ipynb", "notes.txt"]
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
    warnings = []
    results = grade_folder(bundle, folder, tmp_path / "results", jobs=2, time_limit=10, warn=warnings.append)
    assert sorted(r.name for r in results) == ["=formula", "UPPER!IPYNB", "caf%E9"]
    assert len(warnings) == 3 and all("skipped" in w for w in warnings)
    csv_text = (tmp_path / "results" / "scores.csv").read_text(encoding="utf-8")
    assert "caf%E9" in csv_text and "\n'=formula," in csv_text  # a formula in a spreadsheet gets a "'"
    assert sorted(p.name for p in (tmp_path / "results" / "feedback").iterdir()) == [
        "=formula.md",
        "UPPER!IPYNB.md",
        "caf%E9.md",
    ]


def test_grading_refuses_to_run_without_isolation_unless_asked(tmp_path, monkeypatch, capsys):
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
    (tmp_path / "submissions").mkdir()
    monkeypatch.setattr(isolation, "bwrap_path", lambda: None)
    args = [str(bundle), str(tmp_path / "submissions"), "--out", str(tmp_path / "results")]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert "cannot isolate" in error and "--no-isolation" in error
    assert not (tmp_path / "results").exists()
    assert main([*args, "--no-isolation"]) == 0
    error = capsys.readouterr().err
    assert "WITHOUT isolation" in error and "the bundle (hidden tests)" in error


def test_grading_says_when_it_cannot_cap_all_processes_together(tmp_path, monkeypatch, capsys):
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
    (tmp_path / "submissions").mkdir()
    monkeypatch.setattr(isolation.Cgroups, "available", property(lambda self: False))
    assert main([str(bundle), str(tmp_path / "submissions"), "--out", str(tmp_path / "results")]) == 0
    assert "not the\nnumber of processes" in capsys.readouterr().err


def test_grading_as_one_user_takes_one_submission_at_a_time(tmp_path, monkeypatch):
    """Outside a sandbox, as the user ``run_as`` (Gradescope's fallback), ending a learner's processes ends
    every process of that user: two learners graded at once would end each other's. So one at a time there."""
    from attnlib_grader import grade

    workers, pool = [], grade.ThreadPoolExecutor
    monkeypatch.setattr(
        grade, "ThreadPoolExecutor", lambda max_workers: workers.append(max_workers) or pool(1)
    )
    monkeypatch.setattr(grade, "warm_up", lambda **switch: None)
    monkeypatch.setattr(grade, "self_check", lambda bundle, isolation: None)
    monkeypatch.setattr(
        grade, "grade_submission", lambda b, name, data, isolation: grade.SubmissionResult(name, [])
    )
    folder = tmp_path / "submissions"
    folder.mkdir()
    for name in ("a", "b"):
        (folder / f"{name}.ipynb").write_text(nbformat.writes(exercises.submission(SET, untouched=True)))
    bundle = tmp_path / "autograder.zip"
    bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
    grade_folder(bundle, folder, tmp_path / "sandboxed", jobs=2)
    grade_folder(bundle, folder, tmp_path / "as_one_user", jobs=2, isolated=False, run_as=64999, warn=print)
    assert workers == [2, 1]
