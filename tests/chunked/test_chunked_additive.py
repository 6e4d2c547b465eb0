"""additive_attend: the recomputing fast path gives eager additive attention's numbers and keeps far less."""

import pytest
import torch
from torch.autograd import gradcheck

import attnlib
from attnlib import chunked_additive, scores
from attnlib.chunked_additive import additive_attend, additive_attend_from_projections


def rand(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, requires_grad=True)


def problem(B, T, S, D, DV, A, dtype=torch.float64):
    """query, keys, values, W_q, W_k, v: every one a leaf with a gradient."""
    return [rand(B, T, D, dtype=dtype), rand(B, S, D, dtype=dtype), rand(B, S, DV, dtype=dtype)] + [
        rand(A, D, dtype=dtype),
        rand(A, D, dtype=dtype),
        rand(A, dtype=dtype),
    ]


def eager(q, k, values, W_q, W_k, v, mask=None):
    return attnlib.attend(scores.additive(q, k, W_q, W_k, v), values, mask)


def outputs_and_grads(context, weights, inputs):
    """The two outputs and the gradients of a random mix of both (so that the weights' gradient counts)."""
    torch.manual_seed(1)
    loss = (context * torch.randn_like(context)).sum() + (weights * torch.randn_like(weights)).sum()
    return [context, weights, *torch.autograd.grad(loss, inputs)]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("chunk_size", [1, 3, 64])
def test_values_and_gradients_equal_eager_on_random_shapes_and_masks(seed, chunk_size):
    generator = torch.Generator().manual_seed(seed)
    B, T, S, D, DV, A = (int(n) for n in torch.randint(1, 7, (6,), generator=generator))
    torch.manual_seed(seed)
    inputs = problem(B, T, S, D, DV, A)
    mask = torch.rand(B, T, S, generator=generator) < 0.7  # random holes, some rows empty when S is small
    mask[0, 0] = False  # always one fully masked row
    expected = outputs_and_grads(*eager(*inputs, mask), inputs)
    got = outputs_and_grads(*additive_attend(*inputs, mask, chunk_size=chunk_size), inputs)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("lengths", [None, [5, 2, 0]], ids=["no_mask", "padding_and_empty_example"])
def test_gradcheck(lengths):
    inputs = problem(3, 2, 5, 3, 2, 4)
    mask = None if lengths is None else attnlib.lengths_to_mask(torch.tensor(lengths), 5)
    assert gradcheck(lambda *x: additive_attend(*x, mask, chunk_size=2), inputs)


def test_gradients_through_the_weights_alone_equal_eager():
    inputs = problem(2, 3, 4, 3, 2, 4)
    mask = attnlib.lengths_to_mask(torch.tensor([4, 2]), 4)
    direction = torch.randn(2, 3, 4, dtype=torch.float64)
    scored = inputs[:2] + inputs[3:]  # the weights do not depend on the values
    expected = torch.autograd.grad((eager(*inputs, mask)[1] * direction).sum(), scored)
    got = torch.autograd.grad((additive_attend(*inputs, mask, chunk_size=3)[1] * direction).sum(), scored)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)


def test_gradcheck_of_the_context_alone_without_weights():
    inputs = problem(2, 3, 4, 3, 2, 4)
    mask = attnlib.lengths_to_mask(torch.tensor([4, 1]), 4)
    assert gradcheck(lambda *x: additive_attend(*x, mask, chunk_size=3, need_weights=False)[0], inputs)


def test_a_fully_masked_row_gives_zeros_no_nan_and_zero_gradients_as_eager_does():
    inputs = problem(2, 3, 4, 3, 2, 4)
    mask = attnlib.lengths_to_mask(torch.tensor([0, 0]), 4)
    context, weights = additive_attend(*inputs, mask, chunk_size=3)
    assert torch.equal(context, torch.zeros_like(context)) and torch.equal(weights, torch.zeros_like(weights))
    for grad in torch.autograd.grad(context.sum() + weights.sum(), inputs):
        assert torch.equal(grad, torch.zeros_like(grad))
    assert torch.equal(eager(*inputs, mask)[0], context)


def test_leading_batch_dims_and_a_T_by_S_mask_equal_eager():
    inputs = [rand(2, 3, 4, 5), rand(1, 3, 6, 5), rand(2, 1, 6, 2), rand(4, 5), rand(4, 5), rand(4)]
    mask = torch.ones(4, 6, dtype=torch.bool).tril()[None, None]  # (1, 1, T, S)
    expected = outputs_and_grads(*eager(*inputs, mask), inputs)
    got = outputs_and_grads(*additive_attend(*inputs, mask, chunk_size=4), inputs)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)


