"""The recall task of chapter 1: the label is the first symbol, the rest are distractors."""

import pytest
import torch

from attnlib.data import recall_task


def test_recall_task_is_deterministic_by_seed():
    a, b = recall_task(50, 7, seed=3), recall_task(50, 7, seed=3)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert not torch.equal(a[0], recall_task(50, 7, seed=4)[0])


def test_recall_task_label_is_the_first_symbol_and_the_rest_are_distractors():
    tokens, labels = recall_task(200, 9, n_symbols=5, n_distractors=3)
    assert tokens.shape == (200, 10) and labels.shape == (200,)
    assert torch.equal(tokens[:, 0], labels)
    assert bool(((labels >= 0) & (labels < 5)).all())
    assert bool(((tokens[:, 1:] >= 5) & (tokens[:, 1:] < 8)).all())


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: recall_task(10, -1), r"k must be >= 0, got -1"),
        (lambda: recall_task(10, 3, n_symbols=1), r"n_symbols must be >= 2, got 1"),
        (lambda: recall_task(0, 3), r"n must be > 0, got 0"),
    ],
)
def test_bad_arguments_raise_value_errors_naming_them(call, message):
    with pytest.raises(ValueError, match=message):
        call()
