"""The SDPA fast path gives the reference numbers, forward and backward, fully masked rows included."""

import pytest
import torch

import attnlib
from attnlib import fast, scores


def reference(q, k, v, mask=None):
    return attnlib.attend(scores.scaled_dot(q, k), v, mask)[0]


def inputs(*batch: int, T: int = 4, S: int = 6, d: int = 8, dv: int = 5):
    shapes = [(*batch, T, d), (*batch, S, d), (*batch, S, dv)]
    return [torch.randn(*shape, dtype=torch.float64, requires_grad=True) for shape in shapes]


def grads(fn, q, k, v, mask):
    out = fn(q, k, v, mask)
    return [out, *torch.autograd.grad(out.square().sum(), (q, k, v))]


@pytest.mark.parametrize("lengths", [[6, 3, 1], [0, 4, 6]], ids=["padding", "fully_masked_example"])
def test_fast_path_equals_reference_forward_and_backward(lengths):
    q, k, v = inputs(3)
    pad = attnlib.lengths_to_mask(torch.tensor(lengths), 6)
    for got, expected in zip(
        grads(fast.scaled_dot_product_attention, q, k, v, pad), grads(reference, q, k, v, pad), strict=True
    ):
        torch.testing.assert_close(got, expected)


def test_fast_path_without_mask_equals_reference():
    q, k, v = inputs(2, 3)
    torch.testing.assert_close(fast.scaled_dot_product_attention(q, k, v), reference(q, k, v))


def test_fast_path_fully_masked_rows_are_zero_without_nan():
    q, k, v = inputs(2)
    causal_none = torch.zeros(2, 4, 6, dtype=torch.bool)
    causal_none[1, :, :2] = True
    out = fast.scaled_dot_product_attention(q, k, v, causal_none)
    assert torch.equal(out[0], torch.zeros(4, 5, dtype=torch.float64))
    q_grad, v_grad = torch.autograd.grad(out.sum(), (q, v))
    assert torch.equal(q_grad[0], torch.zeros_like(q_grad[0])) and torch.equal(
        v_grad[0], torch.zeros_like(v_grad[0])
    )
    assert not torch.isnan(q_grad).any()


def test_fast_path_accepts_unbatched_inputs():
    q, k, v = inputs()
    torch.testing.assert_close(fast.scaled_dot_product_attention(q, k, v), reference(q, k, v))
