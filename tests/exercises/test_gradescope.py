"""The Gradescope autograder of every set (``exercises/dist/NN_slug/gradescope.zip``), run as Gradescope
runs it.

Gradescope's specification (https://gradescope-autograders.readthedocs.io/en/latest/specs/): the zip is
unpacked into ``/autograder/source``, ``setup.sh`` runs once, then for each submission the learner's files are
placed in ``/autograder/submission`` and ``run_autograder`` must write ``/autograder/results/results.json``.
Here the root is a temporary folder (``AUTOGRADER_ROOT``), and ``setup.sh`` runs with
``ATTNLIB_GRADESCOPE_PYTHON`` = the course's Python: it installs nothing and uses that environment, which a
test below shows is its only difference. The scores must be those ``tools/grade.py`` gives the same notebooks.

``tools/grade.py`` runs here under the course's virtual environment reached through a symbolic link (issue 26,
hole 6), so the same run also shows that such a venv grades as its real path: the in-process grading of the
``graded`` fixture (the real path) gives the solutions and the untouched notebook the same scores.
"""

import csv
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from functools import cache
from pathlib import Path

import nbformat
import pytest
from attnlib_grader import child
from attnlib_grader import gradescope as runner
from attnlib_grader.grade import CaseResult, QuestionResult, SubmissionResult
from exercise_helpers import ROOT, SETS, _load_tool, exercises, fixture_files, fixture_notebook

tool = _load_tool("gradescope")

# The fallback's user in the tests: no account and no process on the machine (the fallback ends every process
# of its user, and nobody's, 65534, might be another program's here), one per pytest-xdist worker: two workers
# grading in the fallback at once would otherwise end each other's learners (gw0: 64999, gw1: 64998, ...)
TEST_UID = 64999 - int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw") or 0)
VISIBILITIES = {"visible", "after_due_date", "after_published", "hidden"}
TOP_KEYS = {"score", "execution_time", "output", "visibility", "stdout_visibility", "extra_data", "tests"}
TEST_KEYS = {"score", "max_score", "name", "number", "output", "tags", "visibility", "extra_data"}


def schema_errors(data) -> list[str]:
    """What in ``data`` breaks Gradescope's results.json format (the specification's fields and values)."""
    errors = []

    def number(value, where: str) -> bool:
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok:
            errors.append(f"{where} must be a finite number, not {value!r}")
        return ok

    if not isinstance(data, dict):
        return ["results.json must hold an object"]
    errors += [f"unknown top-level key {k!r}" for k in sorted(set(data) - TOP_KEYS)]
    if "score" not in data and not all("score" in t for t in data.get("tests", [])):
        errors.append("a score is needed at the top level or in every test")
    if "score" in data:
        number(data["score"], "score")
    if "execution_time" in data and not (
        isinstance(data["execution_time"], int) and data["execution_time"] >= 0
    ):
        errors.append("execution_time must be whole seconds")
    for key in ("visibility", "stdout_visibility"):
        if key in data and data[key] not in VISIBILITIES:
            errors.append(f"{key} {data[key]!r} is not one of {sorted(VISIBILITIES)}")
    if "output" in data and not isinstance(data["output"], str):
        errors.append("output must be text")
    if "extra_data" in data and not isinstance(data["extra_data"], dict):
        errors.append("extra_data must be an object")
    tests = data.get("tests", [])
    if not isinstance(tests, list):
        return [*errors, "tests must be a list"]
    for i, test in enumerate(tests):
        where = f"tests[{i}]"
        if not isinstance(test, dict):
            errors.append(f"{where} must be an object")
            continue
        errors += [f"{where}: unknown key {k!r}" for k in sorted(set(test) - TEST_KEYS)]
        if not (isinstance(test.get("name"), str) and test["name"]):
            errors.append(f"{where}: a name is needed")
        if number(test.get("score"), f"{where}.score") and number(
            test.get("max_score"), f"{where}.max_score"
        ):
            if not 0 <= test["score"] <= test["max_score"]:
                errors.append(f"{where}: score {test['score']} outside 0..{test['max_score']}")
        if not isinstance(test.get("output", ""), str):
            errors.append(f"{where}: output must be text")
        if test.get("visibility", "visible") not in VISIBILITIES:
            errors.append(f"{where}: visibility {test['visibility']!r}")
    if "score" in data and tests and abs(data["score"] - sum(t.get("score", 0) for t in tests)) > 1e-9:
        errors.append("the top-level score must be the sum of the tests' scores")
    return errors


