"""Additive attention's fast path: an online softmax over key chunks whose backward pass recomputes.

The reference is three calls: ``attend(scores.additive(q, k, W_q, W_k, v), values, mask)``. It forms the
hidden states h_{t,s} = tanh(W_q q_t + W_k k_s), a ``(B, T, S, A)`` tensor, and autograd keeps it for the
backward pass: 78 MiB in float32 at B=32, T=S=50, A=256, for a context of 0.3 MiB. Here:

    forward    the keys are visited ``chunk_size`` at a time, with the online softmax of ``attnlib.chunked``
               (running max m_t and sum l_t); only one chunk of h exists at once. Saved for the backward
               pass: the projections W_q q, W_k k, v, the values, the context and (m_t, l_t) per row (and the
               weights when they are returned: an output, so no extra memory).
    backward   h and e of each chunk are recomputed from the projections, alpha = exp(e - m) / l from the
               saved statistics, and the gradients follow (FlashAttention's backward, Dao et al. 2022,
               §3.1 and Algorithm 4, with the additive score in place of the dot product):

        dV       = alphaᵀ dC                                 dC: gradient of the context (B, T, dv)
        dalpha   = dC Vᵀ (+ the gradient of the weights, when they are returned and used)
        de_{t,s} = alpha_{t,s} (dalpha_{t,s} - D_t),   D_t = Σ_s alpha_{t,s} dalpha_{t,s} = dC_t · c_t (+ …)
        dv       = Σ_{t,s} de_{t,s} h_{t,s}
        dqp_t    = v ⊙ Σ_s de_{t,s} (1 - h²_{t,s}),   dkp_s = v ⊙ Σ_t de_{t,s} (1 - h²_{t,s})

A fully masked row gets zero weights, a zero context and zero gradients, as ``attnlib.masked_softmax`` gives.
Tested equal to the reference, values and gradients (``tests/chunked``); ``benchmarks/additive.py`` measures
memory and time. Lesson: chapter 7, "The matrix form: fast, batched attention".
"""

from __future__ import annotations

import torch

from attnlib import _checks, scores
from attnlib.masking import _compute_dtype

# Hidden states per chunk when chunk_size is None: 8 MiB in float32, measured fastest on a 2-core AMD EPYC
# (B=32, T=S=50, A=256: 5 key positions per chunk).
CHUNK_ELEMENTS = 2**21


def _hidden(query_proj: torch.Tensor, keys_proj: torch.Tensor) -> torch.Tensor:
    """h = tanh(qp_t + kp_s) for one chunk: ``(N, T, A), (N, c, A) -> (N, T, c, A)``, made in place."""
    return torch.add(query_proj.unsqueeze(2), keys_proj.unsqueeze(1)).tanh_()


def _weights(e, m, l, mask) -> torch.Tensor:
    """alpha = exp(e - m) / l from the row statistics; exactly 0 where masked (and in empty rows)."""
    alpha = torch.exp(e - m) / torch.where(l > 0, l, torch.ones_like(l))  # (N, T, c)
    return alpha if mask is None else alpha.masked_fill(~mask, 0.0)


