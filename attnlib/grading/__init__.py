"""Graded exercises: instant feedback in the learner's notebook, hardened grading for the teacher.

In an exercise notebook (Colab or Jupyter, nothing to upload):

    from attnlib import grading
    grader = grading.notebook("03_dot_product_attention")
    grader.check("q1")        # runs the public tests of q1 (otter-grader)

The public tests ship inside attnlib as package data (``public/<set>.json``, written by
``tools/exercises.py build``), so ``pip install attnlib`` is all a notebook needs; otter-grader's usual
``./tests`` folder never has to exist. ``checks`` holds the assertions the tests use. The teacher's grader
(hidden tests, the bubblewrap sandbox, ``tools/grade.py``) is not part of attnlib: it is its own package,
``grader/attnlib_grader`` in the course repository. See ``exercises/teachers.md``.
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

PUBLIC_DIR = Path(__file__).resolve().parent / "public"
_materialized: dict[str, Path] = {}


def available_sets() -> list[str]:
    """Names of the exercise sets whose public tests ship with this attnlib."""
    return sorted(p.stem for p in PUBLIC_DIR.glob("*.json"))


def public_tests_dir(set_name: str) -> Path:
    """A folder holding the public test files (``q1.py``, ...) of a set, written once per process."""
    if set_name not in _materialized:
        path = PUBLIC_DIR / f"{set_name}.json"
        if not path.is_file():
            raise ValueError(
                f"no public tests for exercise set {set_name!r} in this attnlib; it has {available_sets()}. "
                "Reinstall attnlib from the course repository (run the setup cell again)."
            )
        files = json.loads(path.read_text())["tests"]
        root = Path(tempfile.mkdtemp(prefix="attnlib-tests-"))
        atexit.register(shutil.rmtree, root, ignore_errors=True)
        folder = root / set_name
        folder.mkdir()
        for name, text in files.items():
            (folder / name).write_text(text)
        _materialized[set_name] = folder
    return _materialized[set_name]


def notebook(set_name: str) -> Any:
    """The ``otter.Notebook`` of a set, reading the public tests shipped with attnlib. Finds out once which
    language the running notebook is in (``messages.remember``): its checks then speak it, otter's lines
    around their messages included (``results.in_language``)."""
    import otter  # imported here: attnlib does not depend on otter-grader, exercise notebooks install it

    from attnlib.grading import messages, results

    messages.remember()
    return results.notebook_class(otter.Notebook)(tests_dir=str(public_tests_dir(set_name)))


__all__ = ["available_sets", "notebook", "public_tests_dir"]
