"""Local attention (Luong 2015, §3.2): the Gaussian window, local-m and local-p against explicit loops."""

import math

import torch

import attnlib
from attnlib import local


def test_gaussian_is_zero_outside_the_window():
    p, D = torch.tensor([2.3, 5.0]), 2
    g = local.gaussian(p, 10, D)
    positions = torch.arange(10)
    outside = (positions[None, :] - p[:, None]).abs() > D
    assert torch.all(g[outside] == 0)
    assert torch.all(g[~outside] > 0)


def test_gaussian_is_one_at_an_integer_centre():
    g = local.gaussian(torch.tensor([0.0, 3.0, 7.0]), 8, 3)
    assert g[0, 0] == 1 and g[1, 3] == 1 and g[2, 7] == 1


def test_gaussian_matches_formula_with_sigma_half_d():
    p, S, D = 3.4, 8, 3.0
    g = local.gaussian(torch.tensor([p], dtype=torch.float64), S, D)[0]
    sigma = D / 2
    for s in range(S):
        expected = math.exp(-((s - p) ** 2) / (2 * sigma**2)) if abs(s - p) <= D else 0.0
        assert math.isclose(g[s].item(), expected, rel_tol=1e-12)


def loop_local_weights(e: torch.Tensor, p: torch.Tensor, D: float) -> torch.Tensor:
    """a_t(s) = softmax over the window of e_t, times the Gaussian; e (T, S), p (T,)."""
    T, S = e.shape
    out = torch.zeros(T, S, dtype=torch.float64)
    for t in range(T):
        window = [s for s in range(S) if abs(s - p[t].item()) <= D]
        denom = sum(math.exp(e[t, s].item()) for s in window)
        for s in window:
            bump = math.exp(-((s - p[t].item()) ** 2) / (2 * (D / 2) ** 2))
            out[t, s] = math.exp(e[t, s].item()) / denom * bump
    return out


def test_local_m_matches_loop():
    T, S, D = 5, 7, 2
    e = torch.randn(T, S, dtype=torch.float64)
    p = torch.arange(T, dtype=torch.float64)  # local-m: p_t = t
    torch.testing.assert_close(local.weights(e, p, D), loop_local_weights(e, p, D))


def test_local_p_matches_loop():
    B, T, S, d, A, D = 2, 3, 6, 4, 5, 1.5
    q, e = torch.randn(B, T, d, dtype=torch.float64), torch.randn(B, T, S, dtype=torch.float64)
    W_p, v_p = torch.randn(A, d, dtype=torch.float64), torch.randn(A, dtype=torch.float64)
    p = local.predict_position(q, W_p, v_p, torch.tensor([S, S]))
    for b in range(B):
        torch.testing.assert_close(local.weights(e, p, D)[b], loop_local_weights(e[b], p[b], D))


def test_local_weights_are_not_renormalised():
    e = torch.zeros(1, 9, dtype=torch.float64)
    w = local.weights(e, torch.tensor([4.0], dtype=torch.float64), 2)
    assert w.sum() < 1  # the Gaussian scales the softmax down away from p_t
    assert w[0, 4] == 1 / 5  # at the centre: softmax over the 5 window positions, times 1


def test_local_weights_respect_padding_mask():
    e = torch.randn(2, 3, 6, dtype=torch.float64)
    p = torch.full((2, 3), 3.0, dtype=torch.float64)
    pad = attnlib.lengths_to_mask(torch.tensor([6, 3]), 6)
    w = local.weights(e, p, 2, mask=pad)
    assert torch.all(w[1, :, 3:] == 0)
    torch.testing.assert_close(w[0], local.weights(e[0], p[0], 2))


def test_local_m_positions_shared_by_the_batch_are_not_read_as_padding():
    B = T = 3  # p (T,) broadcasts over B; the (T, S) window must not be taken for a (B, S) padding mask
    e = torch.randn(B, T, 5, dtype=torch.float64)
    p = torch.arange(T, dtype=torch.float64)
    w = local.weights(e, p, 1)
    for b in range(B):
        torch.testing.assert_close(w[b], loop_local_weights(e[b], p, 1))


def test_predict_position_uses_each_examples_own_length():
    B, T, d, A = 3, 4, 5, 6
    q = torch.randn(1, T, d, dtype=torch.float64).expand(B, T, d)  # same query for every example
    W_p, v_p = torch.randn(A, d, dtype=torch.float64), torch.randn(A, dtype=torch.float64)
    lengths = torch.tensor([2, 5, 10])
    p = local.predict_position(q, W_p, v_p, lengths)
    fraction = torch.sigmoid(torch.tanh(q[0] @ W_p.T) @ v_p)  # (T,)
    for b in range(B):
        torch.testing.assert_close(p[b], lengths[b].item() * fraction)
    assert torch.all(p > 0) and torch.all(p < lengths[:, None])


def test_predict_position_accepts_one_int_length():
    q, W_p, v_p = torch.randn(2, 3, 4), torch.randn(5, 4), torch.randn(5)
    torch.testing.assert_close(
        local.predict_position(q, W_p, v_p, 7), local.predict_position(q, W_p, v_p, torch.tensor([7, 7]))
    )
