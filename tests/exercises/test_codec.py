"""What crosses between the grader and a sandbox (attnlib_grader.codec): plain data rebuilt on the grader's
side, every read with a deadline for the whole message, decoding linear in the message's size and bounded in
memory, hash containers that refuse values chosen to collide."""

import math
import socket
import threading
import time
import tracemalloc

import numpy as np
import pytest
import torch
from attnlib_grader import codec
from hostile26 import COLLIDE


def frame_of(message, values=None):
    return codec.pack(message, values)


def round_trip(value):
    frame = codec.pack({}, {"value": value})
    tree_bytes = int.from_bytes(frame[:4], "big")
    tree = codec.parse_tree(frame[8 : 8 + tree_bytes])
    return codec.decode(tree["value"], frame[8 + tree_bytes :])


@pytest.mark.parametrize("dtype", [getattr(torch, d) for d in codec._DTYPES], ids=str)
def test_tensors_of_every_dtype_come_back_with_their_bytes(dtype):
    x = (torch.arange(12) % 3).reshape(3, 4).to(dtype)
    back = round_trip({"x": x, "pair": (x[0], [x[:, 1]])})
    assert back["x"].dtype == dtype and torch.equal(back["x"], x)
    assert torch.equal(back["pair"][0], x[0]) and torch.equal(back["pair"][1][0], x[:, 1])


def test_arrays_numbers_and_strings_come_back_equal():
    value = [np.arange(5.0), 2**40, -3.5, float("nan"), "text", None, True, frozenset({(1, 2)})]
    back = round_trip(value)
    assert np.array_equal(back[0], value[0]) and back[1:3] == value[1:3] and math.isnan(back[3])
    assert back[4:] == value[4:]


def socket_pair():
    ours, theirs = socket.socketpair()
    return ours, theirs


def test_a_reply_that_stops_midway_fails_within_the_deadline_for_the_whole_message(monkeypatch):
    """Hole 1: a sandbox that sends a header and part of a body, then nothing, must not block the grader."""
    monkeypatch.setattr(codec, "BODY_SECONDS", 0.5)
    ours, theirs = socket_pair()
    try:
        theirs.sendall(codec.pack({"ok": True, "padding": "x" * 1000})[:50])  # header and 42 bytes of body
        start = time.monotonic()
        with pytest.raises(TimeoutError):
            codec.read_frame(ours, time.monotonic() + 60)
        assert time.monotonic() - start < 5
    finally:
        ours.close()
        theirs.close()


def test_a_whole_message_arrives_in_pieces():
    """Positive control: the same message, sent slowly in pieces within the deadline, is read whole."""
    ours, theirs = socket_pair()
    frame = codec.pack({"ok": True, "padding": "x" * 1000}, {"value": torch.ones(3)})

    def send():
        for i in range(0, len(frame), 300):
            theirs.sendall(frame[i : i + 300])
            time.sleep(0.05)

    sender = threading.Thread(target=send)
    sender.start()
    try:
        tree, raw = codec.read_frame(ours, time.monotonic() + 60)
        assert codec.parse_tree(tree)["ok"] is True and len(raw) == 12
    finally:
        sender.join()
        ours.close()
        theirs.close()


def test_the_budget_check_runs_while_waiting_and_may_stop_the_read():
    ours, theirs = socket_pair()
    calls = []

    def check():
        calls.append(1)
        if len(calls) > 3:
            raise TimeoutError("the question's time limit is used up")

    try:
        with pytest.raises(TimeoutError, match="time limit"):
            codec.read_frame(ours, time.monotonic() + 60, check)
    finally:
        ours.close()
        theirs.close()


def colliding_pairs(n):
    space = {}
    exec(COLLIDE, space)
    return space["_colliding_pairs"](n)


class CountedPair(tuple):
    """A pair that counts the equality tests made on it by a set."""

    compared = 0
    __hash__ = tuple.__hash__

    def __eq__(self, other):
        CountedPair.compared += 1
        return tuple.__eq__(self, other)


def equality_tests_to_build_a_set_of(pairs):
    CountedPair.compared = 0
    assert len(set(CountedPair(p) for p in pairs)) == len(pairs)
    return CountedPair.compared


