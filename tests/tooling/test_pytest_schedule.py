"""The test command's schedule (tools/pytest_schedule.py, issue 31): each exercise set graded once per run,
the costliest work first, and no test lost or moved out of the kernel its notebook needs."""

import os
import re
import subprocess
import sys
from collections import OrderedDict, defaultdict

import pytest
from notebooks import ROOT
from pytest_schedule import SETS, costliest_first, scope_of


def test_every_test_of_one_exercise_set_is_one_unit_of_work_whatever_its_file():
    assert {
        scope_of(
            "tests/exercises/test_grading.py::test_instructor_solutions_score_full_marks[04_bahdanau_attention]"
        ),
        scope_of(
            "tests/exercises/test_grading.py::test_fixture_gets_its_declared_score[04_bahdanau_attention-wrong_q1]"
        ),
        scope_of("tests/exercises/test_hostile26.py::test_x[04_bahdanau_attention-hostile_answer_leak]"),
    } == {"exercise set 04_bahdanau_attention"}


def test_a_set_is_told_apart_from_a_set_whose_name_it_begins():
    assert scope_of("tests/exercises/test_grading.py::test_x[04_bahdanau_attention_v2]") == (
        "tests/exercises/test_grading.py"
    )


def test_a_notebooks_cells_stay_together_and_other_files_stay_whole():
    assert scope_of("chapters/08_translation.ipynb::Cell 5") == "chapters/08_translation.ipynb"
    assert scope_of("tests/colab/test_chapters.py::test_x[08_translation]") == "tests/colab/test_chapters.py"
    assert scope_of("tests/exercises/test_isolation.py::test_y") == "tests/exercises/test_isolation.py"


def test_each_stored_recipe_is_a_unit_of_its_own():
    a = "tests/models/test_stored_results.py::test_one_seed_of_each_recipe_recomputes_exactly[ch02_long]"
    b = "tests/models/test_stored_results.py::test_one_seed_of_each_recipe_recomputes_exactly[ch09_sweep]"
    assert scope_of(a) == a and scope_of(b) == b


def test_the_costliest_unit_is_handed_out_first_and_an_untimed_one_counts_a_second_per_test():
    queue = OrderedDict(
        [("many", dict.fromkeys("abcdef", False)), ("slow", {"x": False}), ("new", {"y": False})]
    )
    costliest_first(queue, {"slow": 100.0, "many": 3.0})
    assert list(queue) == ["slow", "many", "new"]
    costliest_first(queue, {"slow": 1.0, "many": 3.0})  # "many" untimed would count 6, timed it counts 3
    assert list(queue) == ["many", "slow", "new"]


@pytest.mark.slow  # a pytest run of its own on two workers (20 s)
def test_under_xdist_each_sets_tests_run_on_one_worker_and_none_is_lost():
    """End to end, two workers: every test of a set on one worker (so its bundle is built and its fixtures
    graded once), and the run passes the same tests as it collects."""
    files = ["tests/exercises/test_build.py", "tests/exercises/test_hints.py"]
    env = {**os.environ, "EXERCISE_SETS": "03,07"}
    command = [sys.executable, "-m", "pytest", "-v", "-n", "2", "--dist", "loadfile", *files]
    run = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-3000:]
    workers = defaultdict(set)
    ran = re.findall(r"^\[(gw\d)\] \[ *\d+%\] (?:PASSED|SKIPPED) (.+?) *$", run.stdout, flags=re.M)
    for worker, nodeid in ran:
        workers[scope_of(nodeid)].add(worker)
    assert {"exercise set 03_dot_product_attention", "exercise set 07_matrix_form"} <= set(workers)
    assert all(len(w) == 1 for w in workers.values()), dict(workers)
    collected = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", *files],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert sorted(nodeid for _, nodeid in ran) == sorted(
        line for line in collected.stdout.splitlines() if "::" in line
    )
    assert set(SETS) >= {"03_dot_product_attention", "07_matrix_form"}