def test_the_schema_check_rejects_what_gradescope_rejects():
    good = {"score": 1.0, "tests": [{"name": "q1", "score": 1.0, "max_score": 1.0, "visibility": "visible"}]}
    assert schema_errors(good) == []
    for broken in (
        {**good, "score": float("nan")},
        {**good, "stdout_visibility": "later"},
        {**good, "tests": [{"name": "q1", "score": 2.0, "max_score": 1.0}]},
        {**good, "tests": [{"name": "q1", "score": True, "max_score": 1.0}]},
        {**good, "tests": [{"score": 1.0, "max_score": 1.0}]},
        {**good, "grade": 1},
    ):
        assert schema_errors(broken), broken


# ------------------------------------------------------------------------------------------- the zip itself
def _zip(name: str) -> bytes:
    return tool.gradescope_zip(
        exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb"))
    )


@pytest.mark.parametrize("name", SETS)
def test_the_zip_holds_the_specifications_files_at_its_root_and_the_sets_bundle(name):
    data = _zip(name)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        infos = {i.filename: i for i in zf.infolist()}
        bundle = zf.read("autograder.zip")
    assert bundle == exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb"))
    for script in ("setup.sh", "run_autograder"):
        assert infos[script].external_attr >> 16 == 0o100755, script
    for needed in (
        "attnlib/pyproject.toml",
        "attnlib/README.md",
        "attnlib/attnlib/__init__.py",
        "attnlib/attnlib/grading/checks.py",
        "grader/pyproject.toml",
        "grader/attnlib_grader/gradescope.py",
        "tools/numeric_env.py",
        "constraints.txt",
    ):
        assert needed in infos, needed
    assert any(n.startswith("attnlib/attnlib/checkpoints/") and n.endswith(".pt") for n in infos)
    assert not [n for n in infos if "__pycache__" in n or n.endswith(".pyc")]


@pytest.mark.parametrize("name", SETS[:1])
def test_the_zip_is_deterministic_sorted_and_dated_2020(name):
    first, second = _zip(name), _zip(name)
    assert first == second
    with zipfile.ZipFile(io.BytesIO(first)) as zf:
        names = zf.namelist()
        assert names == sorted(names)
        assert {i.date_time for i in zf.infolist()} == {tool.DATE}


def test_the_skip_switch_of_setup_sh_skips_the_installs_and_nothing_else():
    lines = tool.SETUP_SH.split("\n")
    start = lines.index("    # --- the installs: the only lines that ATTNLIB_GRADESCOPE_PYTHON skips ---")
    end = lines.index("    # --- end of the installs ---")
    assert lines[start - 1] == 'if [ -z "${ATTNLIB_GRADESCOPE_PYTHON:-}" ]; then'
    assert lines[end + 1 : end + 4] == ["else", '    PYTHON="${ATTNLIB_GRADESCOPE_PYTHON}"', "fi"]
    installs = re.compile(
        r'^\s*(apt-get |DEBIAN_FRONTEND=\S+ apt-get |python3 -m venv |TORCH=|"\$ROOT/venv/bin/pip"|'
        r'--index-url|"\$SOURCE/attnlib"|PYTHON="\$ROOT/venv/bin/python"$)'
    )
    inside = [line for line in lines[start + 1 : end] if line.strip()]
    assert inside and all(installs.match(line) for line in inside), inside
    outside = "\n".join(lines[: start - 1] + lines[end + 4 :])
    assert not re.search(r"apt-get|pip |python3 -m venv", outside)


