"""Shared names of the exercise tests (conftest.py puts this folder on sys.path)."""

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import exercises  # noqa: E402  (tools/exercises.py)

FIXTURES = Path(__file__).resolve().parent / "fixtures"
SETS = [p.stem for p in exercises.masters([])]


def fixture_files(set_name: str) -> list[Path]:
    return sorted((FIXTURES / set_name).glob("*.json"))
