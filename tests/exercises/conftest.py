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
    exercises,
    fixture_file_name,
    fixture_files,
    fixture_notebook,
)

os.environ["ATTNLIB_TEST_GRADER_SECRET"] = GRADER_SECRET


class _OnFirstUse(dict):
    """A dict that computes a set's entry the first time a test asks for it (``make(name)``), then keeps it.

    A worker computes only the sets its tests need: the course's scheduler (tools/pytest_schedule.py) sends
    every test of one set to one worker, so each set is built and graded once per run, not once per worker.
    """

    def __init__(self, make):
        super().__init__()
        self.make = make

    def __missing__(self, name: str):
        self[name] = self.make(name)
        return self[name]


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, Path]:
    """The autograder bundle of each set, built on first use in a temporary folder (not exercises/dist)."""
    out = tmp_path_factory.mktemp("bundles")

    def build(name: str) -> Path:
        path = out / f"{name}.zip"
        path.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")))
        return path

    return _OnFirstUse(build)


@pytest.fixture(scope="session")
def graded(built, tmp_path_factory) -> dict[str, dict]:
    """Each set graded once, on first use: solutions, untouched learner notebook and all fixtures, in one run.

    ``graded[set]`` is {"results": {label: SubmissionResult}, "out": folder, "fixtures": {name: spec},
    "labels": {fixture: label}, "folder": submissions folder, "bundle": bundle path}; a fixture's label is
    its stem unless it is submitted under a ``file_name`` of its own (report.label of that name).
    A fixture with "base": "untouched" starts from the learner notebook (its answers left `...`), so that
    any point it gets is unfair.
    Each set's own limits per question and per cell (10 s; set 5's 20 s, whose q6 trains a model twice): a
    tighter one made correct solutions time out when the 2-core machine was busy (the infinite-loop fixtures
    pay it, two of them).
    """
    from attnlib_grader import report
    from attnlib_grader.grade import grade_folder

    def grade(name: str) -> dict:
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
        results = grade_folder(built[name], folder, out, jobs=2)
        return {
            "results": {r.name: r for r in results},
            "out": out,
            "fixtures": specs,
            "labels": labels,
            "folder": folder,
            "bundle": built[name],
        }

    return _OnFirstUse(grade)
