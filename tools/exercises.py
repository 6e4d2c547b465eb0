"""Build the graded exercise sets from their instructor sources, deterministically.

    python tools/exercises.py build            # every set in exercises/source/
    python tools/exercises.py build 03_dot_product_attention
    python tools/exercises.py check            # exit 1 if building would change a committed file (the learner
                                               # notebook's cells; nbval compares its stored outputs)
    python tools/exercises.py bundle           # only exercises/dist (the teacher's bundles): runs no
                                               # notebook, so the grader's own environment makes them

For each master ``exercises/source/NN_slug.ipynb`` (solutions, public and hidden tests; format in
exercises/teachers.md) it writes
    exercises/NN_slug.ipynb                     the learner notebook (committed), executed untouched
    attnlib/grading/public/NN_slug.json         the public tests, shipped in attnlib (grader.check in Colab)
    exercises/dist/NN_slug/autograder.zip       set.json, test files, solutions: for tools/grade.py (ignored)
    exercises/dist/NN_slug/solutions.ipynb      the learner notebook with the solutions (ignored)
    exercises/dist/NN_slug/gradescope.zip       the bundle as a Gradescope autograder (tools/gradescope.py)
"""

from __future__ import annotations

import sys
from pathlib import Path

from exercise_build.learner import (  # noqa: F401  (the names tests, benchmarks and tools reach here)
    ANSWER_PROMPT,
    OTTER_CHECK_COMMON,
    OTTER_CHECK_PACKAGES,
    OTTER_LEFT_OUT,
    OTTER_VERSION,
    PREDICT_TAG,
    WITHHELD,
    grading_cell_source,
    withheld,
)
from exercise_build.master import (  # noqa: F401
    DIST_DIR,
    GIVEN_LINE,
    LEARNER_DIR,
    PUBLIC_DIR,
    SOLUTION_LINE,
    SOURCE_DIR,
    TEST_PREAMBLE,
    ExerciseSet,
    Question,
    _check_find_the_bug,
    _keep_solution,
    _name_cases,
    _strip_solution,
    _uncomment,
    parse,
    rubric_markdown,
)
from exercise_build.outputs import autograder_zip, build, execute, public_tests_json, submission, write_dist  # noqa: F401
from exercise_build.references import _public_cases, _record, record_references  # noqa: F401
from notebooks import ROOT


def masters(names: list[str]) -> list[Path]:
    found = sorted(SOURCE_DIR.glob("*.ipynb"))
    if names:
        found = [p for p in found if p.stem in names or p.stem[:2] in names]
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("build", "check", "bundle"):
        print(__doc__)
        return 2
    if argv[0] == "bundle":
        for master in masters(argv[1:]):
            dist = write_dist(parse(master))
            print(f"{master.relative_to(ROOT)}: {(dist / 'autograder.zip').relative_to(ROOT)}", flush=True)
        return 0
    check = argv[0] == "check"
    stale = []
    for master in masters(argv[1:]):
        changed = build(master, check=check)
        stale += changed
        print(
            f"{master.relative_to(ROOT)}: {'up to date' if not changed else ', '.join(changed)}", flush=True
        )
    if check and stale:
        print("out of date: run python tools/exercises.py build")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
