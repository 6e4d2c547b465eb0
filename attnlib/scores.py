"""Score functions e_{t,s} = score(q_t, k_s): one function per equation, logits of shape (..., T, S).

Shapes: ``query (..., T, dq)``, ``keys (..., S, dk)``; leading batch dims broadcast, and unbatched ``(T, d)``
inputs work too. Matrices apply as ``W x`` and have shape ``(out, in)``, as written in the equations.
In the RNN models the query is the decoder state (s_{t-1} for Bahdanau, s_t for Luong) and keys = H.
"""

from __future__ import annotations

import math

import torch

from attnlib import _checks


def project(x: torch.Tensor, W: torch.Tensor, x_name: str = "x", W_name: str = "W") -> torch.Tensor:
    """``W x`` for every row of ``x (..., n, d_in)`` with ``W (d_out, d_in)`` -> ``(..., n, d_out)``."""
    _checks.tensor(x, x_name, min_dim=1)
    _checks.matrix(W, W_name, "(out, in)", cols=(x_name, x))
    return x @ W.T  # (..., n, d_in) @ (d_in, d_out) -> (..., n, d_out)


def dot(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """e_{t,s} = q_tᵀ k_s  (Luong et al. 2015, §3.1, "dot"; unnumbered, after eq. 7). Needs dq == dk."""
    _checks.sequences(query=query, keys=keys)
    _checks.same_features(keys, "keys", query, "query")
    return query @ keys.transpose(-2, -1)  # (..., T, d) @ (..., d, S) -> (..., T, S)


def scaled_dot(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """e_{t,s} = q_tᵀ k_s / sqrt(d)  (Vaswani et al. 2017, §3.2.1, eq. 1). Needs dq == dk == d."""
    _checks.sequences(query=query, keys=keys)
    _checks.same_features(keys, "keys", query, "query")
    # Scale the query before the product (as fused kernels do): same value, but the float16 product cannot
    # overflow where the scaled result would not.
    scaled = query * (1.0 / math.sqrt(query.shape[-1]))
    return scaled @ keys.transpose(-2, -1)  # (..., T, S)


def general(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    """e_{t,s} = q_tᵀ W k_s, ``W (dq, dk)``  (Luong et al. 2015, §3.1, "general"; unnumbered)."""
    _checks.sequences(query=query, keys=keys)
    _checks.matrix(W, "W", "(dq, dk)", rows=("query", query), cols=("keys", keys))
    return (query @ W) @ keys.transpose(-2, -1)  # (..., T, dk) @ (..., dk, S) -> (..., T, S)


def additive_from_projections(
    query_proj: torch.Tensor, keys_proj: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """e_{t,s} = vᵀ tanh(qp_t + kp_s), from already projected ``qp = W_q q`` and ``kp = W_k k``.

    Lets a Bahdanau decoder compute ``U h_s`` once per sentence instead of once per step.

    Args:
        query_proj: ``(..., T, A)``, W_q q_t.
        keys_proj: ``(..., S, A)``, W_k k_s.
        v: ``(A,)``.

    Memory: the broadcast sum ``(..., T, S, A)`` is materialised before tanh; for B=64, T=S=100, A=256 in
    float32 that is 655 MB (plus as much again kept for the backward pass). Score a few steps at a time
    (T=1 in a decoder loop) when that is too much.
    """
    _checks.sequences(query_proj=query_proj, keys_proj=keys_proj)
    _checks.same_features(keys_proj, "keys_proj", query_proj, "query_proj")
    A = query_proj.shape[-1]
    _checks.vector(v, "v", A, "the attention size A of query_proj", like=("query_proj", query_proj))
    hidden = torch.tanh(query_proj.unsqueeze(-2) + keys_proj.unsqueeze(-3))  # (..., T, 1, A) + (..., 1, S, A)
    return hidden @ v  # (..., T, S, A) @ (A,) -> (..., T, S)


def additive(
    query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor, W_k: torch.Tensor, v: torch.Tensor
) -> torch.Tensor:
    """e_{t,s} = vᵀ tanh(W_q q_t + W_k k_s), ``W_q (A, dq)``, ``W_k (A, dk)``, ``v (A,)``.

    Bahdanau et al. 2015, §3.1 and appendix A.1.2: e_ij = v_aᵀ tanh(W_a s_{i-1} + U_a h_j), so
    W_q = W_a, W_k = U_a and the query is the previous decoder state s_{t-1}.
    """
    _checks.sequences(query=query, keys=keys)
    _checks.matrix(W_q, "W_q", "(A, dq)")
    _checks.same_rows(_checks.matrix(W_k, "W_k", "(A, dk)"), "W_k", W_q, "W_q", "the attention size A")
    query_proj = project(query, W_q, "query", "W_q")  # (..., T, A)
    keys_proj = project(keys, W_k, "keys", "W_k")  # (..., S, A)
    return additive_from_projections(query_proj, keys_proj, v)


def concat(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """e_{t,s} = vᵀ tanh(W [q_t; k_s]), ``W (A, dq + dk)``  (Luong et al. 2015, §3.1, "concat"; unnumbered).

    Since W [q; k] = W_q q + W_k k with W = [W_q W_k] (the [W : C] identity of note 000), this is ``additive``
    with W split after its first dq columns.
    """
    _checks.sequences(query=query, keys=keys)
    dq, dk = query.shape[-1], keys.shape[-1]
    _checks.input_size(_checks.matrix(W, "W", "(A, dq + dk)"), "W", dq + dk, f"[query; keys] has {dq} + {dk}")
    W_q, W_k = W[:, :dq], W[:, dq:]  # (A, dq), (A, dk)
    return additive(query, keys, W_q, W_k, v)


def cosine(query: torch.Tensor, keys: torch.Tensor, beta: float | torch.Tensor = 1.0) -> torch.Tensor:
    """e_{t,s} = beta · q_tᵀ k_s / (|q_t| |k_s|)  (content-based addressing, Graves et al. 2014, §3.3.1).

    ``beta`` (a number or a 0-dim tensor) sharpens the softmax. A zero vector has cosine 0 with everything.
    """
    _checks.sequences(query=query, keys=keys)
    _checks.same_features(keys, "keys", query, "query")
    _checks.scalar(beta, "beta")
    # Norms in float32 for half types: squares of moderately large float16 entries overflow.
    compute = torch.float32 if query.dtype in (torch.float16, torch.bfloat16) else query.dtype
    q, k = query.to(compute), keys.to(compute)
    eps = torch.finfo(compute).tiny  # guards 0/0 for zero vectors without biasing non-zero norms
    q_unit = q / q.norm(dim=-1, keepdim=True).clamp_min(eps)  # (..., T, d)
    k_unit = k / k.norm(dim=-1, keepdim=True).clamp_min(eps)  # (..., S, d)
    cos = q_unit @ k_unit.transpose(-2, -1)  # (..., T, S)
    return (beta * cos).to(query.dtype)


def location(query: torch.Tensor, W: torch.Tensor, S: int) -> torch.Tensor:
    """e_t = (W q_t)[:S], ``W (S_max, dq)``: logits over source positions only, not their content.

    Luong et al. 2015, §3.1, eq. 8 ("location": a_t = softmax(W_a h_t)). Row s of W scores position s; only
    the first S rows are used for a source of length S <= S_max (their footnote 6).
    """
    _checks.sequences(query=query)
    _checks.matrix(W, "W", "(S_max, dq)", cols=("query", query))
    S = _checks.at_most(_checks.positive_int(S, "S"), "S", W.shape[0], f"W has only {W.shape[0]} rows")
    return project(query, W[:S], "query", "W")  # (..., T, S)
