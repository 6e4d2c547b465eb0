"""Specification of attnlib.data.algorithmic: copy, reverse and sort of digit sequences."""

import pytest

from attnlib.data.algorithmic import make_sequence_task, sequence_task


def digits(tokens: list[str]) -> list[int]:
    return [int(t) for t in tokens]


def test_copy_target_is_the_source():
    assert all(p.tgt == p.src for p in make_sequence_task("copy", 200, 1, 12, seed=0))


def test_reverse_target_is_the_reversed_source():
    assert all(p.tgt == p.src[::-1] for p in make_sequence_task("reverse", 200, 1, 12, seed=0))


def test_sort_target_is_the_numerically_sorted_source():
    for p in make_sequence_task("sort", 200, 1, 12, seed=0, vocab_size=20):
        assert digits(p.tgt) == sorted(digits(p.src))


def test_lengths_cover_the_requested_range():
    lengths = {len(p.src) for p in make_sequence_task("copy", 500, 4, 9, seed=1)}
    assert lengths == set(range(4, 10))


def test_tokens_come_from_the_vocabulary():
    tokens = {t for p in make_sequence_task("reverse", 300, 5, 5, seed=2, vocab_size=4) for t in p.src}
    assert tokens == {"0", "1", "2", "3"}


def test_copy_alignment_is_the_diagonal():
    for p in make_sequence_task("copy", 50, 1, 10, seed=3):
        assert p.alignment == frozenset((t, t) for t in range(len(p.src)))


def test_reverse_alignment_is_the_anti_diagonal():
    for p in make_sequence_task("reverse", 50, 1, 10, seed=3):
        S = len(p.src)
        assert p.alignment == frozenset((t, S - 1 - t) for t in range(S))


def test_sort_alignment_points_at_every_source_copy_of_the_value():
    for p in make_sequence_task("sort", 50, 1, 10, seed=3, vocab_size=5):
        for t, value in enumerate(p.tgt):
            assert {s for tt, s in p.alignment if tt == t} == {s for s, x in enumerate(p.src) if x == value}


def test_same_seed_same_data_different_seed_different_data():
    assert make_sequence_task("sort", 100, 2, 8, seed=7) == make_sequence_task("sort", 100, 2, 8, seed=7)
    assert make_sequence_task("sort", 100, 2, 8, seed=7) != make_sequence_task("sort", 100, 2, 8, seed=8)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"task": "shuffle"}, "task"), ({"min_len": 0}, "min_len"), ({"min_len": 5, "max_len": 4}, "max_len")],
)
def test_bad_arguments_are_refused(kwargs, message):
    args = {"task": "copy", "n": 3, "min_len": 1, "max_len": 4} | kwargs
    with pytest.raises(ValueError, match=message):
        make_sequence_task(**args)


def test_sequence_task_splits_share_no_source():
    task = sequence_task("reverse", n=600, min_len=1, max_len=4, seed=0)
    parts = [{tuple(p.src) for p in part} for part in (task.train, task.valid, task.test)]
    assert len(set().union(*parts)) == sum(map(len, parts))
    assert len(task.src_vocab) == len(task.tgt_vocab) == 4 + 10
