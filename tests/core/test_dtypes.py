"""Every function keeps the dtype of its inputs, and large scores (1e4) stay finite in every dtype."""

import pytest
import torch

import attnlib
from attnlib import fast, layers, local, scores

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64]
T, S, D, A = 3, 5, 4, 6


def call_everything(dtype):
    """One output of each public function, from inputs of ``dtype``."""
    q, k, v = (
        torch.randn(2, T, D, dtype=dtype),
        torch.randn(2, S, D, dtype=dtype),
        torch.randn(2, S, 3, dtype=dtype),
    )
    W, w = torch.randn(A, D, dtype=dtype), torch.randn(A, dtype=dtype)
    pad = attnlib.lengths_to_mask(torch.tensor([S, 0]), S)
    e = scores.dot(q, k)
    p = local.predict_position(q, W, w, torch.tensor([S, 2]))
    return {
        "dot": e,
        "scaled_dot": scores.scaled_dot(q, k),
        "general": scores.general(q, k, torch.randn(D, D, dtype=dtype)),
        "additive": scores.additive(q, k, W, W, w),
        "concat": scores.concat(q, k, torch.randn(A, 2 * D, dtype=dtype), w),
        "cosine": scores.cosine(q, k, 2.0),
        "location": scores.location(q, torch.randn(S, D, dtype=dtype), S),
        "masked_softmax": attnlib.masked_softmax(e, pad),
        "attend_context": attnlib.attend(e, v, pad)[0],
        "attend_weights": attnlib.attend(e, v, pad)[1],
        "gaussian": local.gaussian(p, S, 2),
        "predict_position": p,
        "local_weights": local.weights(e, p, 2, pad),
        "fast": fast.scaled_dot_product_attention(q, k, v, pad),
        "layer": layers.Attention(layers.DotScore())(q, k, v, pad)[0],
    }


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_outputs_have_input_dtype_and_are_finite(dtype):
    for name, out in call_everything(dtype).items():
        assert out.dtype == dtype, name
        assert torch.isfinite(out).all(), name


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_scores_of_1e4_give_finite_weights_context_and_gradients(dtype):
    # 1e4 - 200: bfloat16 spacing near 1e4 is 64, so a smaller gap would round to a tie.
    e = torch.tensor([[[1e4, -1e4, 1e4 - 200, 0.0], [1e4, 1e4, 1e4, 1e4]]], dtype=dtype, requires_grad=True)
    v = torch.randn(1, 4, 2, dtype=dtype, requires_grad=True)
    mask = torch.tensor([[True, True, True, False]])
    context, weights = attnlib.attend(e, v, mask)
    (context.sum() + weights.sum()).backward()
    for t in (context, weights, e.grad, v.grad):
        assert torch.isfinite(t).all()
    assert weights[0, 0, 0] > 0.99 and weights[0, 0, 3] == 0
    torch.testing.assert_close(
        weights[0, 1].float(), torch.tensor([1 / 3, 1 / 3, 1 / 3, 0]), atol=1e-2, rtol=0
    )


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16], ids=str)
def test_half_precision_softmax_is_close_to_float64(dtype):
    e = torch.randn(4, 7, dtype=torch.float64) * 5
    torch.testing.assert_close(
        attnlib.masked_softmax(e.to(dtype)).double(),
        torch.softmax(e.to(dtype).double(), -1),
        atol=1e-2,
        rtol=0,
    )
