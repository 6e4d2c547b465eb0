"""The grader's Python environment in the sandbox (hole 6): an environment the sandbox cannot fully see makes
the self-check refuse to grade, saying why, instead of charging the learners for a missing module. (That a
virtual environment reached through a symbolic link grades exactly as through its real path is shown by the
grade.py run of the Gradescope simulation, test_gradescope.py, which runs through such a link.)"""

from pathlib import Path

import nbformat
import pytest
from attnlib_grader import isolation
from exercise_helpers import SETS, exercises

pytestmark = pytest.mark.skipif(isolation.bwrap_path() is None, reason="bubblewrap is not installed")


@pytest.mark.slow  # grades the reference solution in the sandbox
def test_an_environment_the_sandbox_cannot_fully_see_makes_the_self_check_refuse(
    built, tmp_path, monkeypatch
):
    """The sandbox made blind to two folders of torch that it imports late (as a venv reached through a link
    was before the fix: torch.fx.experimental and torch._subclasses were missing): the self-check grades the
    reference solution first, finds it short of full marks and refuses, naming a missing module as the
    grader's problem; no learner is graded."""
    import torch
    from attnlib_grader.grade import SelfCheckError, grade_folder

    wanted = [s for s in ("03_dot_product_attention", "09_self_attention") if s in SETS]  # they import late
    if not wanted:
        pytest.skip("sets 3 and 9 import these folders late; neither is being tested")
    name = wanted[0]
    real_init = isolation.Filesystem.__init__
    hidden = [
        Path(torch.__file__).parent / "fx" / "experimental",
        Path(torch.__file__).parent / "_subclasses",
    ]

    def blind(self, *args, **kwargs):
        real_init(self, *args, **kwargs)
        for folder in hidden:
            self.args += ["--tmpfs", str(folder)]

    monkeypatch.setattr(isolation.Filesystem, "__init__", blind)
    folder = tmp_path / "submissions"
    folder.mkdir()
    nbformat.write(exercises.submission(name), folder / "learner.ipynb")
    with pytest.raises(SelfCheckError) as refused:
        grade_folder(built[name], folder, tmp_path / "out", jobs=1)
    message = str(refused.value)
    assert "reference solution scored" in message and "ModuleNotFoundError" in message, message
    assert "not of any learner" in message
    assert not (tmp_path / "out" / "feedback" / "learner.md").exists()


def test_grade_py_says_why_it_refuses(built, tmp_path, monkeypatch, capsys):
    """The command prints the self-check's reason and exits 3 (a bundle without a reference solution here)."""
    import zipfile

    from attnlib_grader.grade import main

    name = SETS[0]
    bundle = tmp_path / "no-solution.zip"
    with zipfile.ZipFile(built[name]) as source, zipfile.ZipFile(bundle, "w") as target:
        for item in source.namelist():
            if item != "solutions.ipynb":
                target.writestr(item, source.read(item))
    (tmp_path / "submissions").mkdir()
    assert main([str(bundle), str(tmp_path / "submissions"), "--out", str(tmp_path / "out")]) == 3
    assert "self-check failed" in capsys.readouterr().err
