"""chunked_attend: the online softmax over key chunks gives attend's numbers, forward and backward."""

import pytest
import torch
from torch.autograd import gradcheck

import attnlib
from attnlib import scores
from attnlib.chunked import chunked_attend

B, T, S, D, DV, A = 3, 4, 7, 5, 3, 6


def rand(*shape: int, dtype: torch.dtype = torch.float64) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype, requires_grad=True)


def additive_fn(dtype: torch.dtype = torch.float64):
    W_q, W_k, v = rand(A, D, dtype=dtype), rand(A, D, dtype=dtype), rand(A, dtype=dtype)
    return (lambda q, k: scores.additive(q, k, W_q, W_k, v)), [W_q, W_k, v]


SCORES = {
    "dot": lambda: (scores.dot, []),
    "scaled_dot": lambda: (scores.scaled_dot, []),
    "additive": additive_fn,
}
MASKS = {"no_mask": None, "padding": [7, 3, 1], "fully_masked_example": [0, 7, 2]}


def context_and_grads(context: torch.Tensor, inputs: list[torch.Tensor]) -> list[torch.Tensor]:
    return [context, *torch.autograd.grad(context.square().sum(), inputs)]


@pytest.mark.parametrize("recompute", [False, True], ids=["keep", "recompute"])
@pytest.mark.parametrize("chunk_size", [1, 3, 64])
@pytest.mark.parametrize("lengths", list(MASKS.values()), ids=list(MASKS))
@pytest.mark.parametrize("score", list(SCORES))
def test_equals_attend_forward_and_backward(score, lengths, chunk_size, recompute):
    score_fn, params = SCORES[score]()
    q, k, v = rand(B, T, D), rand(B, S, D), rand(B, S, DV)
    mask = None if lengths is None else attnlib.lengths_to_mask(torch.tensor(lengths), S)
    inputs = [q, k, v, *params]
    expected = context_and_grads(attnlib.attend(score_fn(q, k), v, mask)[0], inputs)
    got = context_and_grads(chunked_attend(q, k, v, score_fn, mask, chunk_size, recompute), inputs)
    for g, e in zip(got, expected, strict=True):
        torch.testing.assert_close(g, e)


def test_general_mask_of_shape_T_S_equals_attend():
    q, k, v = rand(B, T, D), rand(B, S, D), rand(B, S, DV)
    causal_like = torch.ones(T, S, dtype=torch.bool).tril()  # (T, S), the same for every example
    expected = attnlib.attend(scores.dot(q, k), v, causal_like[None])[0]
    torch.testing.assert_close(chunked_attend(q, k, v, scores.dot, causal_like[None], chunk_size=2), expected)


def test_unbatched_inputs_work():
    q, k, v = rand(T, D), rand(S, D), rand(S, DV)
    expected = attnlib.attend(scores.dot(q, k), v)[0]
    torch.testing.assert_close(chunked_attend(q, k, v, scores.dot, chunk_size=2), expected)


def test_fully_masked_rows_give_zero_context_and_zero_gradients():
    q, k, v = rand(B, T, D), rand(B, S, D), rand(B, S, DV)
    mask = attnlib.lengths_to_mask(torch.tensor([0, 0, 0]), S)
    context = chunked_attend(q, k, v, scores.dot, mask, chunk_size=3)
    assert torch.equal(context, torch.zeros_like(context))
    for grad in torch.autograd.grad(context.sum(), (q, k, v)):
        assert torch.equal(grad, torch.zeros_like(grad))


def test_large_scores_do_not_overflow():
    q, k, v = rand(B, T, D), rand(B, S, D), rand(B, S, DV)
    big_fn = lambda a, b: 1e4 * scores.dot(a, b)  # noqa: E731
    context = chunked_attend(q.float(), k.float(), v.float(), big_fn, chunk_size=2)
    expected = attnlib.attend(big_fn(q.float(), k.float()), v.float())[0]
    assert torch.isfinite(context).all()
    torch.testing.assert_close(context, expected)