# ------------------------------------------------------------------------------------ results.json's content
def _result() -> SubmissionResult:
    public = CaseResult("small_example", 0.0, False, False, "expected shape (2, 3)\x1b[31m")
    hidden = [CaseResult("hidden_a", 1.0, True, True), CaseResult("hidden_b", 1.0, True, False, "wrong axis")]
    return SubmissionResult(
        "learner",
        [
            QuestionResult("q1", 2.0, cases=[public, *hidden]),
            QuestionResult("q2", 2.0, manual=True),
        ],
        notes=["cell 3 raised NameError"],
    )


def test_results_json_shows_public_messages_at_once_and_hidden_ones_after_the_due_date():
    data = runner.results(_result(), 3.2)
    assert schema_errors(data) == []
    q1, hidden, q2 = data["tests"]
    assert (q1["name"], q1["score"], q1["max_score"], q1["visibility"]) == ("q1", 1.0, 2.0, "visible")
    assert "expected shape (2, 3)<U+001B>[31m" in q1["output"] and "1 of 2 passed" in q1["output"]
    assert "hidden_b" not in q1["output"] and "wrong axis" not in q1["output"]
    assert (hidden["visibility"], hidden["score"], hidden["max_score"]) == ("after_due_date", 0.0, 0.0)
    assert "hidden_b (1 points): FAILED" in hidden["output"] and "wrong axis" in hidden["output"]
    assert (q2["score"], q2["max_score"]) == (0.0, 0.0) and "your teacher grades it (2 points)" in q2[
        "output"
    ]
    assert data["score"] == 1.0 and "cell 3 raised NameError" in data["output"]


def test_refusing_writes_no_points_and_the_reason_for_every_question():
    data = runner.refusal(
        [{"name": "q1", "points": 2.0}, {"name": "q2", "points": 1.0, "manual": True}], "why"
    )
    assert schema_errors(data) == []
    assert data["score"] == 0 and data["extra_data"] == {"graded": False, "reason": "why"}
    assert [t["max_score"] for t in data["tests"]] == [2.0, 0.0]
    assert all(t["output"].startswith("NOT GRADED: why") for t in data["tests"])


def _root(tmp: Path, name: str) -> Path:
    """A fresh /autograder-like root: source/ unpacked from the set's gradescope.zip, an empty submission/."""
    source = tmp / "source"
    with zipfile.ZipFile(io.BytesIO(_zip(name))) as zf:
        zf.extractall(source)
        for info in zf.infolist():
            os.chmod(source / info.filename, info.external_attr >> 16 & 0o777)
    (tmp / "submission").mkdir()
    return tmp


def _grading_spy(monkeypatch) -> list:
    calls = []
    graded = SubmissionResult("spy", [])
    monkeypatch.setattr(runner, "grade_folder", lambda *a, **k: calls.append(a) or [graded])
    return calls


def _no_namespaces():
    raise runner.IsolationError("creating a user namespace failed: Operation not permitted")


@pytest.mark.parametrize("why", ["not root", "fallback refused", "control: the sandbox works"])
def test_without_the_sandbox_or_the_fallback_it_refuses_and_runs_no_learner_code(tmp_path, monkeypatch, why):
    name = SETS[0]
    root = _root(tmp_path, name)
    nbformat.write(exercises.submission(name), root / "submission" / "mine.ipynb")
    calls = _grading_spy(monkeypatch)
    monkeypatch.setenv(runner.ROOT_VARIABLE, str(root))
    if why == "control: the sandbox works":  # the grader is called (the spy grades nothing)
        assert runner.grade(root)["extra_data"] == {"graded": True, "isolation": "bubblewrap"}
        assert len(calls) == 1
        return
    monkeypatch.setattr(runner, "check_bwrap", _no_namespaces)
    if why == "not root":
        monkeypatch.setattr(runner.os, "geteuid", lambda: 1000)
    else:
        monkeypatch.setenv(runner.FALLBACK_VARIABLE, "refuse")
    assert runner.main() == 0
    data = json.loads((root / "results" / "results.json").read_text())
    assert calls == [] and schema_errors(data) == []
    assert data["extra_data"]["graded"] is False and "sandbox (bubblewrap) cannot be built" in data["output"]
    assert "Operation not permitted" in data["output"]


