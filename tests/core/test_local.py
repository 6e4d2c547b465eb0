"""Local attention (Luong 2015, §3.2): the Gaussian window, local-m and local-p against explicit loops.

Local-m (eq. 7) is the plain softmax in the window around p_t = min(t, S_b - 1); local-p (eqs. 9-10)
multiplies that softmax by the Gaussian. ``weights`` applies the Gaussian unless ``gaussian=False``.
"""

import math

import pytest
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


def loop_window_softmax(
    e: torch.Tensor, p: torch.Tensor, D: float, length: int | None = None
) -> torch.Tensor:
    """a_t(s) = exp(e_{t,s}) / Σ_{s' in window} exp(e_{t,s'}) for |s - p_t| <= D and s < length (eq. 7)."""
    T, S = e.shape
    length = S if length is None else length
    out = torch.zeros(T, S, dtype=torch.float64)
    for t in range(T):
        window = [s for s in range(length) if abs(s - p[t].item()) <= D]
        denom = sum(math.exp(e[t, s].item()) for s in window)
        for s in window:
            out[t, s] = math.exp(e[t, s].item()) / denom
    return out


def test_gaussian_window_with_centres_t_matches_loop():
    T, S, D = 5, 7, 2
    e = torch.randn(T, S, dtype=torch.float64)
    p = torch.arange(T, dtype=torch.float64)  # the course's labelled variant: local-m with a Gaussian window
    torch.testing.assert_close(local.weights(e, p, D), loop_local_weights(e, p, D))


def test_local_m_is_the_plain_softmax_in_the_window():
    T, S, D = 5, 7, 2
    e = torch.randn(T, S, dtype=torch.float64)
    p = local.monotonic_position(T, S, dtype=torch.float64)  # p_t = t (T < S: nothing to clip)
    w = local.weights(e, p, D, gaussian=False)
    torch.testing.assert_close(w, loop_window_softmax(e, p, D))
    torch.testing.assert_close(w.sum(-1), torch.ones(T, dtype=torch.float64))  # no Gaussian: rows sum to 1


def test_gaussian_is_the_default():
    e, p = torch.randn(3, 6, dtype=torch.float64), torch.tensor([0.5, 2.0, 4.2], dtype=torch.float64)
    torch.testing.assert_close(local.weights(e, p, 2), local.weights(e, p, 2, gaussian=True))
    assert not torch.allclose(local.weights(e, p, 2), local.weights(e, p, 2, gaussian=False))


def test_without_gaussian_the_weights_are_the_window_softmax_before_the_gaussian():
    e, p = torch.randn(4, 9, dtype=torch.float64), torch.tensor([1.0, 3.6, 5.5, 8.0], dtype=torch.float64)
    torch.testing.assert_close(
        local.weights(e, p, 2), local.weights(e, p, 2, gaussian=False) * local.gaussian(p, 9, 2)
    )


def test_local_m_without_gaussian_respects_padding_mask():
    B, T, S, D = 2, 6, 6, 1.5
    e = torch.randn(B, T, S, dtype=torch.float64)
    lengths = torch.tensor([6, 3])
    p = local.monotonic_position(T, lengths, dtype=torch.float64)  # (B, T)
    w = local.weights(e, p, D, attnlib.lengths_to_mask(lengths, S), gaussian=False)
    for b in range(B):
        torch.testing.assert_close(w[b], loop_window_softmax(e[b], p[b], D, int(lengths[b])))


def test_monotonic_position_is_t_clipped_to_each_sources_last_position():
    p = local.monotonic_position(6, torch.tensor([6, 3, 1]))
    assert p.dtype == torch.float32 and p.shape == (3, 6)
    assert p.tolist() == [[0, 1, 2, 3, 4, 5], [0, 1, 2, 2, 2, 2], [0, 0, 0, 0, 0, 0]]


def test_monotonic_position_starts_at_t0_for_one_step_at_a_time():
    lengths = torch.tensor([4, 9])
    whole = local.monotonic_position(7, lengths, dtype=torch.float64)
    for t in range(7):
        torch.testing.assert_close(
            local.monotonic_position(1, lengths, t0=t, dtype=torch.float64)[:, 0], whole[:, t]
        )


def test_monotonic_position_accepts_one_int_length():
    assert local.monotonic_position(4, 2).tolist() == [0, 1, 1, 1]


def test_local_m_past_the_source_end_keeps_the_last_words_and_sums_to_one():
    S, T, D = (
        4,
        10,
        2,
    )  # steps t = 4 … 9 lie past the last source position, 3; beyond t = 5 past the window too
    e = torch.randn(T, S, dtype=torch.float64)
    w = local.weights(e, local.monotonic_position(T, S, dtype=torch.float64), D, gaussian=False)
    assert torch.isfinite(w).all()
    torch.testing.assert_close(w.sum(-1), torch.ones(T, dtype=torch.float64))
    for t in range(S, T):  # centre S - 1 = 3: the window {1, 2, 3}, the last D + 1 words
        assert torch.all(w[t, :1] == 0) and torch.all(w[t, 1:] > 0)
        torch.testing.assert_close(w[t, 1:], torch.softmax(e[t, 1:], dim=-1))


def test_unclipped_centre_past_the_window_gives_an_empty_row_not_nan():
    """Positive control for the clip: with p_t = t unclipped, a step beyond S - 1 + D attends to nothing."""
    S, T, D = 4, 8, 2
    e = torch.randn(T, S, dtype=torch.float64)
    w = local.weights(e, torch.arange(T, dtype=torch.float64), D, gaussian=False)
    assert torch.isfinite(w).all()
    assert torch.all(w[S + D :] == 0)  # t = 6, 7: the window [t - 2, t + 2] holds no position < 4
    assert torch.all(w[: S + D].sum(-1) > 0.999)


def test_local_m_gradient_reaches_the_scores_in_the_window_only():
    e = torch.randn(3, 6, dtype=torch.float64, requires_grad=True)
    p = local.monotonic_position(3, 6, dtype=torch.float64)
    w = local.weights(e, p, 1, gaussian=False)
    (w * torch.randn(3, 6, dtype=torch.float64)).sum().backward()
    outside = (torch.arange(6)[None, :] - p[:, None]).abs() > 1
    assert torch.all(e.grad[outside] == 0) and torch.all(e.grad[~outside] != 0)


@pytest.mark.parametrize(
    ("call", "error", "message"),
    [
        (lambda: local.monotonic_position(0, 3), ValueError, r"T must be > 0, got 0"),
        (
            lambda: local.monotonic_position(3, torch.tensor([2, 0])),
            ValueError,
            r"lengths must be >= 1.*\[2, 0\]",
        ),
        (
            lambda: local.monotonic_position(3, torch.tensor([2.0])),
            TypeError,
            r"lengths must have an integer dtype",
        ),
        (lambda: local.monotonic_position(3, 4, t0=-1), ValueError, r"t0 must be >= 0"),
        (lambda: local.monotonic_position(3, 4, dtype=torch.int64), TypeError, r"dtype must be a floating"),
        (
            lambda: local.weights(torch.zeros(2, 3), torch.zeros(2), 1, gaussian=1),
            TypeError,
            r"gaussian must be a bool",
        ),
    ],
)
def test_local_m_errors_name_the_argument(call, error, message):
    with pytest.raises(error, match=message):
        call()


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
