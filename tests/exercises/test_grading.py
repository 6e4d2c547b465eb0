"""Grading with the hidden tests: full marks for the solutions, zero for untouched notebooks, the declared
partial score for every typical wrong answer, and no point and no crash for every tampering submission."""

import csv
import json

import pytest
from exercise_helpers import SETS, fixture_files


def scores(result) -> dict[str, float]:
    return {q.name: q.score for q in result.questions if not q.manual}


@pytest.mark.parametrize("name", SETS)
def test_instructor_solutions_score_full_marks(graded, name):
    result = graded[name]["results"]["solutions"]
    assert all(q.score == q.possible for q in result.questions if not q.manual), (
        scores(result),
        result.notes,
        [q.error for q in result.questions],
    )


@pytest.mark.parametrize("name", SETS)
def test_untouched_learner_notebook_scores_zero(graded, name):
    result = graded[name]["results"]["untouched"]
    assert scores(result) and all(v == 0 for v in scores(result).values())


@pytest.mark.parametrize("name", SETS)
def test_unreadable_notebook_scores_zero_without_crashing(graded, name):
    result = graded[name]["results"]["not_a_notebook"]
    assert all(v == 0 for v in scores(result).values()) and "not a readable notebook" in result.notes[0]


@pytest.mark.parametrize(
    "name,fixture", [(s, p.stem) for s in SETS for p in fixture_files(s)], ids=lambda v: str(v)
)
def test_fixture_gets_its_declared_score(graded, name, fixture):
    spec = graded[name]["fixtures"][fixture]
    assert scores(graded[name]["results"][graded[name]["labels"][fixture]]) == pytest.approx(
        spec["scores"]
    ), spec["description"]


@pytest.mark.parametrize(
    "name,fixture",
    [(s, p.stem) for s in SETS for p in fixture_files(s) if "public" in json.loads(p.read_text())],
    ids=lambda v: str(v),
)
def test_public_tests_catch_the_fixture_with_a_helpful_message(graded, name, fixture):
    """A fixture's "public" entry, {question: text}: a PUBLIC test of that question fails on the wrong answer
    with a message containing the text, so the learner sees it before handing in."""
    spec, result = graded[name]["fixtures"][fixture], graded[name]["results"][graded[name]["labels"][fixture]]
    for question, text in spec["public"].items():
        cases = next(q for q in result.questions if q.name == question).cases
        messages = [c.message for c in cases if not c.hidden and not c.passed]
        assert any(text in m for m in messages), (spec["description"], messages)


@pytest.mark.parametrize("name", SETS)
def test_scores_csv_has_a_row_and_feedback_file_per_submission(graded, name):
    """A label that starts like a formula is written with a leading quote (report.csv_cell)."""
    from attnlib_grader import report

    out, results = graded[name]["out"], graded[name]["results"]
    rows = list(csv.DictReader((out / "scores.csv").open(encoding="utf-8")))
    by_cell = {report.csv_cell(label): label for label in results}
    assert len(by_cell) == len(results) and sorted(r["submission"] for r in rows) == sorted(by_cell)
    for row in rows:
        label = by_cell[row["submission"]]
        result = results[label]
        for q in result.questions:
            assert row[q.name] == ("" if q.manual else f"{q.score:g}")
        assert (out / "feedback" / f"{label}.md").is_file()


@pytest.mark.parametrize("name", SETS)
def test_feedback_does_not_show_hidden_test_code(graded, name):
    text = (graded[name]["out"] / "feedback" / "untouched.md").read_text()
    assert "hidden test" in text and "@test_case" not in text and "Error at line" not in text


@pytest.mark.parametrize("name", SETS)
def test_feedback_holds_the_rubric_of_every_written_answer(graded, name):
    """The feedback file is the teacher's template for the written answers: one box per idea, with points."""
    text = (graded[name]["out"] / "feedback" / "solutions.md").read_text()
    manual = [q for q in graded[name]["results"]["solutions"].questions if q.manual]
    assert manual
    for q in manual:
        section = text.split(f"## {q.name}: graded by your teacher", 1)[1].split("\n## ", 1)[0]
        assert "Points: ___ /" in section and section.count("- [ ] (") >= 2
        assert "Common misconceptions:" in section and "Also accepted:" in section
