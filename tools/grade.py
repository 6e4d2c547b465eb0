"""Grade a folder of submitted exercise notebooks without Docker: scores CSV, one feedback file per learner.

    .venv/bin/python tools/grade.py exercises/dist/03_dot_product_attention/autograder.zip \
        SUBMISSIONS/ --out results/

Writes results/scores.csv (one row per notebook, one column per question; manual questions left blank) and
results/feedback/<notebook name>.md. Build the bundle first with `python tools/exercises.py build`.
The work is done by attnlib.grading.grade; see exercises/teachers.md.
"""

import sys

import numeric_env

numeric_env.apply()  # before torch is imported; the sandboxes inherit it

from attnlib.grading.grade import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
