"""Shared names of the exercise tests (conftest.py puts this folder on sys.path).

EXERCISE_SETS=08,09 (numbers or names, comma-separated) limits the tests to those sets while writing one;
CI sets nothing and tests every set.
"""

import importlib.util
import os
import sys
from pathlib import Path

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
