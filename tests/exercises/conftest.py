import json
import os
import sys
from pathlib import Path

import nbformat
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from exercise_helpers import (  # noqa: E402
    GRADER_SECRET,
    ROOT,
    SETS,
    exercises,
    fixture_file_name,
    fixture_files,
    fixture_notebook,
)

os.environ["ATTNLIB_TEST_GRADER_SECRET"] = GRADER_SECRET


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path]:
    """The autograder bundle of every set, built into a temporary folder (not exercises/dist)."""
    out = tmp_path_factory.mktemp("bundles")
    bundles = {}
    for name in SETS:
        path = out / f"{name}.zip"
        path.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")))
        bundles[name] = path
    return bundles


@pytest.fixture(scope="session")
def graded(built, tmp_path_factory) -> dict[str, dict]:
    """Every set graded once: solutions, untouched learner notebook and every fixture, in one run each.

    Returns {set: {"results": {label: SubmissionResult}, "out": folder, "fixtures": {name: spec},
    "labels": {fixture: label}, "folder": submissions folder, "bundle": bundle path}}; a fixture's label is
    its stem unless it is submitted under a ``file_name`` of its own (report.label of that name).
    A fixture with "base": "untouched" starts from the learner notebook (its answers left `...`), so that
    any point it gets is unfair.
    The default 10 s limit per question and per cell: a tighter one made correct solutions time out when
    the 2-core machine was busy (the infinite-loop fixtures pay it, two of them).
    """
    from attnlib_grader import report
    from attnlib_grader.grade import grade_folder

    graded = {}
    for name in SETS:
        folder = tmp_path_factory.mktemp(f"submissions-{name}")
        nbformat.write(exercises.submission(name), folder / "solutions.ipynb")
        nbformat.write(nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4), folder / "untouched.ipynb")
        specs, labels = {}, {}
        for path in fixture_files(name):
            spec = json.loads(path.read_text())
            specs[path.stem] = spec
            file_name = fixture_file_name(path.stem, spec)
            labels[path.stem] = report.label(file_name)
            nbformat.write(fixture_notebook(name, spec), os.path.join(folder, file_name))
        (folder / "not_a_notebook.ipynb").write_text("{ this is not json")
        out = tmp_path_factory.mktemp(f"results-{name}")
        results = grade_folder(built[name], folder, out, jobs=2, time_limit=10)
        graded[name] = {
            "results": {r.name: r for r in results},
            "out": out,
            "fixtures": specs,
            "labels": labels,
            "folder": folder,
            "bundle": built[name],
        }
    return graded
