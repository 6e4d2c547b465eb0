"""The learner's sandbox: only data crosses to the grader, rebuilt on the grader's side; memory is capped."""

import pytest
import torch
from attnlib_grader import codec
from attnlib_grader.sandbox import MEMORY_LIMIT_MB, Opaque, Sandbox, SandboxError


def encode(value):
    blobs = []
    return codec.encode(value, blobs), b"".join(blobs)


def decode(encoded):
    return codec.decode(*encoded) if isinstance(encoded, tuple) else codec.decode(encoded)


@pytest.mark.parametrize(
    "value",
    [
        None,
        True,
        3,
        2.5,
        "text",
        (1, [2, 3]),
        {"a": 1},
        {(0, 1), (2, 2)},  # alignment links
        frozenset({(1, 0)}),
        set(),
    ],
    ids=repr,
)
def test_plain_values_come_back_equal_and_of_the_same_type(value):
    back = decode(encode(value))
    assert back == value and type(back) is type(value)


def test_tensors_come_back_with_dtype_shape_and_values():
    x = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    back = decode(encode(x))
    assert back.dtype == x.dtype and torch.equal(back, x) and back.data_ptr() != x.data_ptr()


def test_objects_become_opaque():
    assert isinstance(decode(encode(object())), Opaque)


def test_a_set_of_unhashable_items_is_refused():
    with pytest.raises(SandboxError, match="not hashable"):
        decode({"t": "set", "items": [{"t": "list", "items": [1]}]})


def call_once(tmp_path, cells, config, name, *args):
    """Run the cells in a fresh sandbox and return name(*args)."""
    sandbox = Sandbox(cells, {"names": [name], **config}, str(tmp_path))
    sandbox.start()
    try:
        return sandbox.call(name, args, {}, 20)
    finally:
        sandbox.kill()


def test_the_sandbox_caps_the_learners_memory(tmp_path):
    cells = ["import resource\n\ndef data_limit():\n    return resource.getrlimit(resource.RLIMIT_DATA)[0]"]
    assert call_once(tmp_path, cells, {}, "data_limit") == MEMORY_LIMIT_MB * 2**20
    assert call_once(tmp_path, cells, {"memory_limit_mb": 1024}, "data_limit") == 2**30  # a set's own cap


def test_an_allocation_past_the_cap_fails_in_the_learners_code_only(tmp_path):
    cells = [
        "import torch\n\nhog = torch.ones(2**31)  # 8 GiB: fails, the next cells still run",
        "def hog_inside(n):\n    return torch.ones(n).sum()",
    ]
    sandbox = Sandbox(cells, {"names": ["hog_inside"], "memory_limit_mb": 2048}, str(tmp_path))
    sandbox.start()
    try:
        assert "cell 1: RuntimeError" in sandbox.errors[0] and "allocate" in sandbox.errors[0]
        with pytest.raises(SandboxError, match="hog_inside raised RuntimeError"):
            sandbox.call("hog_inside", (2**31,), {}, 20)
        assert sandbox.call("hog_inside", (10,), {}, 20) == 10.0  # still alive and serving
    finally:
        sandbox.kill()


def test_fresh_calls_do_not_see_each_others_state(tmp_path):
    """A fresh call is made by a copy of the learner's process: a stateful function answers each the same."""
    cells = ["calls = [0]\n\ndef count():\n    calls[0] += 1\n    return calls[0]"]
    sandbox = Sandbox(cells, {"names": ["count"]}, str(tmp_path))
    sandbox.start()
    try:
        assert [sandbox.call("count", (), {}, 20, fresh=True) for _ in range(3)] == [1, 1, 1]
        assert [sandbox.call("count", (), {}, 20) for _ in range(2)] == [1, 2]
    finally:
        sandbox.kill()


MEMO = (
    "calls, memo = [0], {}\n\n"
    "def count(x):\n"
    "    if x not in memo:  # the same call again: the answer it gave before\n"
    "        calls[0] += 1\n"
    "        memo[x] = calls[0]\n"
    "    return memo[x]"
)


def test_a_replay_after_a_session_runs_in_the_process_as_it_was_before_the_session(tmp_path):
    """The calls of a session are made by a copy of the learner's process that ends with it: a fresh call
    after it (a replay) and a plain one both see the state from before, so a function that remembers its
    answers gives other values there. Positive control: replayed from the process that made the calls, as
    before sessions, the memo answers the same."""
    sandbox = Sandbox([MEMO], {"names": ["count"]}, str(tmp_path))
    sandbox.start()
    try:
        assert sandbox.call("count", ("a",), {}, 20) == 1
        with sandbox.session(20):
            assert [sandbox.call("count", (x,), {}, 20) for x in "bcd"] == [2, 3, 4]
            assert sandbox.call("count", ("c",), {}, 20, fresh=True) == 3  # the memo, inside the session
        assert sandbox.call("count", ("c",), {}, 20, fresh=True) == 2  # a clean replay: not call c's 3
        assert [sandbox.call("count", (x,), {}, 20) for x in "ae"] == [1, 2]
    finally:
        sandbox.kill()


