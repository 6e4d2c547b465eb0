"""The SDPA fast path gives the reference numbers, forward and backward, fully masked rows included."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

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


class _Ops(TorchDispatchMode):
    """Records the name of every ATen operation and the largest tensor any of them creates."""

    def __init__(self):
        super().__init__()
        self.names, self.largest = [], 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        self.names.append(func.__name__.split(".")[0])  # "bmm.default" -> "bmm"
        for x in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(x, torch.Tensor):
                self.largest = max(self.largest, x.numel())
        return out


@pytest.mark.parametrize("batch", [(), (3,), (2, 3), (2, 2, 3)], ids=["unbatched", "3d", "4d", "5d"])
def test_fast_path_runs_the_fused_cpu_kernel_for_any_rank(batch):
    q, k, v = (x.detach() for x in inputs(*batch, dv=8))
    with _Ops() as ops:
        fast.scaled_dot_product_attention(q, k, v)
    assert "_scaled_dot_product_flash_attention_for_cpu" in ops.names, ops.names


def test_fast_path_never_forms_a_T_by_S_tensor_for_a_padding_mask():
    B, T, S, d = 2, 64, 48, 8
    q, k, v = torch.randn(B, T, d), torch.randn(B, S, d), torch.randn(B, S, d)
    pad = attnlib.lengths_to_mask(torch.tensor([48, 20]), S)
    with _Ops() as ops:
        fast.scaled_dot_product_attention(q, k, v, pad)
    assert "_scaled_dot_product_flash_attention_for_cpu" in ops.names
    assert ops.largest < T * S, ops.largest


def test_fast_path_scale_one_gives_plain_dot_scores():
    q, k, v = inputs(3)
    expected = attnlib.attend(scores.dot(q, k), v)[0]
    torch.testing.assert_close(fast.scaled_dot_product_attention(q, k, v, scale=1.0), expected)


def test_prepare_then_run_equals_the_one_call():
    q, k, v = inputs(3)
    pad = attnlib.lengths_to_mask(torch.tensor([6, 0, 2]), 6)
    prepared = fast.prepare(q, k, v, pad)
    assert prepared.query.dim() == 4 and prepared.attn_mask.shape == (3, 1, 1, 6)
    torch.testing.assert_close(fast.run(prepared), fast.scaled_dot_product_attention(q, k, v, pad))
