"""What crosses between the learner's sandbox and the grader: data only, rebuilt on the grader's side."""

import pytest
import torch

from attnlib.grading.sandbox import Opaque, SandboxError, decode, encode


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
