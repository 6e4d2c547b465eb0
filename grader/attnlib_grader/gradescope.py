"""Gradescope's autograder of one exercise set: grade the notebook in ``submission/``, write ``results.json``.

Gradescope's specification (https://gradescope-autograders.readthedocs.io/en/latest/specs/): the zip's
contents are unpacked into ``/autograder/source``, ``setup.sh`` runs once as root when the image is built,
``run_autograder`` runs once per submission with the learner's files in ``/autograder/submission``, and it
must write ``/autograder/results/results.json``: a top-level ``score``, ``output``, ``execution_time`` and
``stdout_visibility``, and ``tests``, each with ``name``, ``score``, ``max_score``, ``output`` and
``visibility`` (``visible``, ``after_due_date``, ``after_published`` or ``hidden``). ``AUTOGRADER_ROOT``
replaces ``/autograder`` (the course's test runs it in a temporary folder).

What it writes, per question of the set:
- ``qN``, visible at once: the question's score, each public test with its message, and how many hidden tests
  passed (their names and messages are not shown before the due date);
- ``qN: hidden tests``, ``after_due_date``, 0 points: the hidden tests, each with its message;
- a written answer: ``qN``, 0 of 0 automatic points and a note that the teacher grades it.
The score is the course grader's (``attnlib_grader.grade.grade_folder``, the same as ``tools/grade.py``),
self-check included. Learner code runs in the bubblewrap sandbox; where that cannot be built (a container
that may not create user namespaces), as the unprivileged user ``nobody``, which can read neither the tests
(``/autograder/source``, root's alone, and the bundle is read into memory before any learner code runs) nor
the results; where neither is possible (not root, or ``ATTNLIB_GRADESCOPE_FALLBACK=refuse``) it grades
nothing, runs no learner code and says so in ``results.json`` (exercises/teachers.md, "Grading on
Gradescope"). ``extra_data.isolation`` says which ran.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

from attnlib.grading.messages import in_language, say, tr
from attnlib_grader import switching
from attnlib_grader.grade import SelfCheckError, grade_folder, load_bundle
from attnlib_grader.isolation import IsolationError, check_bwrap
from attnlib_grader.report import plain
from attnlib_grader.submissions import find_submissions, language, read

ROOT_VARIABLE = "AUTOGRADER_ROOT"
# Where bubblewrap cannot build a sandbox, learner code runs as this unprivileged user (nobody), which can
# read neither /autograder/source nor /autograder/results; ATTNLIB_GRADESCOPE_FALLBACK=refuse grades nothing.
NOBODY = 65534
FALLBACK = "unprivileged user"  # extra_data.isolation where learner code runs as NOBODY
FALLBACK_VARIABLE = "ATTNLIB_GRADESCOPE_FALLBACK"
VISIBILITIES = ("visible", "after_due_date", "after_published", "hidden")
# What the learner reads is in the language of the submitted notebook (``submissions.language``): these are
# the English templates of the catalogue (attnlib/grading/messages_ko.json).
NO_ISOLATION = (
    "The course's sandbox (bubblewrap) cannot be built on this Gradescope machine ({error}), and the "
    "autograder may not run your notebook as an unprivileged user either, so it refuses to run it: your "
    "code could read the hidden tests and write the results. Nothing was graded; ask your teacher."
)
WRITTEN = "A written answer: your teacher grades it ({points:g} points), not the autograder."


def _case_lines(cases) -> list[str]:
    lines = []
    for case in cases:
        mark = say("passed" if case.passed else "FAILED")
        lines.append(say("{case} ({points:g} points): {mark}", case=case.name, points=case.points, mark=mark))
        if not case.passed and case.message:
            lines.append("    " + plain(case.message).replace("\n", "\n    "))
    return lines


def question_tests(q) -> list[dict]:
    """The Gradescope tests of one graded question (``grade.QuestionResult``)."""
    if q.manual:
        return [
            {
                "name": q.name,
                "score": 0.0,
                "max_score": 0.0,
                "output": say(WRITTEN, points=q.possible),
                "visibility": "visible",
            }
        ]
    public = [c for c in q.cases if not c.hidden]
    hidden = [c for c in q.cases if c.hidden]
    lines = [plain(q.error)] if q.error else []
    lines += _case_lines(public)
    if hidden:
        passed = sum(c.passed for c in hidden)
        lines.append(
            say(
                "hidden tests: {passed} of {total} passed (which ones, and why, is shown after the due date)",
                passed=passed,
                total=len(hidden),
            )
        )
    tests = [
        {
            "name": q.name,
            "score": q.score,
            "max_score": q.possible,
            "output": "\n".join(lines),
            "visibility": "visible",
        }
    ]
    if hidden:
        tests.append(
            {
                "name": say("{question}: hidden tests", question=q.name),
                "score": 0.0,
                "max_score": 0.0,
                "output": "\n".join(_case_lines(hidden)),
                "visibility": "after_due_date",
            }
        )
    return tests


def results(result, seconds: float) -> dict:
    """``results.json`` of a graded submission (``grade.SubmissionResult``), in its language."""
    with in_language(getattr(result, "language", "en")):
        return _results(result, seconds)


def _results(result, seconds: float) -> dict:
    auto = [q for q in result.questions if not q.manual]
    notes = [plain(n) for n in result.notes]
    score, possible = sum(q.score for q in auto), sum(q.possible for q in auto)
    output = say("Automatic score: {score:g} / {possible:g}", score=score, possible=possible)
    if any(q.manual for q in result.questions):
        output += say(" (written answers are graded by your teacher)")
    if notes:
        output += "\n\n" + say("Notes on running your notebook") + ":\n" + "\n".join(f"- {n}" for n in notes)
    return {
        "score": sum(q.score for q in auto),
        "execution_time": round(seconds),
        "output": output,
        "stdout_visibility": "hidden",
        "tests": [t for q in result.questions for t in question_tests(q)],
        "extra_data": {"graded": True},
    }


def refusal(questions: list[dict], reason: str, seconds: float = 0.0) -> dict:
    """``results.json`` when nothing was graded: 0 points, the reason at the top and in every question (in
    the language of the messages made now: ``grade`` chooses the submission's)."""
    tests = [
        {
            "name": q["name"],
            "score": 0.0,
            "max_score": 0.0 if q.get("manual") else float(q["points"]),
            "output": say("NOT GRADED: {reason}", reason=reason),
            "visibility": "visible",
        }
        for q in questions
    ]
    return {
        "score": 0.0,
        "execution_time": round(seconds),
        "output": say("NOT GRADED. {reason}", reason=reason),
        "stdout_visibility": "hidden",
        "tests": tests,
        "extra_data": {"graded": False, "reason": reason},
    }


def _write(folder: Path, data: dict) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    partial = folder / "results.json.partial"
    partial.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, folder / "results.json")


