"""Every pytest run of the course, however it is started, runs under the course's numeric environment.

tools/test.sh exports it too; this makes a direct ``pytest --nbval chapters/...`` start its kernels under the
same pin, since a kernel inherits the environment of the pytest process that starts it (see
tools/numeric_env.py for what is pinned and why).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import numeric_env  # noqa: E402

numeric_env.apply()

# The test command's schedule over the cores and its record of where the time goes (issue 31).
pytest_plugins = ["pytest_schedule"]

import pytest  # noqa: E402

# What the fast tier (`bash tools/test.sh --fast`, `-m "not slow"`) leaves out besides the tests marked slow:
# every test that needs an exercise set graded in the sandbox (the `graded` and `simulated` fixtures: each
# set's fixtures, one sandbox each) or the built site driven in a headless browser. The full tier runs them.
SLOW_FIXTURES = {"graded", "simulated", "browser", "run_in_page"}


@pytest.fixture(scope="session")
def numeric_verdict():
    """None if this machine reproduces the stored package data (results, trained weights, reference tables)
    under the pin, else why not (asked once a run, when a test needs it: the check starts a process that
    imports torch)."""
    return numeric_env.check(kind="data")


@pytest.fixture(scope="session")
def notebooks_verdict():
    """None if this machine reproduces the stored notebook outputs under the pin, else why not."""
    return numeric_env.check(kind="notebooks")


@pytest.fixture
def reproducing_machine(numeric_verdict):
    """For a test that recomputes stored package data bit for bit (tools/numeric_env.py, kind "data"):
    skipped, with the reason, on a machine that cannot reproduce it."""
    if numeric_verdict is not None:
        pytest.skip(f"this machine cannot reproduce the stored numbers: {numeric_verdict}")


@pytest.fixture
def one_machine_for_notebooks_and_data(numeric_verdict, notebooks_verdict):
    """For a test that compares a notebook's output with stored package data bit for bit: skipped, with the
    reason, unless this machine reproduces both kinds, i.e. both were made on a machine like this one."""
    if numeric_verdict is not None or notebooks_verdict is not None:
        pytest.skip(
            "the stored notebook outputs and the stored package data were made on different machines "
            f"(notebooks: {notebooks_verdict or 'this one'}; data: {numeric_verdict or 'this one'})"
        )


@pytest.fixture
def reproducing_notebooks(notebooks_verdict):
    """For a test that compares a notebook's outputs bit for bit (kind "notebooks"): skipped, with the reason,
    on a machine that cannot reproduce them, where the test command also compares no notebook."""
    if notebooks_verdict is not None:
        pytest.skip(f"this machine cannot reproduce the stored notebook outputs: {notebooks_verdict}")


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items):
    for item in items:
        if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)
