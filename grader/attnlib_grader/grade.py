"""Grade a folder of submitted notebooks with a set's bundle: a scores CSV plus one feedback file each.

    python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip SUBMISSIONS/ --out results/

The bundle (``tools/exercises.py build``) holds ``set.json``, the otter test files with the public and
hidden cases, and the set's reference solution. Everything is read into memory before any learner code runs.
First the self-check: the reference solution is graded in the sandbox like any submission, and unless it
scores full marks the run stops and says why (a module missing in the sandbox is the grader's problem, never
a learner's). Then each submission's code cells run in a sandbox process (``attnlib_grader.sandbox``); the
test cases run here, in the grader, calling the learner's functions through proxies, so no submission can
rebind the functions the tests use. Results are written as each submission is graded (``report``).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from attnlib_grader import report, switching
from attnlib_grader.proxies import LearnerFunction
from attnlib_grader.sandbox import Budget, Isolation, Meter, Sandbox, SandboxError, warm_up
from attnlib_grader.submissions import MAX_NOTEBOOK_BYTES, code_cells, find_submissions, language, read

SUBMISSION_TIME_LIMIT = (
    120.0  # CPU seconds per submission, everything included, unless the set says otherwise
)
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


class SelfCheckError(Exception):
    """The set's reference solution did not score full marks in the sandbox: grading would be unfair."""


@dataclass
class Bundle:
    config: dict[str, Any]
    tests: dict[str, str]  # question -> test file source (public and hidden cases)
    solutions: bytes | None = None  # the reference solution, graded by the self-check

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
    seconds: float = 0.0  # wall clock
    cpu_seconds: float = 0.0  # what its budget was charged: its sandboxes' CPU and its grading thread's
    language: str = (
        "en"  # of its feedback: the notebook's metadata.attnlib.language (scores never depend on it)
    )


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
        solutions = zf.read("solutions.ipynb") if "solutions.ipynb" in zf.namelist() else None
    return Bundle(config, tests, solutions)


def _run_cases(question: str, source: str, env: dict[str, Any]) -> list[CaseResult]:
    from otter.test_files import ExceptionTestFile

    from attnlib.grading import checks

    test_file = ExceptionTestFile.from_string(source, path=f"{question}.py")
    results = []
    for case in test_file.test_cases:
        try:
            with checks.hidden_case(bool(case.hidden)):  # a hidden case's messages show no numbers
                case.body.call_func(env)
            passed, message = True, ""
        except Exception as e:  # a failing assertion, a learner error relayed by the sandbox, a time limit
            passed, message = False, f"{type(e).__name__}: {str(e)[:1000]}"
        results.append(CaseResult(case.name, float(case.points or 0), bool(case.hidden), passed, message))
    return results


def grade_submission(
    bundle: Bundle, name: str, notebook_bytes: bytes | None, isolation: Isolation | None = None
) -> SubmissionResult:
    """Grade one notebook; never raises: anything that goes wrong becomes a grader error for this learner.
    The messages are in the notebook's language (``submissions.language``), set for this thread only."""
    from attnlib.grading.messages import in_language, say

    start, meter = time.perf_counter(), Meter()
    chosen = "en" if notebook_bytes is None else language(notebook_bytes)
    try:
        if notebook_bytes is None:
            raise ValueError(say("the file could not be read"))
        with in_language(chosen):
            result = _grade_submission(bundle, name, notebook_bytes, isolation, meter)
    except Exception as e:  # noqa: BLE001 - one submission never stops the run
        questions = bundle.config["questions"]
        result = SubmissionResult(
            name, [QuestionResult(q["name"], float(q["points"]), bool(q.get("manual"))) for q in questions]
        )
        with in_language(chosen):
            error = say("grader error: {error}", error=f"{type(e).__name__}: {str(e)[:300]}")
        for q in result.questions:
            if not q.manual:
                q.error = error
        result.notes.append(error)
    result.seconds, result.cpu_seconds = time.perf_counter() - start, meter()
    result.language = chosen
    return result