class _AdditiveAttention(torch.autograd.Function):
    """(query_proj (N, T, A), keys_proj (N, S, A), v (A,), values (N, S, dv), mask (N, T, S) or None)
    -> (context (N, T, dv), weights (N, T, S) or None). All in one compute dtype."""

    @staticmethod
    def forward(ctx, query_proj, keys_proj, v, values, mask, chunk_size, need_weights):
        N, T, S = query_proj.shape[0], query_proj.shape[1], keys_proj.shape[1]
        m = query_proj.new_full((N, T, 1), torch.finfo(query_proj.dtype).min)  # running max (finite)
        l = query_proj.new_zeros(N, T, 1)  # running Σ exp(e - m)
        n = values.new_zeros(N, T, values.shape[-1])  # running Σ exp(e - m) v_s
        all_scores = []
        for start in range(0, S, chunk_size):
            c = slice(start, start + chunk_size)
            e = _hidden(query_proj, keys_proj[:, c]) @ v  # (N, T, c, A) @ (A,) -> (N, T, c)
            if mask is not None:
                e = e.masked_fill(~mask[..., c], torch.finfo(e.dtype).min)
            m_new = torch.maximum(m, e.amax(dim=-1, keepdim=True))  # (N, T, 1)
            p = torch.exp(e - m_new)  # (N, T, c), every exponent <= 0
            if mask is not None:
                p = p.masked_fill(~mask[..., c], 0.0)
            rescale = torch.exp(m - m_new)  # from the old maximum to the new one
            l = l * rescale + p.sum(dim=-1, keepdim=True)
            n = n * rescale + p @ values[:, c]  # (N, T, c) @ (N, c, dv)
            m = m_new
            if need_weights:
                all_scores.append(e)
        context = n / torch.where(l > 0, l, torch.ones_like(l))  # (N, T, dv); empty rows: n = 0, so 0
        weights = _weights(torch.cat(all_scores, dim=-1), m, l, mask) if need_weights else None
        ctx.chunk_size = chunk_size
        ctx.set_materialize_grads(False)  # an unused weights output sends None, not a (N, T, S) of zeros
        ctx.save_for_backward(query_proj, keys_proj, v, values, mask, context, weights, m, l)
        return context, weights

    @staticmethod
    def backward(ctx, d_context, d_weights):
        query_proj, keys_proj, v, values, mask, context, weights, m, l = ctx.saved_tensors
        N, T, A = query_proj.shape
        if d_context is None:
            d_context = context.new_zeros(context.shape)
        D = (d_context * context).sum(-1, keepdim=True)  # (N, T, 1): Σ_s alpha dalpha through the context
        if d_weights is not None:
            D = D + (weights * d_weights).sum(-1, keepdim=True)
        d_query_proj = torch.zeros_like(query_proj)
        d_keys_proj = torch.empty_like(keys_proj)
        d_values = torch.empty_like(values)
        d_v = torch.zeros_like(v)
        for start in range(0, keys_proj.shape[1], ctx.chunk_size):
            c = slice(start, start + ctx.chunk_size)
            h = _hidden(query_proj, keys_proj[:, c])  # (N, T, c, A), recomputed
            alpha = _weights(h @ v, m, l, None if mask is None else mask[..., c])  # (N, T, c)
            d_alpha = d_context @ values[:, c].transpose(-2, -1)  # (N, T, dv) @ (N, dv, c)
            if d_weights is not None:
                d_alpha = d_alpha + d_weights[..., c]
            d_e = alpha * (d_alpha - D)  # (N, T, c): the softmax's backward
            d_values[:, c] = alpha.transpose(-2, -1) @ d_context  # (N, c, T) @ (N, T, dv)
            d_v += d_e.reshape(-1) @ h.reshape(-1, A)  # Σ_{t,s} de_{t,s} h_{t,s}
            h2 = h.square_()  # (N, T, c, A), h² in place: tanh' = 1 - h²
            d_query_proj += v * (d_e.sum(-1, keepdim=True) - (d_e.unsqueeze(-2) @ h2).squeeze(-2))
            de_h2 = h2.mul_(d_e.unsqueeze(-1)).sum(1)  # (N, c, A): Σ_t de_{t,s} h²_{t,s}, h2 used up in place
            d_keys_proj[:, c] = v * (d_e.sum(1).unsqueeze(-1) - de_h2)
        return d_query_proj, d_keys_proj, d_v, d_values, None, None, None


