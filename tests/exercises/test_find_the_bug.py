"""Find-the-bug questions and predict-then-run cells are not given away (issue 27 item 1).

A find-the-bug question gives the learner buggy code to fix; its master declares it in the BEGIN QUESTION
cell, ``find_the_bug: {names: [...]}``, with the words that would name its bug. A predict-then-run cell asks
for a prediction before it is run; its master cell carries the tag ``predict-then-run``. Then:
- the committed learner notebooks (exercises/*.ipynb, the website's source, and their Colab editions) store
  no output of a find-the-bug question's check cell, which runs the public tests on the code as given, nor
  of a predict-then-run cell;
- the tests of a find-the-bug question, run on the code as given, say that it is not fixed and where to
  look, in words that do not name the bug: the public check and the hidden tests' feedback alike.
"""

import nbformat
import pytest
from exercise_helpers import FIXTURES, ROOT, SETS, exercises
from nbclient import NotebookClient

EDITIONS = ["exercises", "colab/exercises"]
# the learner notebooks as committed before outputs were withheld (.json: neither nbval nor ruff reads them)
BEFORE = FIXTURES / "stored_before_withholding"


def master(name: str) -> nbformat.NotebookNode:
    return nbformat.read(exercises.SOURCE_DIR / f"{name}.ipynb", 4)


def bug_questions(name: str) -> dict[str, list[str]]:
    """{question: the words that name its bug}: the find-the-bug questions of a set, read from its master."""
    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    return {q.name: q.find_the_bug["names"] for q in ex.questions if q.find_the_bug}


def predict_cells(name: str) -> list[str]:
    """The sources of the cells the master tags predict-then-run (a learner gets them unchanged)."""
    return [c.source for c in master(name).cells if exercises.PREDICT_TAG in c.metadata.get("tags", [])]


def check_source(question: str) -> str:
    return f'grader.check("{question}")'


def output_text(cell) -> str:
    return "\n".join(
        o.get("data", {}).get("text/plain", "") + o.get("text", "") + o.get("evalue", "")
        for o in cell.get("outputs", [])
    )


def given_away(nb: nbformat.NotebookNode, name: str) -> list[str]:
    """What a learner notebook of set `name` shows that the learner should find out: every stored output of a
    find-the-bug question's check cell or of a predict-then-run cell. Every such cell must be in the notebook
    (else nothing would be looked at)."""
    marked = {check_source(q): f"the check of {q}, a find-the-bug question" for q in bug_questions(name)}
    marked.update({source: "a predict-then-run cell" for source in predict_cells(name)})
    cells = {c.source: c for c in nb.cells if c.cell_type == "code"}
    missing = [source for source in marked if source not in cells]
    assert not missing, f"{name}: cells the master marks are not in the notebook: {missing}"
    return [
        f"{what}: {output_text(cells[source])[:300]!r}"
        for source, what in marked.items()
        if cells[source].outputs
    ]


@pytest.mark.parametrize("edition", EDITIONS)
@pytest.mark.parametrize("name", SETS)
def test_no_committed_learner_notebook_shows_a_find_the_bug_diagnosis_or_a_predict_then_run_result(
    name, edition
):
    nb = nbformat.read(ROOT / edition / f"{name}.ipynb", 4)
    assert given_away(nb, name) == []


@pytest.mark.parametrize("name", sorted(p.stem for p in BEFORE.glob("*.json")))
def test_the_notebooks_stored_before_withholding_are_caught(name):
    """Positive control: the learner notebooks as committed before (b6a6430) showed each find-the-bug check's
    diagnosis, and set 7 its predict-then-run map; the words the master declares name the bug in that
    output."""
    nb = nbformat.read(BEFORE / f"{name}.json", 4)
    shown = given_away(nb, name)
    assert len(shown) == len(bug_questions(name)) + (name == "07_matrix_form"), shown
    for question, names in bug_questions(name).items():
        text = output_text(next(c for c in nb.cells if c.source == check_source(question))).lower()
        assert any(word.lower() in text for word in names), (question, names, text[:500])


def test_a_question_that_gives_buggy_code_must_declare_find_the_bug():
    question = exercises.Question("q9", 1.0, has_given=True)
    with pytest.raises(ValueError, match="declare find_the_bug"):
        exercises._check_find_the_bug(question, "master.ipynb")
    question.find_the_bug = {"names": ["swapped"]}
    exercises._check_find_the_bug(question, "master.ipynb")  # declared: accepted
    with pytest.raises(ValueError, match="gives no buggy code"):
        exercises._check_find_the_bug(exercises.Question("q9", 1.0, find_the_bug={"names": ["x"]}), "m.ipynb")


@pytest.mark.parametrize("name", SETS)
def test_every_predict_then_run_cell_of_a_master_is_tagged(name):
    """A code cell that opens with "# Predict, then run", or follows a Markdown cell that opens with
    "**Predict, then run**", is tagged; a tag on any other cell would withhold an output for nothing."""
    cells = master(name).cells
    asks = [
        c.source
        for i, c in enumerate(cells)
        if c.cell_type == "code"
        and (
            c.source.startswith("# Predict, then run")
            or (
                i > 0
                and cells[i - 1].cell_type == "markdown"
                and cells[i - 1].source.startswith("**Predict, then run**")
            )
        )
    ]
    assert sorted(asks) == sorted(predict_cells(name))


@pytest.mark.slow
@pytest.mark.parametrize("name", [n for n in SETS if bug_questions(n)])
def test_the_public_check_of_the_code_as_given_fails_without_naming_the_bug(name, tmp_path):
    """The untouched learner notebook, run alone as a learner runs it: each find-the-bug check fails (the bug
    is not fixed) and none of its messages holds a word that names the bug. Where they say to look is each
    set's fixture of the bug as given (its "public" message, test_grading.py)."""
    nb = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    for question, names in bug_questions(name).items():
        text = output_text(next(c for c in nb.cells if c.source == check_source(question)))
        assert "❌ Test case failed" in text, text[:500]
        assert [w for w in names if w.lower() in text.lower()] == [], text


@pytest.mark.parametrize("name", [n for n in SETS if bug_questions(n)])
def test_the_feedback_on_the_code_as_given_names_no_bug(graded, name):
    """The teacher's grading of the untouched notebook: no public or hidden message of a find-the-bug question
    names the bug, so a graded attempt tells a resubmission no more than the public check."""
    result = graded[name]["results"]["untouched"]
    for question, names in bug_questions(name).items():
        cases = next(q for q in result.questions if q.name == question).cases
        messages = [c.message or "" for c in cases if not c.passed]
        assert messages, f"{question}: the code as given passed every test"
        assert [(w, m) for m in messages for w in names if w.lower() in m.lower()] == []