def test_sessions_nest_and_each_ends_its_own_copy(tmp_path):
    sandbox = Sandbox([MEMO], {"names": ["count"]}, str(tmp_path))
    sandbox.start()
    try:
        with sandbox.session(20):
            assert sandbox.call("count", ("a",), {}, 20) == 1
            with sandbox.session(20):
                assert sandbox.call("count", ("b",), {}, 20) == 2
            assert sandbox.call("count", ("b",), {}, 20) == 2  # b is new again here: the inner copy ended
            assert sandbox.call("count", ("c",), {}, 20) == 3
        assert sandbox.call("count", ("c",), {}, 20) == 1
    finally:
        sandbox.kill()


def test_a_call_that_ends_a_sessions_process_fails_and_stops_the_sandbox(tmp_path):
    """A learner function that exits during a session: that call fails at once (not at the budget's end),
    and the sandbox stops (the next question starts a fresh one), so no later call runs in a process that
    saw part of the session."""
    cells = ["import os\n\ndef leave():\n    os._exit(3)"]
    sandbox = Sandbox(cells, {"names": ["leave"]}, str(tmp_path))
    sandbox.start()
    try:
        with pytest.raises(SandboxError, match="stopped the notebook's process"), sandbox.session(20):
            sandbox.call("leave", (), {}, 20)
        assert not sandbox.alive
    finally:
        sandbox.kill()


def test_sandboxes_after_the_zygotes_first_fork_start_with_its_warm_caches(tmp_path):
    """The zygote builds chapter 8's corpus once, after its first fork; set 8's given cells then find it made
    instead of spending 0.4 s of each learner's budget on it."""
    cached = "def cached():\n    return translation._all_pairs.cache_info()"
    cells = ["from attnlib.data import translation", cached]
    call_once(tmp_path, cells, {}, "cached")  # at least one fork has happened in this process's zygote
    hits, misses, maxsize, currsize = call_once(tmp_path, cells, {}, "cached")
    assert currsize == 1 and misses == 1  # made once, by the zygote: not in this sandbox


def test_warm_up_runs_the_grader_sides_imports_while_the_zygote_starts(monkeypatch):
    """``meanwhile`` runs before the zygote has said it is ready (a stand-in zygote, 0.3 s to start)."""
    from attnlib_grader import zygote

    stand_in = "import socket, time; s = socket.socket(fileno={fd}); time.sleep(0.3); s.sendall(b'ready\\n')"
    stand_in += "; time.sleep(30)"
    monkeypatch.setattr(zygote, "_ZYGOTE_START", stand_in + "  # {folder}")
    starting = zygote.Zygote()
    seen = []
    try:
        starting.start(10, meanwhile=lambda: seen.append(starting.control))
        assert seen == [None] and starting.control is not None  # ran once, before the zygote was ready
        starting.start(10, meanwhile=lambda: seen.append("again"))
        assert seen == [None, "again"]  # already running: it still runs, once
    finally:
        starting.stop()


def test_a_process_forked_with_another_sets_switch_off_runs_no_cell(tmp_path, monkeypatch):
    """Each set's sandboxes are forked from a zygote that switched off what the set names; one forked from a
    zygote that switched off something else refuses to run the cells (fails closed)."""
    from attnlib_grader import zygote

    other = zygote.zygote(["attnlib.scores.dot"], [])
    other.start()
    monkeypatch.setattr(zygote, "zygote", lambda *names: other)
    sandbox = Sandbox(["x = 1"], {"names": ["x"], "switch_off": ["attnlib.scores.general"]}, str(tmp_path))
    with pytest.raises(SandboxError):
        sandbox.start()
    sandbox.kill()


def test_a_sets_zygote_is_forked_from_the_one_that_switches_nothing_off():
    """Torch is imported once per grader: a set's zygote is a child of the plain zygote, not a new process."""
    from attnlib_grader import zygote

    plain, of_a_set = zygote.zygote(), zygote.zygote(["attnlib.scores.general"], [])
    of_a_set.start()
    parent = int(open(f"/proc/{of_a_set.pid}/stat").read().rsplit(")", 1)[1].split()[1])
    assert plain.process is not None and parent == plain.process.pid and of_a_set.process is None


def test_learner_processes_start_with_the_zygotes_heap_frozen(tmp_path):
    """The zygote freezes its heap (gc.freeze) after its switch-off: a learner's process never scans torch's
    objects in a collection (its first one cost 0.07 s of each submission's budget)."""
    cells = ["import gc\n\ndef frozen():\n    return gc.get_freeze_count()"]
    for config in ({}, {"switch_off": ["attnlib.scores.general"]}):  # the plain zygote's and a set's
        assert call_once(tmp_path, cells, config, "frozen") > 100_000


def test_a_switch_off_reaches_a_reference_held_in_a_frozen_heap():
    """gc.get_referrers does not see frozen objects: switching unfreezes before it searches, so a dict that
    held the equation before a freeze holds the switched-off stand-in after."""
    import subprocess
    import sys
    from pathlib import Path

    import attnlib_grader

    script = (
        f"import gc, sys; sys.path.insert(0, {str(Path(attnlib_grader.__file__).parents[1])!r})\n"
        "import attnlib.scores\n"
        "from attnlib_grader import switching\n"
        "held, original = {'f': attnlib.scores.general}, id(attnlib.scores.general)\n"
        "gc.freeze()\n"
        "switching.switch_off(['attnlib.scores.general'], [])\n"
        "print(id(attnlib.scores.general) != original, held['f'] is attnlib.scores.general)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "True"]  # switched off, in the module and in the frozen dict
