"""Shared by every test: the same random state, and one CPU thread.

The tensors in these tests are tiny; a second thread only adds synchronisation, which made the suite several
times slower on a busy 2-core machine.
"""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed_and_one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)


# Test files that train models or execute notebooks: the fast tier (tools/test.sh --fast) leaves them out.
SLOW_FILES = {
    "tests/exercises/test_grading.py",  # grades every set's solutions and fixtures in sandboxes
    "tests/exercises/test_colab.py",  # runs every learner notebook with the solutions pasted in
    "tests/exercises/test_hostile.py",  # grades hostile submissions, one of which waits out its time budget
    "tests/exercises/test_public_audit.py",  # runs every solution notebook to audit the public tests
    "tests/colab/test_chapters.py",  # every chapter's Colab edition, in a Colab-like environment
    "tests/colab/test_exercises.py",  # every exercise set's Colab edition, in a Colab-like environment
}


def pytest_collection_modifyitems(config, items):
    root = config.rootpath
    for item in items:
        if str(item.path.relative_to(root)) in SLOW_FILES:
            item.add_marker(pytest.mark.slow)
