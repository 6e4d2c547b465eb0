"""Local attention (Luong et al. 2015, §3.2): attend to a window [p_t - D, p_t + D] around a centre p_t.

Positions are 0-based, s = 0 … S-1 (the paper counts from 1); the centre p_t is real-valued; the window is
{s : |s - p_t| <= D}. The paper's equations (numbers of Luong et al. 2015):

    align(q_t, k_s) = exp(e_{t,s}) / Σ_{s'} exp(e_{t,s'})                    (eq. 7; here over the window)
    local-m (monotonic):  p_t = t,  a_t(s) = align(q_t, k_s)                  (§3.2, eq. 7)
    local-p (predictive): p_t = S · sigmoid(v_pᵀ tanh(W_p q_t))               (§3.2, eq. 9)
                          a_t(s) = align(q_t, k_s) · exp(-(s - p_t)² / (2σ²)),  σ = D / 2    (eq. 10)

So only local-p multiplies by the Gaussian; local-m is the plain softmax inside its window, and its row of
weights sums to 1. Following the paper, local-p's product is not renormalised: its row sums to at most 1.
``weights(..., gaussian=True)`` (the default) computes eq. 10; ``gaussian=False`` computes eq. 7 in the
window. The Gaussian with p_t = t ("local-m with a Gaussian window", as study note 000 can be read) is the
course's labelled variant: ``weights(scores, monotonic_position(...), D, mask)``.

Past the end of the source: a target may be longer than its source, and p_t = t then leaves it. The paper
leaves that case open; ``monotonic_position`` clips the centre to the last real position,
p_t = min(t, S_b - 1) for an example of S_b words, so the window keeps the last ⌊D⌋ + 1 words in view and
never empties (an empty window would leave a row of zeros and a zero context, see ``masked_softmax``).
Local-p's centre lies in (0, S_b) by construction and is not clipped (a clip would cut the predictor's
gradient); with D >= 1 its window always holds a real position.
"""

from __future__ import annotations

import math
import numbers

import torch

from attnlib import _checks
from attnlib.masking import _compute_dtype, masked_softmax
from attnlib.scores import project


def _half_width(D: object) -> float:
    if isinstance(D, bool) or not isinstance(D, numbers.Real):
        raise TypeError(f"D must be a number (the window half-width), got {type(D).__name__}")
    if not (math.isfinite(D) and D > 0):
        raise ValueError(f"D must be a finite number > 0 (the window half-width), got {D}")
    return float(D)


def _gaussian_and_window(p: torch.Tensor, S: int, D: float) -> tuple[torch.Tensor, torch.Tensor]:
    """Gaussian ``(..., T, S)`` in the compute dtype (0 outside the window) and the window as a bool mask."""
    compute = _compute_dtype(p.dtype)  # (s - p)² overflows float16 beyond s - p = 256
    positions = torch.arange(S, device=p.device, dtype=compute)  # (S,)
    offset = positions - p.to(compute).unsqueeze(-1)  # (S,) - (..., T, 1) -> (..., T, S)
    inside = offset.abs() <= D  # (..., T, S)
    sigma = D / 2
    bump = torch.exp(-offset.square() / (2 * sigma**2))
    # where() (not multiplication by the window) keeps the gradient outside the window exactly zero.
    return torch.where(inside, bump, torch.zeros_like(bump)), inside


def gaussian(p: torch.Tensor, S: int, D: float) -> torch.Tensor:
    """exp(-(s - p_t)² / (2 sigma²)) for |s - p_t| <= D, else 0; sigma = D / 2  (Luong et al. 2015, eq. 10).

    Args:
        p: ``(..., T)`` real-valued centres p_t.
        S: source length; positions s = 0 … S-1.
        D: window half-width, > 0.

    Returns:
        ``(..., T, S)`` in the dtype of ``p``; equal to 1 at s = p_t when p_t is an integer.
    """
    _checks.tensor(p, "p", min_dim=1)
    S = _checks.positive_int(S, "S")
    D = _half_width(D)
    bump, _ = _gaussian_and_window(p, S, D)
    return bump.to(p.dtype)


def predict_position(
    query: torch.Tensor, W_p: torch.Tensor, v_p: torch.Tensor, lengths: torch.Tensor | int
) -> torch.Tensor:
    """p_t = S_b · sigmoid(v_pᵀ tanh(W_p q_t))  (local-p, Luong et al. 2015, §3.2, eq. 9).

    S_b is each example's own (unpadded) source length, so the centre never falls in the padding; p_t lies
    in (0, S_b).

    Args:
        query: ``(B, T, d)`` decoder states q_t (any leading dims ``(..., T, d)``).
        W_p: ``(A, d)``.
        v_p: ``(A,)``.
        lengths: ``(B,)`` integer source lengths (shape ``query.shape[:-2]``), or one int for all.

    Returns:
        p ``(B, T)`` in the dtype of ``query``.
    """
    _checks.sequences(query=query)
    _checks.matrix(W_p, "W_p", "(A, d)")
    _checks.vector(v_p, "v_p", W_p.shape[0], f"W_p of shape {_checks.shape_str(W_p)}", like=("query", query))
    if isinstance(lengths, int) and not isinstance(lengths, bool):
        lengths = torch.full(query.shape[:-2], lengths, device=query.device)
    lengths = _checks.lengths(lengths, one_per=("query", query))
    hidden = torch.tanh(project(query, W_p, "query", "W_p"))  # (..., T, A)
    fraction = torch.sigmoid(hidden @ v_p)  # (..., T, A) @ (A,) -> (..., T)
    return lengths.to(query.dtype).unsqueeze(-1) * fraction  # (..., 1) * (..., T) -> (..., T)


