"""Grade a folder of submitted notebooks with a set's bundle: a scores CSV plus one feedback file each.

    python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip SUBMISSIONS/ --out results/

The bundle (``tools/exercises.py build``) holds ``set.json`` and the otter test files with the public and
hidden cases. Everything is read into memory before any learner code runs. Each submission's code cells run in
a sandbox process (``attnlib.grading.sandbox``); the test cases run here, in the grader, calling the learner's
functions through proxies, so no submission can rebind the functions the tests use. No Docker needed.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
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

from attnlib.grading.sandbox import Budget, LearnerFunction, Sandbox, SandboxError, decode, warm_up


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


def function_sources(cells: list[str], names: list[str]) -> dict[str, str]:
    """The source of the last top-level ``def NAME`` of each name in the cells (what the notebook ran)."""
    from attnlib.grading.sandbox import runnable_source

    found: dict[str, str] = {}
    for source in cells:
        source = runnable_source(source)
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names:
                found[node.name] = ast.get_source_segment(source, node) or ""
    return found


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


def grade_submission(bundle: Bundle, name: str, notebook_bytes: bytes) -> SubmissionResult:
    """Grade one notebook; never raises for anything the notebook does."""
    import numpy as np
    import torch

    import attnlib

    _grading_mode()
    start = time.perf_counter()
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
    sources = function_sources(cells, config.get("names", []))
    workdir = tempfile.mkdtemp(prefix="attnlib-sandbox-")
    sandbox = Sandbox(cells, config, workdir)
    try:
        for q in results:
            if q.manual:
                continue
            if not sandbox.alive:
                try:
                    try:
                        sandbox.start()
                    except SandboxError:  # once more: another submission may have killed the forkserver
                        sandbox.start()
                    submission.notes += [e for e in sandbox.errors if e not in submission.notes]
                except SandboxError as e:
                    q.error = f"the notebook could not be run: {e}"
                    continue
            budget = Budget(float(config.get("time_limit", 10)))
            env: dict[str, Any] = {"torch": torch, "np": np, "numpy": np, "attnlib": attnlib}
            for var, info in sandbox.names.items():
                if info.get("kind") == "function":
                    env[var] = LearnerFunction(sandbox, var, budget, sources.get(var))
                else:
                    try:
                        env[var] = decode(info.get("value"))
                    except SandboxError:
                        env[var] = None
            q.cases = _run_cases(q.name, bundle.tests[q.name], env)
    finally:
        sandbox.kill()
        shutil.rmtree(workdir, ignore_errors=True)
    submission.seconds = time.perf_counter() - start
    return submission


def feedback(result: SubmissionResult, set_name: str) -> str:
    """A learner's feedback in Markdown: score per question and what failed (hidden tests: message only)."""
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


def grade_folder(
    bundle: str | Path | Bundle,
    folder: str | Path,
    out: str | Path,
    jobs: int = 2,
    time_limit: float | None = None,
) -> list[SubmissionResult]:
    """Grade every ``*.ipynb`` in ``folder``; write ``out/scores.csv`` and ``out/feedback/<name>.md``.

    ``time_limit`` (seconds) overrides the set's limits per question and per cell."""
    _grading_mode()
    bundle = bundle if isinstance(bundle, Bundle) else load_bundle(bundle)
    if time_limit is not None:
        bundle.config.update(time_limit=time_limit, cell_time_limit=time_limit)
    paths = sorted(Path(folder).glob("*.ipynb"))
    submissions = [(p.stem, p.read_bytes()) for p in paths]  # all read before any learner code runs
    warm_up()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        results = list(pool.map(lambda s: grade_submission(bundle, *s), submissions))

    out = Path(out)
    (out / "feedback").mkdir(parents=True, exist_ok=True)
    names = [q["name"] for q in bundle.questions]
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
        (out / "feedback" / f"{r.name}.md").write_text(feedback(r, bundle.config["name"]))
    (out / "scores.csv").write_text(buffer.getvalue())
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
    args = parser.parse_args(argv)
    start = time.perf_counter()
    results = grade_folder(
        args.bundle, args.submissions, args.out, jobs=args.jobs, time_limit=args.time_limit
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