def additive_attend_from_projections(
    query_proj: torch.Tensor,
    keys_proj: torch.Tensor,
    v: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    chunk_size: int | None = None,
    need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``attend(scores.additive_from_projections(query_proj, keys_proj, v), values, mask)``, chunked.

        e_{t,s} = vᵀ tanh(qp_t + kp_s),   alpha_t = softmax(e_t),   c_t = Σ_s alpha_{t,s} v_s

    Args:
        query_proj: ``(..., T, A)``, W_q q_t; keys_proj: ``(..., S, A)``, W_k k_s; v: ``(A,)``.
        values: ``(..., S, dv)``; mask: bool, True = attend, broadcastable to ``(..., T, S)``.
        chunk_size: key positions per chunk (the hidden states of one chunk are ``(..., T, chunk, A)``);
            None: as many as keep one chunk within ``CHUNK_ELEMENTS`` (a whole sentence for one query
            step of a decoder, where the loop would cost more than it saves).
        need_weights: also return the weights ``(..., T, S)`` (differentiable); False skips them.

    Returns:
        ``(context (..., T, dv), weights (..., T, S) or None)``, as ``attnlib.attend`` returns them.
    """
    batch = _checks.sequences(query_proj=query_proj, keys_proj=keys_proj, values=values)
    _checks.same_features(keys_proj, "keys_proj", query_proj, "query_proj")
    _checks.positions(values, "values", keys_proj.shape[-2], "keys_proj", keys_proj)
    A = query_proj.shape[-1]
    _checks.vector(v, "v", A, "the attention size A of query_proj", like=("query_proj", query_proj))
    if chunk_size is None:  # one chunk of hidden states (N, T, c, A) within CHUNK_ELEMENTS
        chunk_size = max(1, CHUNK_ELEMENTS // max(1, batch.numel() * query_proj.shape[-2] * A))
    chunk_size = _checks.positive_int(chunk_size, "chunk_size")
    _checks.flag(need_weights, "need_weights")
    T, S, dv = query_proj.shape[-2], keys_proj.shape[-2], values.shape[-1]
    if mask is not None:
        scores_shape = torch.Size((*batch, T, S))
        mask = torch.broadcast_to(_checks.mask(mask, scores_shape), scores_shape).reshape(-1, T, S)
    compute = _compute_dtype(query_proj.dtype)  # float32 sums for float16 / bfloat16

    def flat(x: torch.Tensor) -> torch.Tensor:  # (..., n, d) -> (N, n, d), N the broadcast batch
        return x.to(compute).expand(*batch, *x.shape[-2:]).reshape(-1, *x.shape[-2:])

    context, weights = _AdditiveAttention.apply(
        flat(query_proj), flat(keys_proj), v.to(compute), flat(values), mask, chunk_size, need_weights
    )
    context = context.reshape(*batch, T, dv).to(query_proj.dtype)  # (..., T, dv)
    return context, None if weights is None else weights.reshape(*batch, T, S).to(query_proj.dtype)


def additive_attend(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    v: torch.Tensor,
    mask: torch.Tensor | None = None,
    chunk_size: int | None = None,
    need_weights: bool = True,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """``attend(scores.additive(query, keys, W_q, W_k, v), values, mask)`` without storing the hidden states.

        e_{t,s} = vᵀ tanh(W_q q_t + W_k k_s)   (Bahdanau et al. 2015, §3.1 and appendix A.1.2)

    ``W_q (A, dq)``, ``W_k (A, dk)``, ``v (A,)``; other arguments as in ``additive_attend_from_projections``.
    Luong's concat score is this with W = [W_q W_k] (``scores.concat``).
    """
    _checks.sequences(query=query, keys=keys)
    _checks.matrix(W_q, "W_q", "(A, dq)")
    _checks.same_rows(_checks.matrix(W_k, "W_k", "(A, dk)"), "W_k", W_q, "W_q", "the attention size A")
    query_proj = scores.project(query, W_q, "query", "W_q")  # (..., T, A)
    keys_proj = scores.project(keys, W_k, "keys", "W_k")  # (..., S, A)
    return additive_attend_from_projections(query_proj, keys_proj, v, values, mask, chunk_size, need_weights)