@pytest.mark.parametrize("recompute", [False, True], ids=["keep", "recompute"])
def test_gradients_match_finite_differences(recompute):
    score_fn, params = additive_fn()
    mask = attnlib.lengths_to_mask(torch.tensor([5, 2, 0]), 5)  # a full, a padded and an empty example
    assert gradcheck(
        lambda q, k, v, *p: chunked_attend(q, k, v, score_fn, mask, chunk_size=2, recompute=recompute),
        (rand(3, 1, D), rand(3, 5, D), rand(3, 5, 2), *params),
    )


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32, torch.float16, torch.bfloat16])
def test_keeps_dtype_and_device(dtype):
    q, k, v = (torch.randn(B, n, d).to(dtype) for n, d in ((T, D), (S, D), (S, DV)))
    context = chunked_attend(q, k, v, scores.scaled_dot, chunk_size=2)
    assert context.dtype == dtype and context.device == q.device
    expected = attnlib.attend(scores.scaled_dot(q.double(), k.double()), v.double())[0]
    tolerance = {"atol": 2e-2, "rtol": 2e-2} if dtype in (torch.float16, torch.bfloat16) else {}
    torch.testing.assert_close(context.double(), expected, **tolerance)


def test_never_creates_more_than_one_chunk_of_additive_hidden_states(largest_tensor):
    q, k, v = torch.randn(2, 8, D), torch.randn(2, 40, D), torch.randn(2, 40, DV)
    score_fn, _ = additive_fn(torch.float32)
    with torch.no_grad(), largest_tensor() as full:
        attnlib.attend(score_fn(q, k), v)
    with torch.no_grad(), largest_tensor() as chunked:
        chunked_attend(q, k, v, score_fn, chunk_size=5)
    assert full.numel == 2 * 8 * 40 * A  # the (B, T, S, A) tensor of scores.additive
    assert chunked.numel == 2 * 8 * 5 * A  # one chunk of it


def test_recompute_keeps_less_for_the_backward_pass():
    q, k, v = (
        rand(2, 8, D, dtype=torch.float32),
        rand(2, 40, D, dtype=torch.float32),
        rand(2, 40, DV, dtype=torch.float32),
    )
    score_fn, _ = additive_fn(torch.float32)
    saved = {False: 0, True: 0}
    for recompute in saved:

        def count(x: torch.Tensor, recompute: bool = recompute) -> torch.Tensor:
            saved[recompute] += x.numel()
            return x

        with torch.autograd.graph.saved_tensors_hooks(count, lambda x: x):
            chunked_attend(q, k, v, score_fn, chunk_size=5, recompute=recompute)
    assert saved[True] < saved[False] / 4


q5, k6, v6 = torch.randn(2, 3, 5), torch.randn(2, 6, 5), torch.randn(2, 6, 4)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: chunked_attend(q5, k6, v6, scores.dot, chunk_size=0), ValueError, r"chunk_size must be > 0"),
        (
            lambda: chunked_attend(q5, k6, v6, scores.dot, chunk_size=-2),
            ValueError,
            r"chunk_size must be > 0",
        ),
        (
            lambda: chunked_attend(q5, k6, v6, scores.dot, chunk_size=2.5),
            TypeError,
            r"chunk_size must be an int",
        ),
        (
            lambda: chunked_attend(q5, k6, v6[:, :5], scores.dot),
            ValueError,
            r"values has 5 positions but keys has 6 \(values shape \(2, 5, 4\), keys shape \(2, 6, 5\)\)",
        ),
        (
            lambda: chunked_attend(q5, k6, v6.double(), scores.dot),
            TypeError,
            r"values has dtype torch.float64",
        ),
        (lambda: chunked_attend(q5, k6, v6, "dot"), TypeError, r"score_fn must be callable"),
        (
            lambda: chunked_attend(q5, k6, v6, lambda q, k: scores.dot(k, q), chunk_size=4),
            ValueError,
            r"score_fn must return scores \(\.\.\., T, chunk\) = \(\.\.\., 3, 4\).*got \(2, 4, 3\)",
        ),
        (
            lambda: chunked_attend(q5, k6, v6, scores.dot, mask=torch.ones(2, 5, dtype=torch.bool)),
            ValueError,
            r"mask of shape \(2, 5\) does not broadcast to scores of shape \(2, 3, 6\)",
        ),
        (lambda: chunked_attend(q5, k6, v6, scores.dot, recompute=1), TypeError, r"recompute must be a bool"),
        (
            lambda: chunked_attend(q5, torch.randn(2, 6, 7), v6, scores.dot),
            ValueError,
            r"keys has feature size 7",
        ),
    ],
    ids=[
        "chunk_size_zero",
        "chunk_size_negative",
        "chunk_size_float",
        "positions",
        "dtype",
        "score_fn_not_callable",
        "score_fn_shape",
        "mask_shape",
        "recompute_not_bool",
        "score_fn_own_check",
    ],
)
def test_bad_input_raises_a_clear_error(call, error, message):
    with pytest.raises(error, match=message):
        call()