def _environment(sandbox: Sandbox, budget: Budget, config: dict[str, Any]) -> dict[str, Any]:
    import numpy as np
    import torch

    import attnlib

    env: dict[str, Any] = {"torch": torch, "np": np, "numpy": np, "attnlib": attnlib}
    exempt = config.get("contract_exempt") or {}
    for var, info in sandbox.names.items():
        if info.get("kind") == "function":
            source = info.get("source")
            source = source if isinstance(source, str) else None
            env[var] = LearnerFunction(sandbox, var, budget, source, exempt=tuple(exempt.get(var, ())))
    values = sandbox.value_names()
    for var, info in sandbox.names.items():
        if info.get("kind") != "function":
            env[var] = values.get(var)
    return env


def _grade_submission(
    bundle: Bundle, name: str, notebook_bytes: bytes, isolation: Isolation | None, meter: Meter
) -> SubmissionResult:
    from attnlib.grading.messages import say, tr

    _grading_mode()
    config = bundle.config
    results = [
        QuestionResult(q["name"], float(q["points"]), bool(q.get("manual"))) for q in config["questions"]
    ]
    submission = SubmissionResult(name, results)
    limit = float(config.get("submission_time_limit", SUBMISSION_TIME_LIMIT))
    total = Budget(limit, meter, tr("the budget"))
    if len(notebook_bytes) > MAX_NOTEBOOK_BYTES:
        raise ValueError(say("the notebook is larger than {size} MB", size=MAX_NOTEBOOK_BYTES // 2**20))
    try:
        cells = code_cells(notebook_bytes)
    except ValueError as e:
        submission.notes.append(str(e))
        for q in results:
            q.error = say("the notebook could not be read")
        return submission
    workdir = tempfile.mkdtemp(prefix="attnlib-sandbox-")
    sandbox = Sandbox(cells, config, workdir, isolation=isolation, budget=total)
    try:
        for q in results:
            if q.manual:
                continue
            if not sandbox.alive:
                try:
                    sandbox.start()
                    submission.notes += [e for e in sandbox.errors if e not in submission.notes]
                except (SandboxError, TimeoutError) as e:
                    q.error = say("the notebook could not be run: {error}", error=str(e))
                    continue
            budget = Budget(float(config.get("time_limit", 10)), meter)
            q.cases = _run_cases(q.name, bundle.tests[q.name], _environment(sandbox, budget, config))
    finally:
        sandbox.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    for dotted in sorted(sandbox.reached):
        submission.notes.append(
            say("your code called {dotted}, which is switched off while grading", dotted=dotted)
        )
    return submission


def self_check(bundle: Bundle, isolation: Isolation) -> SubmissionResult:
    """Grade the bundle's reference solution in the sandbox; SelfCheckError unless it scores full marks and
    every cell of it runs."""
    if bundle.solutions is None:
        raise SelfCheckError("the bundle holds no reference solution: rebuild it (tools/exercises.py bundle)")
    result = grade_submission(bundle, "reference solution", bundle.solutions, isolation)
    failed = [(q, c) for q in result.questions if not q.manual for c in q.cases if not c.passed]
    errors = [q for q in result.questions if not q.manual and q.error]
    if not failed and not errors and not result.notes:  # a note: a cell raised, or something was switched off
        return result
    auto = [q for q in result.questions if not q.manual]
    lines = [f"{q.name}: {q.error}" for q in errors] + [f"{q.name} {c.name}: {c.message}" for q, c in failed]
    lines += [f"note: {n}" for n in result.notes]
    missing = "ModuleNotFoundError" in "\n".join(lines)
    raise SelfCheckError(
        f"the set's reference solution scored {sum(q.score for q in auto):g} / "
        f"{sum(q.possible for q in auto):g} in the sandbox, so the learners' scores would be wrong. "
        + (
            "A module is missing inside the sandbox: the grader's Python environment is incomplete or not "
            "reachable there (a problem of the grader, not of any learner). "
            if missing
            else ""
        )
        + "What failed:\n  "
        + "\n  ".join(line[:500] for line in lines[:20])
    )


def grade_folder(
    bundle: str | Path | Bundle,
    folder: str | Path,
    out: str | Path,
    jobs: int = 2,
    time_limit: float | None = None,
    isolated: bool = True,
    warn: Any = None,
    run_as: int | None = None,
) -> list[SubmissionResult]:
    """Grade every notebook in ``folder``; ``out/scores.csv``, ``out/feedback/<label>.md`` and
    ``out/for_learners/<label>.md`` grow as it goes.

    ``time_limit`` (CPU seconds) overrides the set's limits per question and per cell. ``isolated=False``
    runs the learners' code without bubblewrap (see NO_ISOLATION_WARNING), as the user ``run_as`` if given
    (attnlib_grader.gradescope's fallback; the grader must be root). Skipped entries of the folder are
    reported through ``warn`` (default: printed to stderr) and listed in ``out/skipped.txt``. Raises
    SelfCheckError, before grading anyone, when the reference solution does not score full marks."""
    _grading_mode()
    warn = warn or (lambda text: print(text, file=sys.stderr))
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    config = dict(bundle.config)
    if time_limit is not None:
        config.update(time_limit=time_limit, cell_time_limit=time_limit)
    dotted, operators = switching.resolve_equations(config.get("switch_off", []))
    bundle = Bundle({**config, "switch_off": dotted, "operators": operators}, bundle.tests, bundle.solutions)
    found, skipped = find_submissions(folder)
    for text in skipped:
        warn(text)
    submissions = [(shown, read(path)) for shown, path in found]  # all read before any learner code runs
    isolation = Isolation(isolated, dotted, run_as)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "skipped.txt").write_text("".join(f"{text}\n" for text in skipped), encoding="utf-8")
    try:
        warm_up(switch_off=dotted, operators=operators)
        self_check(bundle, isolation)
        results = report.Results(out, bundle.questions, bundle.config["name"])

        def grade(item: tuple[str, bytes | None]) -> SubmissionResult:
            result = grade_submission(bundle, *item, isolation=isolation)
            results.add(result)
            return result

        # as one user (run_as), one at a time: ending that user's processes after a learner ends all of them
        with ThreadPoolExecutor(max_workers=1 if run_as is not None else max(1, jobs)) as pool:
            graded = list(pool.map(grade, submissions))
    finally:
        isolation.close()
    for problem in results.problems:
        warn(problem)
    return graded


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle", help="autograder.zip written by tools/exercises.py build")
    parser.add_argument("submissions", help="folder of submitted .ipynb files (one per learner)")
    parser.add_argument(
        "--out",
        default="results",
        help="folder for scores.csv, feedback/ and for_learners/ (default: results)",
    )
    parser.add_argument("--jobs", type=int, default=2, help="submissions graded at once (default: 2)")
    parser.add_argument(
        "--time-limit",
        type=float,
        default=None,
        help="CPU seconds per question and per cell (default: the set's own, 10 s for set 3)",
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
    try:
        results = grade_folder(
            args.bundle,
            args.submissions,
            args.out,
            jobs=args.jobs,
            time_limit=args.time_limit,
            isolated=not args.no_isolation,
        )
    except SelfCheckError as e:
        print(f"grade.py: the self-check failed, nothing was graded: {e}", file=sys.stderr)
        return 3
    for r in results:
        auto = [q for q in r.questions if not q.manual]
        print(f"{r.name}: {sum(q.score for q in auto):g} / {sum(q.possible for q in auto):g}")
    print(
        f"graded {len(results)} submissions into {args.out}: wall time: {time.perf_counter() - start:.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
