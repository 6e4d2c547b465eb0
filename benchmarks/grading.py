"""Time to grade 30 submissions of one exercise set with tools/grade.py's machinery (2 at a time, each in its
own bubblewrap sandbox, as tools/grade.py does by default).

    .venv/bin/python benchmarks/grading.py                      # set 3, the one with the most tamper fixtures
    .venv/bin/python benchmarks/grading.py 08_translation       # any other set

The 30 notebooks: 10 instructor solutions, 5 untouched learner notebooks, and 15 typical wrong answers and
tampering submissions of tests/exercises/fixtures that finish on their own (the infinite loops and the hostile
fixtures are left out: several cost their time limit by design). The time includes the zygote's start and the
self-check (the bundle's reference solution graded in the sandbox before the class). Prints `name: value`
lines, with the machine's load average before and after (timings on a busy machine are inflated).
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()  # before torch is imported; the sandboxes inherit it

import nbformat  # noqa: E402

import exercises  # noqa: E402

sys.path.insert(0, str(ROOT / "grader"))

from attnlib_grader import switching  # noqa: E402
from attnlib_grader.grade import grade_folder, load_bundle  # noqa: E402
from attnlib_grader.sandbox import warm_up  # noqa: E402

SET = sys.argv[1] if len(sys.argv) > 1 else "03_dot_product_attention"


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder, bundle = Path(tmp) / "submissions", Path(tmp) / "autograder.zip"
        folder.mkdir()
        bundle.write_bytes(exercises.autograder_zip(exercises.parse(exercises.SOURCE_DIR / f"{SET}.ipynb")))
        notebooks = [exercises.submission(SET) for _ in range(10)]
        notebooks += [exercises.submission(SET, untouched=True) for _ in range(5)]
        fixtures = sorted((ROOT / "tests" / "exercises" / "fixtures" / SET).glob("*.json"))
        typical = [p for p in fixtures if p.stem.startswith(("wrong_", "tamper_")) and "loop" not in p.stem]
        for path in typical[:15]:
            spec = json.loads(path.read_text())
            notebooks.append(
                exercises.submission(SET, spec["answers"], spec["cells_before"], spec["cells_after"])
            )
        for i, nb in enumerate(notebooks):
            nbformat.write(nb, folder / f"learner_{i:02d}.ipynb")
        load_before = os.getloadavg()[0]
        start = time.perf_counter()
        dotted, operators = switching.resolve_equations(load_bundle(bundle).config.get("switch_off", []))
        warm_up(switch_off=dotted, operators=operators)  # the set's zygote: grade_folder finds it running
        warm = time.perf_counter() - start
        results = grade_folder(bundle, folder, Path(tmp) / "results", jobs=2)
        total = time.perf_counter() - start
    print(f"set: {SET}")
    print("isolation: bubblewrap, one sandbox per submission")
    print(f"submissions: {len(results)}")
    print(f"grading_start_s (the zygote imports torch once): {warm:.1f}")
    print(f"grading_30_submissions_s: {total:.1f}")
    print(f"grading_per_submission_s: {total / len(results):.2f}")
    # CPU seconds spent for the submissions (each one's sandbox and the grader's work for it): less sensitive
    # to the machine's load than the wall time, for comparing two versions of the grader on a busy machine
    print(f"cpu_s_of_the_30_submissions: {sum(r.cpu_seconds for r in results):.1f}")
    print(f"load_average_1min_before_after: {load_before:.1f} {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
