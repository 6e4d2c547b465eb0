"""Shared names of the exercise tests (conftest.py puts this folder on sys.path).

EXERCISE_SETS=08,09 (numbers or names, comma-separated) limits the tests to those sets while writing one;
CI sets nothing and tests every set.
"""

import importlib.util
import os
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "grader"))  # the teacher's grader, its own package


def _load_tool(name: str):
    """tools/<name>.py, by path: the plain name "exercises" is also the exercises/ folder, which pytest may
    already have imported (as a namespace package) when it collected exercises/conftest.py."""
    spec = importlib.util.spec_from_file_location(f"course_tools_{name}", ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


exercises = _load_tool("exercises")

FIXTURES = Path(__file__).resolve().parent / "fixtures"
# A secret of the grader's environment (conftest.py sets it): no learner code may see it, no feedback show it.
GRADER_SECRET = "grader-secret-7d1e9c"
SETS = [p.stem for p in exercises.masters([n for n in os.environ.get("EXERCISE_SETS", "").split(",") if n])]


def fixture_files(set_name: str) -> list[Path]:
    return sorted((FIXTURES / set_name).glob("*.json"))


def fixture_notebook(name: str, spec: dict):
    """The notebook a fixture describes: its answers and extra cells over the solutions (or the untouched
    learner notebook), with ``repeat_after: [source, n]`` adding n copies of one more cell."""
    nb = exercises.submission(
        name,
        spec["answers"],
        spec["cells_before"],
        spec["cells_after"],
        untouched=spec.get("base") == "untouched",
    )
    if spec.get("repeat_after"):
        source, count = spec["repeat_after"]
        nb.cells += [nbformat.v4.new_code_cell(source) for _ in range(int(count))]
    return nb


def fixture_file_name(stem: str, spec: dict) -> str:
    """The file a fixture is submitted as: ``file_name`` (hex of its bytes) or its stem, with .ipynb."""
    if "file_name" in spec:
        return os.fsdecode(bytes.fromhex(spec["file_name"]) + b".ipynb")
    return f"{stem}.ipynb"
