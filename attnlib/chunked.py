"""Chunked attention with an online softmax: the context without ever holding all the scores at once.

The reference ``attend(score_fn(query, keys), values, mask)`` builds every score e_{t,s} in one piece: a
``(..., T, S)`` tensor, and for additive scores a ``(..., T, S, A)`` tensor before it (``scores.additive``).
Here the keys are visited ``chunk_size`` positions at a time and the softmax is accumulated on the way
(Milakov & Gimelshein 2018, "Online normalizer calculation for softmax", §3; the same recurrence is the
core of FlashAttention, Dao et al. 2022, §3.1). For each chunk J of source positions, with scores
e_{t,J} = score_fn(q_t, k_J):

    m' = max(m, max_{s in J} e_{t,s})                                  running maximum
    l' = l · exp(m - m') + Σ_{s in J} exp(e_{t,s} - m')                 running normaliser
    n' = n · exp(m - m') + Σ_{s in J} exp(e_{t,s} - m') v_s             running numerator

and at the end c_t = n / l = Σ_s softmax(e_t)_s v_s. The factor exp(m - m') moves what was summed under
the old maximum to the new one, so every exponent stays <= 0 (no overflow for scores of 1e4) and the result
is exact, not an approximation. Peak memory: one chunk of scores ``(..., T, chunk_size)`` (and of the
additive ``(..., T, chunk_size, A)``) instead of all S positions.

Autograd still keeps every chunk's intermediates for the backward pass. ``recompute=True`` wraps each chunk
in ``torch.utils.checkpoint``, which keeps only the chunk's inputs and recomputes its scores during the
backward pass (FlashAttention recomputes the same way, Dao et al. 2022, §3.1 "Recomputation").
Lesson: chapter 7, "The matrix form: fast, batched attention".
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch.utils.checkpoint import checkpoint

from attnlib import _checks
from attnlib.masking import _compute_dtype

ScoreFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _step(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None,
    m: torch.Tensor,
    l: torch.Tensor,
    n: torch.Tensor,
    score_fn: ScoreFn,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One chunk of the online softmax: (m, l, n) -> (m', l', n') for keys / values of this chunk only."""
    e = score_fn(query, keys)  # (..., T, c)
    T, c = query.shape[-2], keys.shape[-2]
    if not isinstance(e, torch.Tensor) or e.shape[-2:] != (T, c):
        got = _checks.shape_str(e) if isinstance(e, torch.Tensor) else type(e).__name__
        raise ValueError(
            f"score_fn must return scores (..., T, chunk) = (..., {T}, {c}) for query shape "
            f"{_checks.shape_str(query)} and a keys chunk of shape {_checks.shape_str(keys)}, got {got}"
        )
    e = e.to(m.dtype)
    if mask is not None:
        # A finite fill, as in masked_softmax: a chunk with nothing to attend to keeps finite exponents.
        e = e.masked_fill(~mask, torch.finfo(m.dtype).min)
    # The result does not depend on m (it cancels in n / l), so m needs no gradient (and no graph).
    with torch.no_grad():
        m_new = torch.maximum(m, e.amax(dim=-1, keepdim=True))  # (..., T, 1)
    p = torch.exp(e - m_new)  # (..., T, c), every exponent <= 0
    if mask is not None:
        p = p.masked_fill(~mask, 0.0)  # exactly 0 weight, and no gradient, for masked positions
    rescale = torch.exp(m - m_new)  # (..., T, 1): from the old maximum to the new one
    l = l * rescale + p.sum(dim=-1, keepdim=True)  # (..., T, 1)
    n = n * rescale + p @ values.to(m.dtype)  # (..., T, c) @ (..., c, dv) -> (..., T, dv)
    return m_new, l, n


def chunked_attend(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    score_fn: ScoreFn,
    mask: torch.Tensor | None = None,
    chunk_size: int = 64,
    recompute: bool = False,
) -> torch.Tensor:
    """context = attend(score_fn(query, keys), values, mask)[0], computed over chunks of the keys.

        c_t = Σ_s softmax(e_t)_s v_s,   e_{t,s} = score_fn(q_t, k_s),   one chunk of s at a time

    Args:
        query: ``(..., T, dq)``, e.g. the decoder states.
        keys: ``(..., S, dk)``; values: ``(..., S, dv)`` (keys = values = H in the RNN models).
        score_fn: ``score_fn(query, keys_chunk) -> scores (..., T, chunk)``, any score of ``attnlib.scores``:
            ``scores.dot``, ``scores.scaled_dot``, ``lambda q, k: scores.additive(q, k, W_q, W_k, v)``, ...
        mask: bool, True = attend, broadcastable to ``(..., T, S)``; a padding mask ``(B, S)`` works.
        chunk_size: source positions per chunk (any positive int; larger than S means one chunk).
        recompute: recompute each chunk's scores in the backward pass (``torch.utils.checkpoint``) instead
            of keeping them, so that training memory, too, holds no more than one chunk of scores.

    Returns:
        context ``(..., T, dv)`` with the dtype of ``query``. The weights are never formed, so they are not
        returned (as in ``attnlib.fast``). A row with nothing to attend to gets a zero context and zero
        gradients.
    """
    batch = _checks.sequences(query=query, keys=keys, values=values)
    _checks.positions(values, "values", keys.shape[-2], "keys", keys)
    if not callable(score_fn):
        raise TypeError(f"score_fn must be callable as score_fn(query, keys), got {type(score_fn).__name__}")
    chunk_size = _checks.positive_int(chunk_size, "chunk_size")
    _checks.flag(recompute, "recompute")

    T, S, dv = query.shape[-2], keys.shape[-2], values.shape[-1]
    if mask is not None:
        scores_shape = torch.Size((*batch, T, S))  # the shape of all scores, never formed
        mask = torch.broadcast_to(_checks.mask(mask, scores_shape), scores_shape)  # (..., T, S), a view

    compute = _compute_dtype(query.dtype)  # float32 sums for float16 / bfloat16, as masked_softmax does
    like = {"dtype": compute, "device": query.device}
    m = torch.full((*batch, T, 1), torch.finfo(compute).min, **like)  # running maximum (finite: no inf - inf)
    l = torch.zeros(*batch, T, 1, **like)  # running normaliser Σ exp(e - m)
    n = torch.zeros(*batch, T, dv, **like)  # running numerator Σ exp(e - m) v
    use_checkpoint = recompute and torch.is_grad_enabled()
    for start in range(0, S, chunk_size):
        chunk = slice(start, start + chunk_size)
        args = (query, keys[..., chunk, :], values[..., chunk, :], None if mask is None else mask[..., chunk])
        if use_checkpoint:
            m, l, n = checkpoint(_step, *args, m, l, n, score_fn, use_reentrant=False)
        else:
            m, l, n = _step(*args, m, l, n, score_fn)

    # l >= 1 wherever something was attended (the maximum contributes exp(0)); l = 0 means a fully masked
    # row, whose n is 0 too: divide by 1 there, so the context is 0 and the gradient finite (never 0 / 0).
    context = n / torch.where(l > 0, l, torch.ones_like(l))  # (..., T, dv)
    return context.to(query.dtype)
