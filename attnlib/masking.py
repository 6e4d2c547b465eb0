"""Scores -> weights -> context: the masked softmax and the weighted sum that every attention shares.

    alpha_t = softmax(e_t)                 (Bahdanau et al. 2015, §3.1, eq. 6; Luong et al. 2015, §3.1, eq. 7)
    c_t     = sum_s alpha_{t,s} h_s        (Bahdanau et al. 2015, §3.1, eq. 5)

Masks are bool with True = attend, as in ``torch.nn.functional.scaled_dot_product_attention``.
A padding mask ``(B, S)`` can be passed directly for scores ``(B, T, S)``; see ``attnlib._checks.mask`` for
how it is told apart from a ``(T, S)`` mask.
"""

from __future__ import annotations

import torch

from attnlib import _checks


def _compute_dtype(dtype: torch.dtype) -> torch.dtype:
    """float16 / bfloat16 are upcast to float32 for exp and sums, the way fused kernels do, then cast back."""
    return torch.float32 if dtype in (torch.float16, torch.bfloat16) else dtype


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dim (source positions s); masked entries are exactly 0.

        alpha_{t,s} = exp(e_{t,s}) / sum_{s' attended} exp(e_{t,s'})   for attended s, else 0

    Args:
        scores: ``(..., T, S)`` (or ``(S,)``) logits e_{t,s}.
        mask: bool, True = attend, broadcastable to ``scores``; a padding mask ``(B, S)`` is accepted for
            scores ``(B, T, S)``.

    Returns:
        weights ``(..., T, S)`` with the dtype of ``scores``. A row with nothing to attend to is all zeros,
        with zero gradient (never NaN).
    """
    _checks.tensor(scores, "scores", min_dim=1)
    compute = scores.to(_compute_dtype(scores.dtype))
    if mask is None:
        # softmax subtracts the row max first, so scores of 1e4 do not overflow.
        return torch.softmax(compute, dim=-1).to(scores.dtype)

    mask = _checks.mask(mask, scores)
    # A finite fill (not -inf): a fully masked row becomes a row of equal finite logits, whose softmax is
    # finite (uniform); -inf everywhere would give exp(-inf - -inf) = NaN. The second masked_fill then zeros
    # those weights; masked_fill passes no gradient to filled entries, so their gradient is exactly 0.
    fill = torch.finfo(compute.dtype).min
    logits = compute.masked_fill(~mask, fill)
    weights = torch.softmax(logits, dim=-1).masked_fill(~mask, 0.0)
    return weights.to(scores.dtype)


def attend(
    scores: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Weights from scores, then the context as their weighted sum of values.

        alpha_t = masked_softmax(e_t),   c_t = sum_s alpha_{t,s} v_s = Vᵀ alpha_t

    Args:
        scores: ``(..., T, S)`` logits, e.g. from ``attnlib.scores``.
        values: ``(..., S, dv)``; in the RNN models values = keys = H, the encoder states.
        mask: as in ``masked_softmax``.

    Returns:
        ``(context (..., T, dv), weights (..., T, S))``; a fully masked row gives zero weights and a zero
        context.
    """
    _checks.sequences(scores=scores, values=values)
    _checks.positions(values, "values", scores.shape[-1], "scores", scores)
    weights = masked_softmax(scores, mask)  # (..., T, S)
    return weighted_sum(weights, values), weights


def weighted_sum(weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """The context: the values weighted by the attention weights, however the weights were made.

        c_t = sum_s alpha_{t,s} v_s = Vᵀ alpha_t        (Bahdanau et al. 2015, §3.1, eq. 5)

    ``attend`` uses it after a softmax; Luong's local attention after its Gaussian window.

    Args:
        weights: ``(..., T, S)``.
        values: ``(..., S, dv)``.

    Returns:
        context ``(..., T, dv)``.
    """
    _checks.sequences(weights=weights, values=values)
    _checks.positions(values, "values", weights.shape[-1], "weights", weights)
    return weights @ values  # (..., T, S) @ (..., S, dv) -> (..., T, dv)


def lengths_to_mask(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """Padding mask from lengths: ``mask[b, s] = s < lengths[b]`` (True = attend, 0-based s).

    Args:
        lengths: ``(B,)`` integer tensor with 0 <= lengths[b] <= S (any leading shape ``(...)`` works).
        S: the padded source length.

    Returns:
        bool ``(B, S)`` on the device of ``lengths``.
    """
    S = _checks.positive_int(S, "S", allow_zero=True)
    lengths = _checks.lengths(lengths, "lengths", max_len=S)
    positions = torch.arange(S, device=lengths.device)  # (S,)
    return positions < lengths.unsqueeze(-1)  # (S,) < (..., 1) -> (..., S)
