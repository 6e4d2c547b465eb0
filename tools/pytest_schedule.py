"""How the test command spreads its work over the cores, and where its time went (issue 31).

A pytest plugin, loaded by the repository's conftest.py, with two jobs:

- **The schedule.** ``tools/test.sh`` runs pytest-xdist with ``--dist loadfile``: every test file goes whole
  to one worker, so a file's module fixtures are made once. This plugin refines the unit of work ("scope"):
  - every test of one exercise set, whatever file it is in, is one scope (``exercise set 04_...``): the set's
    bundle is built and its fixtures graded once per run (tests/exercises/conftest.py), not once per worker;
  - each stored recipe of tests/models/test_stored_results.py is a scope of its own (minutes each,
    independent);
  - everything else stays one scope per file; a notebook's cells (nbval) share one kernel and never split.
  The scopes are handed out longest first, by the seconds each took in the run recorded in
  ``tests/test_times.json``, updated by the runs on this machine (``.venv/test-times.json``): so the two
  cores finish together instead of one waiting on the other's last long file.
- **The record.** The controller adds up every test's setup, call and teardown seconds; at the end it stores
  them in ``.venv/test-times.json`` and, with ``--scope-times=N``, prints the N costliest scopes and each
  worker's busy time. ``python tools/pytest_schedule.py --save`` writes that record, summed per scope, into
  ``tests/test_times.json``.

The schedule changes only the order and the grouping of tests, never which tests run or how: an estimate that
is wrong costs minutes, not a check.
"""

from __future__ import annotations

import json
import re
import sys
from collections import OrderedDict, defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMMITTED = ROOT / "tests" / "test_times.json"
RECORD = ROOT / ".venv" / "test-times.json"  # the last runs on this machine (pyproject turns off the cache)
SETS = sorted(p.stem for p in (ROOT / "exercises" / "source").glob("*.ipynb"))
_PARAMS = re.compile(r"\[(.*)\]$")


def scope_of(nodeid: str) -> str:
    """The unit of work a test belongs to (see the module's docstring)."""
    path, _, rest = nodeid.partition("::")
    params = _PARAMS.search(rest)
    if params and path.startswith("tests/exercises/"):
        for name in SETS:
            if params.group(1) == name or params.group(1).startswith(name + "-"):
                return f"exercise set {name}"
    if path == "tests/models/test_stored_results.py":
        return nodeid
    return path


def scope_seconds(test_seconds: dict[str, float]) -> dict[str, float]:
    """{scope: seconds} summed over the tests of each scope."""
    totals: dict[str, float] = defaultdict(float)
    for nodeid, seconds in test_seconds.items():
        totals[scope_of(nodeid)] += seconds
    return dict(totals)


def estimates() -> dict[str, float]:
    """Seconds per scope: the committed record, updated by the runs on this machine ({} without either)."""
    seconds = json.loads(COMMITTED.read_text())["scopes"] if COMMITTED.is_file() else {}
    if RECORD.is_file():
        seconds.update(scope_seconds(json.loads(RECORD.read_text())["tests"]))
    return seconds


def costliest_first(workqueue: OrderedDict, seconds: dict[str, float]) -> None:
    """Move the costliest scope of xdist's queue {scope: {nodeid: done}} to its front, in place.

    A scope never timed counts one second per test.
    """
    costliest = max(workqueue, key=lambda scope: seconds.get(scope, len(workqueue[scope])))
    workqueue.move_to_end(costliest, last=False)


# ----------------------------------------------------------------------------------------------- the schedule
@pytest.hookimpl(optionalhook=True)  # a run without xdist (-p no:xdist) has no such hook
def pytest_xdist_make_scheduler(config, log):
    if config.getoption("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadScopeScheduling

    seconds = estimates()

    class LongestFirst(LoadScopeScheduling):
        """xdist's scope scheduling with this module's scopes, the costliest scope handed out first."""

        def _split_scope(self, nodeid: str) -> str:
            return scope_of(nodeid)

        def _assign_work_unit(self, node) -> None:
            # Only the queue's order changes: a worker runs tests by their index in its own collection.
            costliest_first(self.workqueue, seconds)
            super()._assign_work_unit(node)

    return LongestFirst(config, log)


# ------------------------------------------------------------------------------------------------- the record
_seconds: dict[str, float] = defaultdict(float)
_busy: dict[str, float] = defaultdict(float)


def pytest_addoption(parser):
    parser.addoption(
        "--scope-times",
        type=int,
        default=0,
        metavar="N",
        help="print the N costliest work units (files, exercise sets, recipes) and every worker's busy time",
    )


def pytest_runtest_logreport(report):
    _seconds[report.nodeid] += report.duration
    node = getattr(report, "node", None)  # the xdist worker that ran it (controller side only)
    _busy[node.gateway.id if node is not None else "main"] += report.duration


def _is_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session):
    config = session.config
    if _is_worker(config) or not _seconds or not RECORD.parent.is_dir():
        return
    record = json.loads(RECORD.read_text()) if RECORD.is_file() else {"tests": {}}
    record["tests"].update({nodeid: round(s, 2) for nodeid, s in _seconds.items()})
    RECORD.write_text(json.dumps(record, indent=0, sort_keys=True) + "\n")


def pytest_terminal_summary(terminalreporter, config):
    count = config.getoption("scope_times")
    if _is_worker(config) or not count or not _seconds:
        return
    totals = scope_seconds(_seconds)
    write = terminalreporter.write_line
    terminalreporter.section(f"the {count} costliest units of work (seconds of setup, call and teardown)")
    tests = defaultdict(int)
    for nodeid in _seconds:
        tests[scope_of(nodeid)] += 1
    for scope, seconds in sorted(totals.items(), key=lambda item: -item[1])[:count]:
        write(f"{seconds:8.1f} s  {tests[scope]:5d} tests  {scope}")
    write(f"{sum(totals.values()):8.1f} s  {len(_seconds):5d} tests  in all")
    write("busy: " + ", ".join(f"{worker} {seconds:.0f} s" for worker, seconds in sorted(_busy.items())))


# ------------------------------------------------------------------------------------------- the command line
def main(argv: list[str]) -> int:
    """``--save``: write the recorded seconds per scope (.venv/test-times.json) into tests/test_times.json."""
    if argv != ["--save"]:
        print("usage: python tools/pytest_schedule.py --save", file=sys.stderr)
        return 2
    if not RECORD.is_file():
        print(f"pytest_schedule: no record at {RECORD}: run the full tier first", file=sys.stderr)
        return 1
    totals = scope_seconds(json.loads(RECORD.read_text())["tests"])
    scopes = {scope: round(s) for scope, s in sorted(totals.items(), key=lambda item: -item[1])}
    COMMITTED.write_text(json.dumps({"scopes": scopes}, indent=1) + "\n")
    print(f"pytest_schedule: {len(scopes)} scopes, {sum(scopes.values())} s, written to {COMMITTED.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