def _language(found: list[tuple[str, Path]]) -> str:
    """The language of the submitted notebooks when they all share one (``submissions.language``), else
    English: a refusal is written in it."""
    chosen = {language(data) for data in (read(path) for _, path in found) if data is not None}
    return chosen.pop() if len(chosen) == 1 else "en"


@contextlib.contextmanager
def _unreadable_by_others(files: list[Path]):
    """``files`` readable by their owner alone while the block runs (the fallback's learner cannot execute a
    fresh copy of a module whose implementations the set switches off: the sandbox shows a blanked one)."""
    modes = {}
    try:
        for path in files:
            modes[path] = os.stat(path).st_mode & 0o7777
            os.chmod(path, modes[path] & ~0o077)
        yield
    finally:
        for path, mode in modes.items():
            with contextlib.suppress(OSError):
                os.chmod(path, mode)


def grade(root: Path) -> dict:
    """Grade ``root/submission`` with the bundle in ``root/source``; the results, never raises for a
    learner's file. What it says is in the submitted notebook's language."""
    found, _ = find_submissions(root / "submission")
    with in_language(_language(found)):
        return _grade(root)


def _grade(root: Path) -> dict:
    start = time.perf_counter()
    bundle = load_bundle(root / "source" / "autograder.zip")  # read whole before any learner code runs
    questions = bundle.questions
    found, skipped = find_submissions(root / "submission")
    if len(found) != 1:
        names = ", ".join(label for label, _ in found) or tr("none")
        return refusal(questions, say("submit exactly one notebook (.ipynb); found: {names}.", names=names))
    for private in (root / "source", root / "results"):  # the tests and the results: root's alone
        private.mkdir(exist_ok=True)
        os.chmod(private, 0o700)
    run_as, isolation = None, "bubblewrap"
    try:
        check_bwrap()
    except IsolationError as e:
        print(f"run_autograder: no sandbox here ({e})", file=sys.stderr)
        if os.geteuid() != 0 or os.environ.get(FALLBACK_VARIABLE) == "refuse":
            return refusal(questions, say(NO_ISOLATION, error=plain(e)))
        run_as, isolation = NOBODY, FALLBACK
        os.chmod(root, os.stat(root).st_mode | 0o011)  # nobody may pass through to the venv, not list it
    dotted, _ = switching.resolve_equations(bundle.config.get("switch_off", []))
    hidden = switching.switched_off_files(dotted) if run_as is not None else []
    label, path = found[0]
    work = Path(tempfile.mkdtemp(prefix="gradescope-"))
    try:
        folder = work / "submissions"
        folder.mkdir()
        data = read(path)
        if data is None:
            return refusal(questions, tr("the notebook could not be read."))
        (folder / path.name).write_bytes(data)
        try:
            with _unreadable_by_others(hidden):
                graded = grade_folder(
                    bundle, folder, work / "out", jobs=1, isolated=run_as is None, run_as=run_as
                )
        except SelfCheckError as e:
            print(f"run_autograder: the self-check failed: {e}", file=sys.stderr)
            return refusal(questions, tr("the autograder's self-check failed (a problem of the autograder)."))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    data = results(graded[0], time.perf_counter() - start)
    data["extra_data"]["isolation"] = isolation
    return data


def main() -> int:
    root = Path(os.environ.get(ROOT_VARIABLE) or "/autograder")
    try:
        data = grade(root)
    except Exception as e:  # noqa: BLE001 - Gradescope must get a results.json whatever failed
        print(f"run_autograder: {type(e).__name__}: {e}", file=sys.stderr)
        questions = json.loads(zipfile.ZipFile(root / "source" / "autograder.zip").read("set.json"))
        data = refusal(
            questions["questions"], say("the autograder failed ({error}).", error=type(e).__name__)
        )
    _write(root / "results", data)
    return 0


if __name__ == "__main__":
    sys.exit(main())