@pytest.mark.slow
def test_without_the_sandbox_it_grades_as_nobody_who_reads_neither_the_tests_nor_the_results(monkeypatch):
    """Gradescope's fallback, as root where bubblewrap cannot build a sandbox: full marks for the solutions,
    and the attacking cell fails on the tests and the results while the same cell, aimed at a copy of the
    bundle anyone may read, succeeds (so it ran, as the fallback's user); a fork loop starts at most
    MAX_PROCESSES."""
    name = "03_dot_product_attention" if "03_dot_product_attention" in SETS else SETS[0]
    root = _root(Path(tempfile.mkdtemp(prefix="gradescope-fallback-")), name)  # /tmp: anyone may enter it
    os.chmod(root, 0o755)
    (root / "copy").mkdir(mode=0o755)
    (root / "copy" / "autograder.zip").write_bytes((root / "source" / "autograder.zip").read_bytes())
    (root / "drop").mkdir()
    os.chmod(root / "drop", 0o777)
    monkeypatch.setattr(runner, "check_bwrap", _no_namespaces)
    monkeypatch.setattr(runner, "NOBODY", TEST_UID)
    monkeypatch.setenv(runner.ROOT_VARIABLE, str(root))
    control = _attack(root).replace("'source'", "'copy'").replace("'results'", "'drop'")
    forks = (  # how many processes that wait it can start, as uid 65534 (RLIMIT_NPROC)
        "import os, time\n"
        "started = 0\n"
        "for _ in range(50):\n"
        "    try:\n"
        "        if os.fork() == 0:\n"
        "            time.sleep(30)\n"
        "            os._exit(0)\n"
        "        started += 1\n"
        "    except OSError:\n"
        "        break\n"
        f"pathlib.Path({str(root / 'drop' / 'forks')!r}).write_text(str(started))\n"
    )
    try:
        scores = {}
        for label, nb in {
            "solutions": exercises.submission(name),
            "attack": exercises.submission(name, untouched=True, cells_after=[_attack(root), control, forks]),
        }.items():
            for old in (root / "submission").iterdir():
                old.unlink()
            nbformat.write(nb, root / "submission" / f"{label}.ipynb")
            runner.main()
            data = json.loads((root / "results" / "results.json").read_text())
            assert data["extra_data"] == {"graded": True, "isolation": "unprivileged user"}, data["output"]
            scores[label] = data["score"]
        full = sum(
            q["points"]
            for q in runner.load_bundle(root / "source" / "autograder.zip").questions
            if not q.get("manual")
        )
        assert scores == {"solutions": full, "attack": 0}
        assert not (root / "results" / "stolen.zip").exists()
        assert (root / "drop" / "stolen.zip").stat().st_uid == runner.NOBODY
        assert 1 <= int((root / "drop" / "forks").read_text()) <= child.MAX_PROCESSES
    finally:
        shutil.rmtree(root, ignore_errors=True)


def test_it_refuses_a_submission_without_exactly_one_notebook(tmp_path, monkeypatch):
    root = _root(tmp_path, SETS[0])
    calls = _grading_spy(monkeypatch)
    for count in (0, 2):
        for i in range(count):
            nbformat.write(exercises.submission(SETS[0]), root / "submission" / f"n{i}.ipynb")
        data = runner.grade(root)
        assert calls == [] and data["extra_data"]["graded"] is False
        assert "submit exactly one notebook" in data["output"]


