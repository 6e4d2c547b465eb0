"""Feedback without uploading anything: the learner notebook alone in an empty folder, as Colab opens it."""

import shutil

import nbformat
import pytest
from exercise_helpers import ROOT, SETS, exercises
from nbclient import NotebookClient


def check_outputs(nb) -> dict[str, str]:
    found = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("grader.check("):
            question = cell.source.split('"')[1]
            texts = [
                o.get("data", {}).get("text/plain", "") + o.get("text", "") + o.get("evalue", "")
                for o in cell.get("outputs", [])
            ]
            found[question] = "\n".join(texts)
    return found


@pytest.mark.parametrize("name", SETS)
def test_learner_notebook_alone_gives_feedback_for_every_question(name, tmp_path):
    shutil.copy(ROOT / "exercises" / f"{name}.ipynb", tmp_path / "notebook.ipynb")
    nb = nbformat.read(tmp_path / "notebook.ipynb", 4)
    solutions = {
        c.metadata["exercise"]["answer"]: c.source
        for c in exercises.submission(name).cells
        if c.metadata.get("exercise")
    }
    for cell in nb.cells:  # the learner pastes in the right answers
        answer = cell.metadata.get("exercise", {}).get("answer")
        if answer and cell.cell_type == "code":
            cell.source = solutions[answer]
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = check_outputs(nb)
    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    assert sorted(outputs) == sorted(q.name for q in ex.questions if not q.manual)
    for question, text in outputs.items():
        assert "All test cases passed!" in text, f"{question}: {text[:500]}"
    assert sorted(p.name for p in tmp_path.iterdir()) == [".OTTER_LOG", "notebook.ipynb"]  # no tests folder


@pytest.mark.parametrize("name", SETS)
def test_stored_untouched_notebook_shows_a_failing_check_per_question(name):
    """Except a find-the-bug question's: its check runs on the buggy code as given, so the notebook stores no
    output there (test_find_the_bug.py)."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    outputs = check_outputs(nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4))
    shown = {q: text for q, text in outputs.items() if text}
    assert sorted(shown) == sorted(q.name for q in ex.questions if not q.manual and not q.find_the_bug)
    assert all("❌ Test case failed" in text for text in shown.values()), shown
