"""masked_softmax, attend, lengths_to_mask: weights, padding masks and rows with nothing to attend to."""

import pytest
import torch
import torch.nn.functional as F

import attnlib
from attnlib import scores


def test_masked_softmax_without_mask_is_softmax():
    e = torch.randn(2, 3, 5, dtype=torch.float64)
    torch.testing.assert_close(attnlib.masked_softmax(e), torch.softmax(e, dim=-1))


def test_masked_entries_are_exactly_zero_and_rest_renormalised():
    e = torch.randn(3, 5, dtype=torch.float64)
    mask = torch.tensor([True, False, True, True, False])
    w = attnlib.masked_softmax(e, mask)
    assert torch.all(w[:, ~mask] == 0)
    torch.testing.assert_close(w[:, mask], torch.softmax(e[:, mask], dim=-1))


def test_lengths_to_mask_marks_positions_below_length():
    mask = attnlib.lengths_to_mask(torch.tensor([0, 2, 4]), 4)
    expected = torch.tensor([[0, 0, 0, 0], [1, 1, 0, 0], [1, 1, 1, 1]], dtype=torch.bool)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, expected)


def test_padding_mask_b_s_broadcasts_over_target_steps():
    B, T, S = 3, 3, 4  # B == T: the (B, S) mask must still be read as padding, not as (T, S)
    e = torch.randn(B, T, S, dtype=torch.float64)
    pad = attnlib.lengths_to_mask(torch.tensor([1, 2, 4]), S)  # (B, S)
    torch.testing.assert_close(attnlib.masked_softmax(e, pad), attnlib.masked_softmax(e, pad[:, None, :]))
    assert torch.all(attnlib.masked_softmax(e, pad)[0, :, 1:] == 0)


def test_target_by_source_mask_with_leading_one_is_shared_by_the_batch():
    B, T, S = 3, 3, 3
    e = torch.randn(B, T, S, dtype=torch.float64)
    causal = torch.ones(T, S, dtype=torch.bool).tril()
    w = attnlib.masked_softmax(e, causal[None])  # (1, T, S): same mask for every example
    assert torch.all(w[:, 0, 1:] == 0)
    torch.testing.assert_close(w[:, 2], torch.softmax(e[:, 2], dim=-1))


def test_attend_context_is_weights_times_values():
    e, v = torch.randn(2, 3, 5, dtype=torch.float64), torch.randn(2, 5, 4, dtype=torch.float64)
    context, weights = attnlib.attend(e, v)
    expected = torch.einsum("bts,bsd->btd", torch.softmax(e, -1), v)
    torch.testing.assert_close(weights, torch.softmax(e, -1))
    torch.testing.assert_close(context, expected)


def test_attend_scaled_dot_agrees_with_torch_sdpa_under_padding_mask():
    B, T, S, d = 3, 4, 6, 8
    q, k, v = torch.randn(B, T, d), torch.randn(B, S, d), torch.randn(B, S, 5)
    pad = attnlib.lengths_to_mask(torch.tensor([6, 3, 1]), S)  # (B, S)
    context, _ = attnlib.attend(scores.scaled_dot(q, k), v, pad)
    expected = F.scaled_dot_product_attention(q, k, v, attn_mask=pad[:, None, :])
    torch.testing.assert_close(context, expected, atol=1e-5, rtol=1e-5)


def fully_masked_case():
    e = torch.randn(2, 3, 4, dtype=torch.float64, requires_grad=True)
    v = torch.randn(2, 4, 5, dtype=torch.float64, requires_grad=True)
    pad = attnlib.lengths_to_mask(torch.tensor([0, 2]), 4)  # example 0 has nothing to attend to
    return e, v, pad


def test_fully_masked_row_gives_zero_weights_and_zero_context():
    e, v, pad = fully_masked_case()
    context, weights = attnlib.attend(e, v, pad)
    assert torch.equal(weights[0], torch.zeros(3, 4, dtype=torch.float64))
    assert torch.equal(context[0], torch.zeros(3, 5, dtype=torch.float64))


def test_fully_masked_row_gives_zero_gradient_and_no_nan():
    e, v, pad = fully_masked_case()
    context, weights = attnlib.attend(e, v, pad)
    (context.square().sum() + weights.sum()).backward()
    assert not torch.isnan(e.grad).any() and not torch.isnan(v.grad).any()
    assert torch.equal(e.grad[0], torch.zeros(3, 4, dtype=torch.float64))
    assert torch.equal(v.grad[0], torch.zeros(4, 5, dtype=torch.float64))
    assert torch.equal(e.grad[1, :, 2:], torch.zeros(3, 2, dtype=torch.float64))  # padded positions
    assert e.grad[1, :, :2].abs().sum() > 0  # ... while the attended ones still learn


def test_masked_positions_get_zero_gradient_even_with_huge_scores():
    e = torch.tensor([[1e4, -1e4, 5.0]], requires_grad=True)
    w = attnlib.masked_softmax(e, torch.tensor([False, True, True]))
    w[0, 1].backward()
    assert e.grad[0, 0] == 0 and torch.isfinite(e.grad).all()


def test_large_scores_do_not_overflow():
    e = torch.tensor([[1e4, 1e4 - 1.0, -1e4]])
    w = attnlib.masked_softmax(e)
    torch.testing.assert_close(w, torch.softmax(torch.tensor([[1.0, 0.0, -2e4]]), -1))


def test_weighted_sum_is_the_context_of_any_weights():
    torch.manual_seed(0)
    weights = torch.rand(2, 3, 4, dtype=torch.float64)  # (B, T, S), e.g. local attention's windowed weights
    values = torch.randn(2, 4, 5, dtype=torch.float64)  # (B, S, dv)
    expected = torch.zeros(2, 3, 5, dtype=torch.float64)
    for b in range(2):
        for t in range(3):
            for s in range(4):
                expected[b, t] += weights[b, t, s] * values[b, s]
    assert torch.allclose(attnlib.weighted_sum(weights, values), expected)


def test_weighted_sum_names_weights_when_positions_disagree():
    with pytest.raises(ValueError, match="values has 5 positions but weights has 4"):
        attnlib.weighted_sum(torch.rand(2, 3, 4), torch.rand(2, 5, 3))


@pytest.mark.parametrize(
    "shapes",
    [
        [(), ()],
        [(3,), ()],
        [(2, 1), (1, 5)],
        [(4, 1, 3), (2, 1)],
        [(0,), (1,)],
        [(2, 3), (3,), (1, 1)],
        [(2,), (3,)],
        [(0,), (2,)],
        [(2, 3), (4, 3)],
        [(5, 1, 2), (5, 3, 2), (4, 1, 1)],
    ],
)
def test_the_checks_broadcast_exactly_as_torch_does(shapes):
    from attnlib import _checks

    try:
        expected = torch.broadcast_shapes(*shapes)
    except RuntimeError:
        expected = None
    assert _checks.broadcast(*shapes) == expected