# --------------------------------------------------------------------- the simulated run, against grade.py
def _wrong(name: str) -> list[Path]:
    """The set's first two wrong-answer fixtures that earn part of the points."""
    full = sum(
        q["points"]
        for q in exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb").config["questions"]
        if not q["manual"]
    )
    partial = [
        p
        for p in fixture_files(name)
        if p.stem.startswith("wrong_") and 0 < sum(json.loads(p.read_text())["scores"].values()) < full
    ]
    return partial[:2]


def _attack(root: Path) -> str:
    """A cell that attacks this very autograder: it copies the hidden tests into the results folder, where
    Gradescope would keep them, and appends full marks to results.json."""
    return (
        "import pathlib\n"
        f"root = pathlib.Path({str(root)!r})\n"
        "try:\n"
        "    bundle = (root / 'source' / 'autograder.zip').read_bytes()\n"
        "    (root / 'results' / 'stolen.zip').write_bytes(bundle)\n"
        "except OSError:\n"
        "    pass\n"
        "try:\n"
        "    with open(root / 'results' / 'results.json', 'a') as f:\n"
        "        f.write('{\"score\": 100}')\n"
        "except OSError:\n"
        "    pass\n"
    )


def _notebooks(name: str, root: Path) -> dict[str, nbformat.NotebookNode]:
    """What is submitted: the solutions, the untouched notebook, two wrong answers, an issue-26 hostile
    fixture (a reply that stops midway) and the untouched notebook with ``_attack``'s cell."""
    notebooks = {
        "solutions": exercises.submission(name),
        "untouched": nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4),
        "attacks_the_autograder": exercises.submission(name, untouched=True, cells_after=[_attack(root)]),
    }
    for path in [*_wrong(name), fixture_files(name)[0].parent / "hostile_partial_reply.json"]:
        notebooks[path.stem] = fixture_notebook(name, json.loads(path.read_text()))
    return notebooks


