"""Grade a folder of submitted notebooks with a set's bundle: a scores CSV plus one feedback file each.

    python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip SUBMISSIONS/ --out results/

The bundle (``tools/exercises.py build``) holds ``set.json`` and the otter test files with the public and
hidden cases. Everything is read into memory before any learner code runs. Each submission's code cells run in
a sandbox process (``attnlib_grader.sandbox``); the test cases run here, in the grader, calling the learner's
functions through proxies, so no submission can rebind the functions the tests use. No Docker needed.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import shutil
import stat
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlib_grader.sandbox import (
    Budget,
    Isolation,
    LearnerFunction,
    Sandbox,
    SandboxError,
    decode,
    warm_up,
)

MAX_NOTEBOOK_BYTES = 20 * 2**20  # a larger file is not graded (a grader error for that learner)
SUBMISSION_TIME_LIMIT = 120.0  # seconds per submission, everything included, unless the set says otherwise
# What grading without isolation exposes, printed when the teacher asks for it.
NO_ISOLATION_WARNING = """\
WARNING: grading WITHOUT isolation (--no-isolation). The learners' code runs as your user, with your files:
  - it can read the course files, the bundle (hidden tests), the other submissions and the results folder,
    and the grader's processes in /proc; a blank notebook can copy the solutions and score full marks;
  - it can write wherever your user may write (scores.csv after grading, the course's attnlib);
  - a process it starts in a new session outlives the grading; the network is open.
Grade like this only notebooks that you trust."""
NO_CGROUP_WARNING = """\
WARNING: the grader may not create cgroups here (memory and pids, v1 or v2 delegated): each learner's
processes are still isolated and killed with their sandbox, and each process's memory is capped, but not the
number of processes a learner starts nor the memory of all of them together. See exercises/teachers.md."""


@dataclass
class Bundle:
    config: dict[str, Any]
    tests: dict[str, str]  # question -> test file source (public and hidden cases)

    @property
    def questions(self) -> list[dict[str, Any]]:
        return self.config["questions"]


@dataclass
class CaseResult:
    name: str
    points: float
    hidden: bool
    passed: bool
    message: str = ""


@dataclass
class QuestionResult:
    name: str
    possible: float
    manual: bool = False
    cases: list[CaseResult] = field(default_factory=list)
    error: str = ""

    @property
    def score(self) -> float:
        return sum(c.points for c in self.cases if c.passed)


@dataclass
class SubmissionResult:
    name: str
    questions: list[QuestionResult]
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _grading_mode() -> None:
    from attnlib.grading import checks

    checks.GRADING = True


def load_bundle(path: str | Path) -> Bundle:
    """Read a bundle zip completely into memory."""
    with zipfile.ZipFile(path) as zf:
        config = json.loads(zf.read("set.json"))
        tests = {
            q["name"]: zf.read(f"tests/{q['name']}.py").decode()
            for q in config["questions"]
            if not q.get("manual")
        }
    return Bundle(config, tests)


def code_cells(notebook_bytes: bytes) -> list[str]:
    """The code cells of a submitted notebook, in order; raises ValueError if it is not a notebook."""
    import nbformat

    try:
        nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
    except Exception as e:  # nbformat raises many kinds for broken files
        raise ValueError(f"not a readable notebook ({type(e).__name__}: {str(e)[:200]})") from None
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _run_cases(question: str, source: str, env: dict[str, Any]) -> list[CaseResult]:
    from otter.test_files import ExceptionTestFile

    test_file = ExceptionTestFile.from_string(source, path=f"{question}.py")
    results = []
    for case in test_file.test_cases:
        try:
            case.body.call_func(env)
            passed, message = True, ""
        except Exception as e:  # a failing assertion, a learner error relayed by the sandbox, a time limit
            passed, message = False, f"{type(e).__name__}: {str(e)[:1000]}"
        results.append(CaseResult(case.name, float(case.points or 0), bool(case.hidden), passed, message))
    return results


def grade_submission(
    bundle: Bundle, name: str, notebook_bytes: bytes | None, isolation: Isolation | None = None
) -> SubmissionResult:
    """Grade one notebook; never raises: anything that goes wrong becomes a grader error for this learner."""
    start = time.perf_counter()
    try:
        if notebook_bytes is None:
            raise ValueError("the file could not be read")
        result = _grade_submission(bundle, name, notebook_bytes, isolation)
    except Exception as e:  # noqa: BLE001 - one submission never stops the run
        result = SubmissionResult(
            name,
            [
                QuestionResult(q["name"], float(q["points"]), bool(q.get("manual")))
                for q in bundle.config["questions"]
            ],
        )
        for q in result.questions:
            if not q.manual:
                q.error = f"grader error: {type(e).__name__}: {str(e)[:300]}"
        result.notes.append(f"grader error: {type(e).__name__}: {str(e)[:300]}")
    result.seconds = time.perf_counter() - start
    return result


def _grade_submission(
    bundle: Bundle, name: str, notebook_bytes: bytes, isolation: Isolation | None
) -> SubmissionResult:
    import numpy as np
    import torch

    import attnlib

    _grading_mode()
    config = bundle.config
    results = [
        QuestionResult(q["name"], float(q["points"]), bool(q.get("manual"))) for q in config["questions"]
    ]
    submission = SubmissionResult(name, results)
    try:
        cells = code_cells(notebook_bytes)
    except ValueError as e:
        submission.notes.append(str(e))
        for q in results:
            q.error = "the notebook could not be read"
        return submission
    if len(notebook_bytes) > MAX_NOTEBOOK_BYTES:
        raise ValueError(f"the notebook is larger than {MAX_NOTEBOOK_BYTES // 2**20} MB")
    workdir = tempfile.mkdtemp(prefix="attnlib-sandbox-")
    deadline = time.monotonic() + float(config.get("submission_time_limit", SUBMISSION_TIME_LIMIT))
    sandbox = Sandbox(cells, config, workdir, isolation=isolation, deadline=deadline)
    try:
        for q in results:
            if q.manual:
                continue
            if not sandbox.alive:
                try:
                    sandbox.start()
                    submission.notes += [e for e in sandbox.errors if e not in submission.notes]
                except SandboxError as e:
                    q.error = f"the notebook could not be run: {e}"
                    continue
            budget = Budget(float(config.get("time_limit", 10)))
            env: dict[str, Any] = {"torch": torch, "np": np, "numpy": np, "attnlib": attnlib}
            exempt = config.get("contract_exempt") or {}
            for var, info in sandbox.names.items():
                if info.get("kind") == "function":
                    source = info.get("source")
                    env[var] = LearnerFunction(
                        sandbox,
                        var,
                        budget,
                        source if isinstance(source, str) else None,
                        exempt=tuple(exempt.get(var, ())),
                    )
                else:
                    try:
                        env[var] = decode(info.get("value"))
                    except SandboxError:
                        env[var] = None
            q.cases = _run_cases(q.name, bundle.tests[q.name], env)
    finally:
        sandbox.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    for dotted in sorted(sandbox.reached):
        submission.notes.append(f"your code called {dotted}, which is switched off while grading")
    return submission


def rubric_lines(rubric: dict | None, points: float) -> list[str]:
    """A written answer's rubric as a template the teacher fills in: points per idea, the common
    misconceptions and what else is accepted (from the master's ``rubric``)."""
    if not rubric:
        return []
    lines = [f"Points: ___ / {points:g} (one box per idea the answer states correctly)", ""]
    lines += [f"- [ ] ({float(pts):g}) {idea}" for pts, idea in rubric.get("ideas", [])]
    for title, key in (("Common misconceptions", "misconceptions"), ("Also accepted", "alternatives")):
        if rubric.get(key):
            lines += ["", f"{title}:", ""] + [f"- {text}" for text in rubric[key]]
    return lines + [""]


def feedback(result: SubmissionResult, set_name: str, rubrics: dict | None = None) -> str:
    """A learner's feedback in Markdown: score per question and what failed (hidden tests: message only);
    for a written answer, the rubric as a template for the teacher (``rubrics``: question -> rubric)."""
    auto = [q for q in result.questions if not q.manual]
    lines = [
        f"# Feedback: {set_name}, {result.name}",
        "",
        f"Automatic score: {sum(q.score for q in auto):g} / {sum(q.possible for q in auto):g}",
        "",
    ]
    for q in result.questions:
        if q.manual:
            lines += [f"## {q.name}: graded by your teacher ({q.possible:g} points)", ""]
            lines += rubric_lines((rubrics or {}).get(q.name), q.possible)
            continue
        lines += [f"## {q.name}: {q.score:g} / {q.possible:g}", ""]
        if q.error:
            lines += [f"- {q.error}", ""]
        for case in q.cases:
            kind = "hidden test" if case.hidden else "public test"
            mark = "passed" if case.passed else "FAILED"
            text = f"- {kind} `{case.name}` ({case.points:g} points): {mark}"
            if not case.passed and case.message:
                text += "\n  " + case.message.replace("\n", "\n  ")
            lines.append(text)
        lines.append("")
    if result.notes:
        lines += ["## Notes on running your notebook", ""] + [f"- {n}" for n in result.notes] + [""]
    return "\n".join(lines)


def safe_name(name: str) -> str:
    """A learner's name as text that can be written anywhere: bytes that are not UTF-8 (kept by the file
    system as surrogates) become ``\\xNN``, control characters ``?``, never a formula."""
    text = name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    text = "".join("?" if (ord(c) < 32 or ord(c) == 127) else c for c in text)[:200] or "?"
    return "'" + text if text[0] in "=+-@" else text


def find_submissions(folder: str | Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """The notebooks to grade in ``folder`` (regular files named ``*.ipynb``, any case) and a warning for
    every other entry: folders, links, devices and other files are never opened."""
    found, skipped = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: os.fsencode(e.name)):
        shown = safe_name(entry.name)
        is_notebook = entry.name.lower().endswith(".ipynb")
        if entry.is_symlink():
            skipped.append(f"{shown}: skipped, a symbolic link (copy the file itself into the folder)")
        elif not entry.is_file(follow_symlinks=False):
            skipped.append(f"{shown}: skipped, not a regular file")
        elif not is_notebook:
            skipped.append(f"{shown}: skipped, not named *.ipynb")
        else:
            found.append((entry.name[: -len(".ipynb")], Path(entry.path)))
    return found, skipped


def _read(path: Path) -> bytes | None:
    """The file's bytes, without following a link that replaced it, at most MAX_NOTEBOOK_BYTES + 1."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read(MAX_NOTEBOOK_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)


def grade_folder(
    bundle: str | Path | Bundle,
    folder: str | Path,
    out: str | Path,
    jobs: int = 2,
    time_limit: float | None = None,
    isolated: bool = True,
    warn: Any = None,
) -> list[SubmissionResult]:
    """Grade every notebook in ``folder``; write ``out/scores.csv`` and ``out/feedback/<name>.md``.

    ``time_limit`` (seconds) overrides the set's limits per question and per cell. ``isolated=False`` runs
    the learners' code without bubblewrap (see NO_ISOLATION_WARNING). Skipped entries of the folder are
    reported through ``warn`` (default: printed to stderr) and listed in ``out/skipped.txt``."""
    _grading_mode()
    warn = warn or (lambda text: print(text, file=sys.stderr))
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    if time_limit is not None:
        bundle.config.update(time_limit=time_limit, cell_time_limit=time_limit)
    found, skipped = find_submissions(folder)
    for text in skipped:
        warn(text)
    submissions, seen = [], set()
    for raw_name, path in found:  # every file read before any learner code runs
        name = safe_name(raw_name)
        while name in seen:
            name += "_"
        seen.add(name)
        submissions.append((name, _read(path)))
    isolation = Isolation(isolated, bundle.config.get("switch_off", []))
    try:
        warm_up()
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            results = list(pool.map(lambda s: grade_submission(bundle, *s, isolation=isolation), submissions))
    finally:
        isolation.close()

    out = Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    names = [q["name"] for q in bundle.questions]
    rubrics = {q["name"]: q.get("rubric") for q in bundle.questions if q.get("manual")}
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["submission", *names, "auto_score", "auto_possible"])
    for r in results:
        auto = [q for q in r.questions if not q.manual]
        writer.writerow(
            [
                r.name,
                *("" if q.manual else f"{q.score:g}" for q in r.questions),
                f"{sum(q.score for q in auto):g}",
                f"{sum(q.possible for q in auto):g}",
            ]
        )
        file_name = r.name.lstrip("'").replace("/", "?") or "?"
        (out / "feedback" / f"{file_name}.md").write_text(
            feedback(r, bundle.config["name"], rubrics), encoding="utf-8"
        )
    (out / "scores.csv").write_text(buffer.getvalue(), encoding="utf-8")
    (out / "skipped.txt").write_text("".join(f"{text}\n" for text in skipped), encoding="utf-8")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", help="autograder.zip written by tools/exercises.py build")
    parser.add_argument("submissions", help="folder of submitted .ipynb files (one per learner)")
    parser.add_argument(
        "--out", default="results", help="folder for scores.csv and feedback/ (default: results)"
    )
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default: 2)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="seconds per question and per cell (default: the set's own, 10 s for set 3)",
    )
    parser.add_argument(
        "--no-isolation",
        action="store_true",
        help="run the learners' code without the bubblewrap sandbox (it then sees your files)",
    )
    args = parser.parse_args(argv)
    if args.no_isolation:
        print(NO_ISOLATION_WARNING, file=sys.stderr)
    else:
        from attnlib_grader.isolation import Cgroups, IsolationError, check_bwrap

        try:
            check_bwrap()
        except IsolationError as e:
            print(
                f"grade.py: cannot isolate the learners' code: {e}.\n"
                "Install bubblewrap and run as root or with user namespaces enabled (exercises/teachers.md), "
                "or pass --no-isolation to grade without it:\n\n" + NO_ISOLATION_WARNING,
                file=sys.stderr,
            )
            return 2
        if not Cgroups().available:
            print(NO_CGROUP_WARNING, file=sys.stderr)
    start = time.perf_counter()
    results = grade_folder(
        args.bundle,
        args.submissions,
        args.out,
        jobs=args.jobs,
        time_limit=args.time_limit,
        isolated=not args.no_isolation,
    )
    for r in results:
        auto = [q for q in r.questions if not q.manual]
        print(f"{r.name}: {sum(q.score for q in auto):g} / {sum(q.possible for q in auto):g}")
    print(
        f"graded {len(results)} submissions into {args.out}: wall time: {time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
