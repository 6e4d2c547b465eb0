"""Grade a folder of submitted exercise notebooks without Docker: scores CSV, one feedback file per learner.

    .venv/bin/python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip \
        SUBMISSIONS/ --out results/

Writes results/scores.csv (one row per notebook, one column per question; manual questions left blank), the
same scores for Canvas and Moodle (results/canvas.csv, results/moodle.csv), results/feedback/<notebook
name>.md (for the teacher: with each question's rubric) and results/for_learners/<notebook name>.md (the same
without the rubrics: the file to hand to the learner). Build the bundle first with `python tools/exercises.py
build`.
The work is done by the grader's own package, grader/attnlib_grader (attnlib_grader.grade: not part of
the attnlib that learners install); see exercises/teachers.md.
"""

import sys
from pathlib import Path

import numeric_env

numeric_env.apply()  # before torch is imported; the sandboxes inherit it

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grader"))  # when not installed

from attnlib_grader.grade import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