def monotonic_position(
    T: int, lengths: torch.Tensor | int, t0: int = 0, dtype: torch.dtype = torch.float32
) -> torch.Tensor:
    """p_t = min(t, S_b - 1) for t = t0 … t0+T-1  (local-m, Luong et al. 2015, §3.2: p_t = t, clipped).

    The paper sets p_t = t; a target longer than its source would then carry the window past the last word
    (and, beyond S_b - 1 + D, off the source altogether). Clipping the centre to each example's last real
    position keeps the window on the source: at every step past the end it covers the last words.

    Args:
        T: number of steps.
        lengths: ``(B,)`` integer source lengths S_b (each >= 1), or one int for all.
        t0: the first step's index (0-based), for a decoder that takes one step at a time.
        dtype: floating dtype of the result (that of the scores it will centre).

    Returns:
        p ``(B, T)`` (``(T,)`` for an int ``lengths``) with values in 0 … S_b - 1.
    """
    T = _checks.positive_int(T, "T")
    t0 = _checks.positive_int(t0, "t0", allow_zero=True)
    if not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating point dtype, got {dtype}")
    if isinstance(lengths, int) and not isinstance(lengths, bool):
        lengths = torch.tensor(lengths)
    lengths = _checks.lengths(lengths)
    if lengths.numel() > 0 and bool((lengths < 1).any()):
        raise ValueError(f"lengths must be >= 1 (a source needs a word to attend to), got {lengths.tolist()}")
    steps = torch.arange(t0, t0 + T, device=lengths.device)  # (T,): t
    last = (lengths - 1).unsqueeze(-1)  # (..., 1): S_b - 1
    return torch.minimum(steps, last).to(dtype)  # (T,) vs (..., 1) -> (..., T)


def weights(
    scores: torch.Tensor,
    p: torch.Tensor,
    D: float,
    mask: torch.Tensor | None = None,
    *,
    gaussian: bool = True,
) -> torch.Tensor:
    """Local attention weights: softmax of ``scores`` over the window (and mask), times ``gaussian(p, S, D)``.

        align_t(s) = softmax_{s' : |s' - p_t| <= D, mask}(e_t)_s           the softmax in the window (eq. 7)
        gaussian=True  (local-p, eq. 10):  a_t(s) = align_t(s) · exp(-(s - p_t)² / (2σ²)),  σ = D / 2
        gaussian=False (local-m, eq. 7):   a_t(s) = align_t(s)

    Args:
        scores: ``(..., T, S)`` logits.
        p: centres, broadcastable to ``(..., T)``: ``monotonic_position(...)`` for local-m,
            ``predict_position(...)`` for local-p.
        D: window half-width, > 0.
        mask: bool, True = attend, as in ``attnlib.masked_softmax`` (a padding mask ``(B, S)`` works).
        gaussian: multiply by the Gaussian (local-p; the default) or not (the paper's local-m).

    Returns:
        weights ``(..., T, S)``, zero outside the window and the mask. With the Gaussian they are not
        renormalised (Luong et al. 2015): a row sums to at most 1. Without it a row sums to 1, unless the
        window holds no attended position (then it is all zeros, never NaN).
    """
    _checks.tensor(scores, "scores", min_dim=2)
    _checks.same_dtype(_checks.tensor(p, "p", min_dim=1), "p", scores, "scores")
    D = _half_width(D)
    gaussian = _checks.flag(gaussian, "gaussian")
    T_of_scores = f"the (..., T) = {tuple(scores.shape[:-1])} of scores of shape {_checks.shape_str(scores)}"
    _checks.broadcasts_to(p, "p", scores.shape[:-1], T_of_scores)
    bump, inside = _gaussian_and_window(p, scores.shape[-1], D)  # (..., T, S) each
    # Full shape, so that masked_softmax cannot mistake a (T, S) window for a (B, S) padding mask.
    attend_here = torch.broadcast_to(inside, scores.shape)
    if mask is not None:
        attend_here = attend_here & _checks.mask(mask, scores)
    in_window = masked_softmax(scores, attend_here)  # align(q_t, k_s) over the window: eq. 7
    return in_window * bump.to(scores.dtype) if gaussian else in_window