def test_from_projections_equals_additive_from_projections():
    qp, kp, values, v = rand(2, 3, 4), rand(2, 5, 4), rand(2, 5, 3), rand(4)
    mask = attnlib.lengths_to_mask(torch.tensor([5, 2]), 5)  # (B, S) padding
    expected = attnlib.attend(scores.additive_from_projections(qp, kp, v), values, mask)
    for g, e in zip(additive_attend_from_projections(qp, kp, v, values, mask), expected, strict=True):
        torch.testing.assert_close(g, e)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16])
def test_keeps_dtype(dtype):
    inputs = [x.detach().to(dtype) for x in problem(2, 3, 4, 5, 2, 6)]
    context, weights = additive_attend(*inputs, chunk_size=3)
    assert context.dtype == weights.dtype == dtype
    expected, _ = eager(*(x.double() for x in inputs))
    tolerance = {"atol": 3e-2, "rtol": 3e-2} if dtype != torch.float32 else {}
    torch.testing.assert_close(context.double(), expected, **tolerance)


def test_forward_and_backward_never_create_more_than_one_chunk_of_hidden_states(largest_tensor):
    B, T, S, D, A = 2, 8, 40, 5, 16
    inputs = problem(B, T, S, D, 3, A, dtype=torch.float32)
    with largest_tensor() as largest:
        context, _ = additive_attend(*inputs, chunk_size=5, need_weights=False)
        torch.autograd.grad(context.sum(), inputs)
    assert largest.numel == B * T * 5 * A  # one chunk of (B, T, S, A)


def saved_bytes(fn) -> int:
    total = 0

    def pack(x: torch.Tensor) -> torch.Tensor:
        nonlocal total
        total += x.numel() * x.element_size()
        return x

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda x: x):
        fn()
    return total


def test_keeps_at_most_a_quarter_of_eagers_memory_for_backward_at_the_issues_size():
    B, T, S, H, A = 32, 50, 50, 256, 256
    inputs = problem(B, T, S, H, H, A, dtype=torch.float32)
    q, K, _, W_q, W_k, v = inputs
    mask = attnlib.lengths_to_mask(torch.randint(25, 51, (B,)), S)
    eager_bytes = saved_bytes(lambda: eager(q, K, K, W_q, W_k, v, mask))
    fast_bytes = saved_bytes(lambda: additive_attend(q, K, K, W_q, W_k, v, mask, need_weights=False))
    assert eager_bytes >= B * T * S * A * 4  # at least the (B, T, S, A) tanh output
    assert fast_bytes <= eager_bytes / 4


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda x: additive_attend(*x, chunk_size=0), ValueError, r"chunk_size must be > 0"),
        (lambda x: additive_attend(*x, need_weights=1), TypeError, r"need_weights must be a bool"),
        (lambda x: additive_attend(*x[:2], x[2][:, :3], *x[3:]), ValueError, r"values has 3 positions"),
        (lambda x: additive_attend(*x[:4], x[4][:3], x[5]), ValueError, r"W_k has 3 rows"),
        (lambda x: additive_attend(*x[:5], x[5][:3]), ValueError, r"v must have shape \(6,\)"),
        (
            lambda x: additive_attend(*x, mask=torch.ones(2, 5, dtype=torch.bool)),
            ValueError,
            r"mask of shape \(2, 5\) does not broadcast",
        ),
    ],
    ids=["chunk_size", "need_weights", "positions", "W_k_rows", "v_size", "mask_shape"],
)
def test_bad_input_raises_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call([x.detach() for x in problem(2, 3, 4, 5, 2, 6)])


def test_the_default_chunk_size_keeps_one_chunk_within_chunk_elements(monkeypatch, largest_tensor):
    B, T, S, D, A = 2, 8, 40, 5, 16
    monkeypatch.setattr(chunked_additive, "CHUNK_ELEMENTS", B * T * 5 * A + 1)
    inputs = problem(B, T, S, D, 3, A, dtype=torch.float32)
    with largest_tensor() as largest:
        context, _ = additive_attend(*inputs, need_weights=False)
        torch.autograd.grad(context.sum(), inputs)
    assert largest.numel == B * T * 5 * A
