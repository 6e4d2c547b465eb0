"""Gradebook exports: beside scores.csv, grading writes canvas.csv and moodle.csv (attnlib_grader.gradebooks).

The sample files in fixtures/gradebooks/ are written from the two gradebooks' documented formats (Canvas's
gradebook export, which its import reads back: Student, ID, SIS User ID, SIS Login ID, Section, one column per
assignment, a Points Possible row; Moodle's CSV grade import: an identifying column that the teacher maps to a
user field, then grade columns). Neither gradebook was run here.
"""

import csv
from pathlib import Path

from attnlib_grader import report
from attnlib_grader.grade import CaseResult, QuestionResult, SubmissionResult

SAMPLES = Path(__file__).resolve().parent / "fixtures" / "gradebooks"
QUESTIONS = [{"name": "q1", "points": 2.0}, {"name": "q2", "points": 1.0, "manual": True}]


def _rows(path: Path) -> list[list[str]]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.reader(f))


def _graded(tmp_path: Path, questions=QUESTIONS) -> Path:
    results = report.Results(tmp_path, questions, "03_dot_product_attention")
    for name, passed in (("jdoe", True), ("=rroe", False)):
        graded = [
            QuestionResult(q["name"], q["points"], bool(q.get("manual")))
            if q.get("manual")
            else QuestionResult(q["name"], q["points"], cases=[CaseResult("c", q["points"], True, passed)])
            for q in questions
        ]
        results.add(SubmissionResult(name, graded))
    return tmp_path


def test_canvas_csv_has_canvass_identifying_columns_a_points_row_and_one_row_per_learner(tmp_path):
    sample, ours = _rows(SAMPLES / "canvas_gradebook_export.csv"), _rows(_graded(tmp_path) / "canvas.csv")
    assert ours[0][:5] == sample[0][:5] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    assert ours[0][5:] == ["03_dot_product_attention automatic", "03_dot_product_attention written"]
    assert ours[1][0].strip() == sample[1][0].strip() == "Points Possible"
    assert ours[1][5:] == ["2", "1"]
    scores = {
        r["submission"]: r["auto_score"]
        for r in csv.DictReader((tmp_path / "scores.csv").read_text().splitlines())
    }
    learners = {row[0]: row for row in ours[2:]}
    assert set(learners) == set(scores) == {"jdoe", "'=rroe"}  # a label like a formula is quoted
    for label, row in learners.items():
        assert len(row) == len(ours[0]) == len(sample[0])
        assert row[3] == label and row[5] == scores[label] and row[6] == ""  # written: the teacher's


def test_moodle_csv_has_an_identifying_column_and_the_grade_columns(tmp_path):
    sample, ours = _rows(SAMPLES / "moodle_grade_import.csv"), _rows(_graded(tmp_path) / "moodle.csv")
    assert ours[0][0] == sample[0][0] == "Username"
    assert ours[0][1:] == ["03_dot_product_attention automatic", "03_dot_product_attention written"]
    assert ours[1:] == [["'=rroe", "0", ""], ["jdoe", "2", ""]]
    for row in ours[1:] + sample[1:]:
        assert row[1] == "" or float(row[1]) >= 0


def test_a_set_without_written_answers_has_no_written_column(tmp_path):
    graded = _graded(tmp_path, QUESTIONS[:1])
    assert _rows(graded / "canvas.csv")[0][5:] == ["03_dot_product_attention automatic"]
    assert _rows(graded / "moodle.csv")[0] == ["Username", "03_dot_product_attention automatic"]
