"""Scaled dot-product attention between two sequences, its multi-head form, its masks and its KV cache.

    cross_attention     queries from the states Y, keys and values from the memory M (§3.2.1, §3.2.3)
    self_attention      the same with M = X: a sequence attends to itself
    causal_mask         (T, T) bool, True where s <= t: step t sees itself and the past only (§3.2.3)
    MultiHeadAttention  h heads of size d_model / h, concatenated, then W_o (§3.2.2); memory=None is
                        self-attention; a KVCache makes incremental decoding; fused=True the fused kernel
    KVCache             the keys and values of the positions decoded so far, reused at every later step

Vaswani et al. 2017, §3.2.3: "In encoder-decoder attention layers, the queries come from the previous decoder
layer, and the memory keys and values come from the output of the encoder"; in self-attention "all of the
keys, values and queries come from the same place". One implementation serves both: self-attention is
cross-attention with memory = x. The weights come from ``attnlib.scores.scaled_dot`` and ``attnlib.attend``;
``fused=True`` swaps in ``attnlib.fast.scaled_dot_product_attention``, tested equal. Matrices apply as
``W x`` with shape ``(out, in)`` (the paper's X W^Q is our X W_qᵀ). Chapter 9 of the course.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib import _checks, fast, scores
from attnlib.masking import attend


def cross_attention(
    y: torch.Tensor,
    memory: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    mask: torch.Tensor | None = None,
    names: tuple[str, str] = ("y", "memory"),
) -> tuple[torch.Tensor, torch.Tensor]:
    """Positions of Y attend to the memory M (Vaswani et al. 2017, §3.2.1 eq. 1, §3.2.3):

        q_t = W_q y_t,  k_s = W_k m_s,  v_s = W_v m_s,   alpha_t = softmax(q_tᵀ k_s / sqrt(d_k)),
        c_t = sum_s alpha_{t,s} v_s;  in matrix form  softmax(Q Kᵀ / sqrt(d_k)) V  with Q = Y W_qᵀ, K = M W_kᵀ

    Args:
        y: ``(..., T, d_model)``, the querying states y_1 … y_T (the decoder's).
        memory: ``(..., S, d_model)``, the attended states m_1 … m_S (the encoder's outputs).
        W_q, W_k: ``(d_k, d_model)``; W_v: ``(d_v, d_model)``.
        mask: bool, True = attend, broadcastable to ``(..., T, S)``; the source padding mask ``(B, S)`` works.
        names: how errors name ``y`` and ``memory``.

    Returns:
        ``(context (..., T, d_v), weights (..., T, S))``; a row with no source to attend to gets zeros.
    """
    y_name, memory_name = names
    _checks.sequences(**{y_name: y, memory_name: memory})
    _checks.matrix(W_q, "W_q", "(d_k, d_model)")
    _checks.same_rows(_checks.matrix(W_k, "W_k", "(d_k, d_model)"), "W_k", W_q, "W_q", "d_k")
    query = scores.project(y, W_q, y_name, "W_q")  # (..., T, d_k)
    keys = scores.project(memory, W_k, memory_name, "W_k")  # (..., S, d_k)
    values = scores.project(memory, W_v, memory_name, "W_v")  # (..., S, d_v)
    return attend(scores.scaled_dot(query, keys), values, mask)


def self_attention(
    x: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A sequence attends to itself: ``cross_attention(x, x, …)`` (Vaswani et al. 2017, §3.2.1, eq. 1).

        q_t = W_q x_t,  k_s = W_k x_s,  v_s = W_v x_s;   softmax(Q Kᵀ / sqrt(d_k)) V,  Q = X W_qᵀ, K = X W_kᵀ

    Args:
        x: ``(..., T, d_model)``, the rows x_1 … x_T.
        W_q, W_k: ``(d_k, d_model)``; W_v: ``(d_v, d_model)``.
        mask: bool, True = attend, broadcastable to ``(..., T, T)`` (e.g. ``causal_mask(T)``); a padding mask
            ``(B, T)`` works as in ``attnlib.attend``.

    Returns:
        ``(context (..., T, d_v), weights (..., T, T))``.
    """
    return cross_attention(x, x, W_q, W_k, W_v, mask, names=("x", "x"))


def shifted_causal_mask(T: int, past: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(T, past + T)`` bool: new position t (absolute past + t) sees keys s <= past + t.

    With a KV cache of ``past`` positions the keys are the cached ones followed by the T new ones."""
    return torch.ones(T, past + T, dtype=torch.bool, device=device).tril(diagonal=past)


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(T, T)`` bool, ``mask[t, s] = s <= t`` (True = attend): no step sees the future (§3.2.3)."""
    return shifted_causal_mask(_checks.positive_int(T, "T"), 0, device)


class KVCache:
    """Keys and values ``(..., h, t, hs)`` of the t positions seen so far, for incremental decoding.

    Self-attention at step t needs k_s, v_s for every s <= t, and (with the causal mask) those of earlier
    positions never change: keep them instead of recomputing the whole prefix at each step. Decoding T
    tokens then projects each position once, O(T) projections instead of O(T²). A cross-attention cache
    holds W_k m_s and W_v m_s of the memory, computed at the first step and reused after.
    """

    def __init__(self) -> None:
        self.keys: torch.Tensor | None = None  # (..., h, t, hs)
        self.values: torch.Tensor | None = None  # (..., h, t, hs)

    def __len__(self) -> int:
        """The number of positions t held."""
        return 0 if self.keys is None else self.keys.shape[-2]

    def extend(self, keys: torch.Tensor, values: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Append the new positions' keys and values ``(..., h, n, hs)``; return all ``(..., h, t+n, hs)``."""
        if self.keys is not None:
            keys = torch.cat([self.keys, keys], dim=-2)  # (..., h, t + n, hs)
            values = torch.cat([self.values, values], dim=-2)
        self.keys, self.values = keys, values
        return keys, values


class MultiHeadAttention(nn.Module):
    """MultiHead(Y, M) = Concat(head_1, …, head_h) W_oᵀ, head_i = cross_attention(Y, M, W_q^i, W_k^i, W_v^i)
    (Vaswani et al. 2017, §3.2.2-3.2.3). Head i owns rows i*hs … (i+1)*hs - 1 of W_q, W_k, W_v,
    hs = d_model / h; ``memory=None`` is self-attention (M = Y).

    ``forward(query (..., T, d_model), memory (..., S, d_model) = None, mask=None, cache=None, fused=False)
    -> (out (..., T, d_model), weights (..., h, T, S) or None with fused=True)`` (the fused kernel does not
    form the weights). ``mask``: True = attend, broadcastable to ``(..., T, S)``, a padding mask ``(B, S)``
    works. ``cache``: a ``KVCache``; in self-attention the new positions' keys and values are appended to it
    and the queries attend to all of them (the mask then covers ``(T, len(cache) + T)``); in
    cross-attention it keeps the memory's projections after the first call.
    """

    def __init__(self, d_model: int, n_heads: int, bias: bool = False):
        super().__init__()
        if d_model % n_heads:
            raise ValueError(f"d_model ({d_model}) must be divisible by n_heads ({n_heads})")
        self.n_heads, self.head_size = n_heads, d_model // n_heads
        self.W_q = nn.Linear(d_model, d_model, bias=bias)  # .weight (d_model, d_model): W_q, heads stacked
        self.W_k = nn.Linear(d_model, d_model, bias=bias)
        self.W_v = nn.Linear(d_model, d_model, bias=bias)
        self.W_o = nn.Linear(d_model, d_model, bias=bias)

    def split(self, x: torch.Tensor) -> torch.Tensor:
        """(..., T, d_model) -> (..., h, T, hs)."""
        x = x.view(*x.shape[:-1], self.n_heads, self.head_size)  # (..., T, h, hs)
        return x.transpose(-3, -2)  # (..., h, T, hs)

    def forward(
        self,
        query: torch.Tensor,
        memory: torch.Tensor | None = None,
        mask: torch.Tensor | None = None,
        cache: KVCache | None = None,
        fused: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        _checks.tensor(query, "query", min_dim=2)
        _checks.feature_size(query, "query", self.W_q.in_features, "W_q", self.W_q.weight)
        source = query if memory is None else memory
        if memory is not None:
            _checks.sequences(query=query, memory=memory)
            _checks.feature_size(memory, "memory", self.W_k.in_features, "W_k", self.W_k.weight)
        q = self.split(self.W_q(query))  # (..., h, T, hs)
        if cache is not None and memory is not None and len(cache):
            k, v = cache.keys, cache.values  # (..., h, S, hs): the memory's projections, made once
        else:
            k = self.split(self.W_k(source))  # (..., h, n, hs), n = S, or the T new positions
            v = self.split(self.W_v(source))  # (..., h, n, hs)
            if cache is not None:
                k, v = cache.extend(k, v)  # (..., h, t + T, hs) in self-attention
        if mask is not None:  # (B, S) padding, (T, S), (B, T, S) … -> (..., 1, T, S): one for all heads
            batch = _checks.broadcast(query.shape[:-2], source.shape[:-2])
            mask = _checks.mask(mask, torch.Size((*batch, q.shape[-2], k.shape[-2]))).unsqueeze(-3)
        if fused:
            context, weights = fast.scaled_dot_product_attention(q, k, v, mask), None
        else:
            context, weights = attend(scores.scaled_dot(q, k), v, mask)  # (..., h, T, hs), (..., h, T, S)
        context = context.transpose(-3, -2).reshape(*context.shape[:-3], q.shape[-2], -1)  # concat heads
        return self.W_o(context), weights  # (..., T, d_model)