def test_the_fixture_pairs_really_collide():
    """Positive control: the pairs share one hash, so a set of n of them makes about n**2/2 equality tests,
    where n ordinary pairs make almost none (counted, not timed: a ratio of times failed once on a busy CI
    machine; a set compares only values whose hashes meet)."""
    n = 2000
    pairs = colliding_pairs(n)
    assert len(set(pairs)) == n and len({hash(p) for p in pairs}) == 1
    assert equality_tests_to_build_a_set_of(pairs) > n * n / 4
    assert equality_tests_to_build_a_set_of([(a, a + 1) for a in range(n)]) < n / 10


def test_decoding_refuses_values_chosen_to_collide_in_linear_time():
    """Hole 3: a set (or a list a test could turn into a set) of values with one hash makes hashing quadratic
    with the interpreter lock held; the decoder refuses it after a sort, before building anything."""
    pairs = colliding_pairs(6000)
    tree = {"t": "set", "items": [{"t": "tuple", "items": list(p)} for p in pairs]}
    start = time.process_time()
    with pytest.raises(codec.SandboxError, match="collide"):
        codec.decode(tree)
    assert time.process_time() - start < 2.0
    as_list = {"t": "list", "items": tree["items"]}
    with pytest.raises(codec.SandboxError, match="collide"):
        codec.decode(as_list)
    plain = [{"t": "tuple", "items": [a, a + 1]} for a in range(6000)]  # positive control: no collision
    assert len(codec.decode({"t": "set", "items": plain})) == 6000


def test_many_copies_of_one_value_are_not_a_collision():
    assert codec.decode({"t": "list", "items": [{"t": "float", "v": "0.5"}] * 5000}) == [0.5] * 5000


def test_integers_too_large_to_be_sent_are_refused():
    """``encode`` sends integers past 2**53 as floats: one sent as an integer was forged (its hash chosen)."""
    with pytest.raises(codec.SandboxError):
        codec.decode({"t": "set", "items": [2**61 - 1 + 5, 5]})
    with pytest.raises(codec.SandboxError):
        codec.parse_tree(b"[" + b"9" * 40 + b"]")


def test_a_frame_with_too_many_containers_is_refused_before_it_is_parsed():
    """Hole 13: the JSON part is small and its containers are counted before parsing, so no frame can make
    the grader build millions of objects."""
    tree = b"[" + b"{}," * (codec.MAX_CONTAINERS + 1) + b"{}]"
    with pytest.raises(codec.SandboxError, match="too many"):
        codec.parse_tree(tree)


def test_tensor_bytes_are_used_once_and_must_all_be_used():
    """The raw part is consumed in order: no shape can make the grader allocate more than the frame holds."""
    raw = torch.ones(4).numpy().tobytes()
    two = {"t": "list", "items": [{"t": "tensor", "dtype": "float32", "shape": [4]}] * 2}
    with pytest.raises(codec.SandboxError, match="missing"):
        codec.decode(two, raw)
    huge = {"t": "tensor", "dtype": "float32", "shape": [2**30, 2**30]}
    with pytest.raises(codec.SandboxError, match="larger than the reply"):
        codec.decode(huge, raw)
    with pytest.raises(codec.SandboxError, match="left over"):
        codec.decode({"t": "tensor", "dtype": "float32", "shape": [2]}, raw)


def test_decoding_the_largest_frame_holds_at_most_about_its_own_size_in_memory():
    """Hole 13: grader memory per reply is bounded by the frame (64 MB), not by what it describes."""
    x = torch.zeros(12 * 2**20, dtype=torch.float32)  # 48 MB
    frame = codec.pack({}, {"value": [x, "small"]})
    tree_bytes = int.from_bytes(frame[:4], "big")
    tracemalloc.start()
    try:
        tree = codec.parse_tree(frame[8 : 8 + tree_bytes])
        back = codec.decode(tree["value"], frame[8 + tree_bytes :])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert torch.equal(back[0], x) and peak < 2.5 * x.numel() * 4, peak


def test_a_value_too_large_for_a_frame_is_sent_as_too_large():
    frame = codec.pack({"ok": True}, {"value": torch.zeros(17 * 2**20)})  # 68 MB
    tree = codec.parse_tree(frame[8 : 8 + int.from_bytes(frame[:4], "big")])
    assert tree["too_large"] is True and tree["value"] is None and len(frame) < 1000
