"""Every exercise set's Colab edition installs its feedback tools and reports on every question, on the Colab
stand-in (tests/colab/conftest.py), with nothing uploaded; what it leaves `pip check` reporting is what its
grading cell says it leaves out."""

import importlib.util
import re
import subprocess
import sys

import pytest
from colab_edition import edition_path
from notebooks import ROOT

from .conftest import VENVS, claim_notes, colab_runtime, run_alone

# tools/exercises.py by path: the plain name "exercises" is also the exercises/ folder, which pytest imports
# (as a namespace package) when it collects exercises/conftest.py in the same run.
_spec = importlib.util.spec_from_file_location("course_tools_exercises", ROOT / "tools" / "exercises.py")
_tools = sys.modules[_spec.name] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tools)
OTTER_LEFT_OUT = _tools.OTTER_LEFT_OUT

SETS = sorted((ROOT / "exercises").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from colab_runtime("exercises", tmp_path_factory)


@pytest.mark.parametrize("path", SETS, ids=lambda p: p.stem)
def test_grader_check_reports_on_every_question(path, kernel, colab_origin, tmp_path):
    nb = run_alone(edition_path(path), kernel, colab_origin, tmp_path)
    checks = [c for c in nb.cells if c.cell_type == "code" and c.source.startswith("grader.check(")]
    assert checks, "the set has grader.check cells"
    for cell in checks:
        text = "".join(o.get("data", {}).get("text/plain", "") + o.get("text", "") for o in cell.outputs)
        assert "Test case failed" in text or "All test cases passed" in text, f"{cell.source}: {text[:300]}"
    assert not claim_notes(nb)
    # The grading cell installed otter-grader without its dependencies: `pip check` lists exactly the ones
    # OTTER_LEFT_OUT names (and the cell's comment says), nothing the checks need.
    check = subprocess.run(
        [VENVS / "exercises" / "bin" / "python", "-m", "pip", "check"], capture_output=True, text=True
    ).stdout
    missing = set(re.findall(r"requires ([\w.-]+), which is not installed", check))
    missing |= set(re.findall(r"has requirement ([\w.-]+)[<>=!~ ,.\w]*, but you have", check))
    assert missing == OTTER_LEFT_OUT, check