def _grade_py(bundle: Path, notebooks: dict, tmp: Path) -> tuple[Path, dict[str, dict[str, str]]]:
    """grade.py on ``notebooks``, run by the venv's python through a symbolic link to the venv: (the python
    it ran, {label: its scores.csv row})."""
    folder, out, link = tmp / "grade_py_in", tmp / "grade_py_out", tmp / "venv-link"
    folder.mkdir()
    for label, nb in notebooks.items():
        nbformat.write(nb, folder / f"{label}.ipynb")
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    python = link / "bin" / "python"
    run = subprocess.run(
        [str(python), str(ROOT / "tools" / "grade.py"), str(bundle), str(folder), "--out", str(out)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    with open(out / "scores.csv", encoding="utf-8") as f:
        return python, {row["submission"]: row for row in csv.DictReader(f)}


def _run_autograder(root: Path, nb) -> dict:
    for old in (root / "submission").iterdir():
        old.unlink()
    nbformat.write(nb, root / "submission" / "submission.ipynb")
    env = {**os.environ, "AUTOGRADER_ROOT": str(root)}
    subprocess.run(
        [str(root / "source" / "run_autograder")], cwd=root, env=env, check=True, capture_output=True
    )
    return json.loads((root / "results" / "results.json").read_text())


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """For a set: setup.sh once in a fresh root, run_autograder on each notebook, grade.py's scores."""

    @cache
    def simulate(name: str) -> dict:
        root = _root(tmp_path_factory.mktemp(f"autograder-{name}"), name)
        env = {**os.environ, "AUTOGRADER_ROOT": str(root), tool.SKIP_INSTALL: sys.executable}
        setup = subprocess.run([str(root / "source" / "setup.sh")], env=env, capture_output=True, text=True)
        assert setup.returncode == 0, setup.stderr[-2000:]
        notebooks = _notebooks(name, root)
        results = {label: _run_autograder(root, nb) for label, nb in notebooks.items()}
        python, grade_py = _grade_py(
            root / "source" / "autograder.zip", notebooks, tmp_path_factory.mktemp("grade-py")
        )
        return {"root": root, "results": results, "grade_py": grade_py, "grade_py_python": python}

    return simulate


SIMULATED = [pytest.param(name, marks=pytest.mark.slow) for name in SETS]  # grades 6 notebooks, 2 runs each


def _question_scores(data: dict) -> dict[str, float]:
    return {t["name"]: t["score"] for t in data["tests"] if ":" not in t["name"]}


@pytest.mark.parametrize("name", SIMULATED)
def test_every_results_json_follows_gradescopes_format(simulated, name):
    for label, data in simulated(name)["results"].items():
        assert schema_errors(data) == [], label
        assert data["extra_data"]["graded"] is True, (label, data["output"])


@pytest.mark.parametrize("name", SIMULATED)
def test_the_scores_are_grade_pys_question_by_question(simulated, name):
    run = simulated(name)
    for label, data in run["results"].items():
        row = run["grade_py"][label]
        expected = {q: float(row[q]) if row[q] else 0.0 for q in _question_scores(data)}
        assert _question_scores(data) == expected, label
        assert data["score"] == float(row["auto_score"]), label


@pytest.mark.parametrize("name", SIMULATED)
def test_solutions_get_full_marks_and_the_untouched_notebook_none(simulated, name):
    results = simulated(name)["results"]
    full = sum(t["max_score"] for t in results["solutions"]["tests"])
    assert full > 0 and results["solutions"]["score"] == full
    assert results["untouched"]["score"] == 0


@pytest.mark.parametrize("name", SIMULATED)
def test_wrong_answers_and_the_hostile_fixture_keep_the_scores_their_fixtures_state(simulated, name):
    results = simulated(name)["results"]
    paths = [*_wrong(name), fixture_files(name)[0].parent / "hostile_partial_reply.json"]
    assert len(paths) == 3
    for path in paths:
        stated = json.loads(path.read_text())["scores"]
        assert _question_scores(results[path.stem]) == {
            q: stated.get(q, 0.0) for q in _question_scores(results[path.stem])
        }, path.stem


@pytest.mark.parametrize("name", SIMULATED)
def test_learner_code_neither_reads_the_hidden_tests_nor_writes_the_results(simulated, name):
    run = simulated(name)
    root, data = run["root"], run["results"]["attacks_the_autograder"]
    assert data["score"] == 0 and data["extra_data"]["graded"] is True
    assert not (root / "results" / "stolen.zip").exists()
    exec(_attack(root), {})  # the positive control: run here, outside the sandbox, the attack succeeds
    assert (root / "results" / "stolen.zip").read_bytes() == (root / "source" / "autograder.zip").read_bytes()


@pytest.mark.parametrize("name", SIMULATED)
def test_a_venv_reached_through_a_symbolic_link_grades_as_its_real_path(simulated, graded, name):
    """grade.py run by the venv's python through a link: the solutions and the untouched notebook get the
    scores the same set's fixtures were given in-process (through the real path). Before the fix every module
    torch imports lazily was missing in the sandbox and honest solutions lost a third to two thirds of their
    points."""
    run = simulated(name)
    python = run["grade_py_python"]
    assert python.parent.parent.is_symlink() and os.path.realpath(python.parent.parent) == str(
        Path(sys.prefix).resolve()
    )
    for label in ("solutions", "untouched"):
        result = graded[name]["results"][label]
        auto = sum(q.score for q in result.questions if not q.manual)
        assert float(run["grade_py"][label]["auto_score"]) == auto, label
    assert float(run["grade_py"]["solutions"]["auto_score"]) > 0  # the control: a score that can be lost
