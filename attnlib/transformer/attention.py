"""Cross-attention, multi-head attention between two sequences, and the KV cache of incremental decoding.

    cross_attention     queries from the decoder states Y, keys and values from the encoder's memory M
    MultiHeadAttention  MultiHeadSelfAttention with queries and keys/values from different sequences
    KVCache             the keys and values of the positions decoded so far, reused at every later step

Vaswani et al. 2017, §3.2.3: "In encoder-decoder attention layers, the queries come from the previous decoder
layer, and the memory keys and values come from the output of the encoder." It is Luong's "decoder state
queries the encoder states" with scaled dot-product scores and h heads. Chapter 9 of the course.
"""

from __future__ import annotations

import torch

from attnlib import _checks, fast, scores
from attnlib.masking import attend
from attnlib.transformer.tiny import MultiHeadSelfAttention


def cross_attention(
    y: torch.Tensor,
    memory: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Decoder positions attend to the encoder's memory (Vaswani et al. 2017, §3.2.3; eq. 1):

        q_t = W_q y_t,  k_s = W_k m_s,  v_s = W_v m_s,   alpha_t = softmax(q_tᵀ k_s / sqrt(d_k)),
        c_t = sum_s alpha_{t,s} v_s;  in matrix form  softmax(Q Kᵀ / sqrt(d_k)) V  with Q = Y W_qᵀ, K = M W_kᵀ

    Args:
        y: ``(..., T, d_model)``, the decoder states y_1 … y_T.
        memory: ``(..., S, d_model)``, the encoder outputs m_1 … m_S.
        W_q, W_k: ``(d_k, d_model)``; W_v: ``(d_v, d_model)``.
        mask: bool, True = attend, broadcastable to ``(..., T, S)``; the source padding mask ``(B, S)`` works.

    Returns:
        ``(context (..., T, d_v), weights (..., T, S))``; a row with no source to attend to gets zeros.
    """
    _checks.sequences(y=y, memory=memory)
    _checks.matrix(W_q, "W_q", "(d_k, d_model)")
    _checks.same_rows(_checks.matrix(W_k, "W_k", "(d_k, d_model)"), "W_k", W_q, "W_q", "d_k")
    query = scores.project(y, W_q, "y", "W_q")  # (..., T, d_k)
    keys = scores.project(memory, W_k, "memory", "W_k")  # (..., S, d_k)
    values = scores.project(memory, W_v, "memory", "W_v")  # (..., S, d_v)
    return attend(scores.scaled_dot(query, keys), values, mask)


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


class MultiHeadAttention(MultiHeadSelfAttention):
    """MultiHead(Y, M) = Concat(head_1, …, head_h) W_oᵀ, head_i = cross_attention(Y, M, W_q^i, W_k^i, W_v^i)
    (Vaswani et al. 2017, §3.2.2-3.2.3). Same parameters as ``MultiHeadSelfAttention`` (``W_q``, ``W_k``,
    ``W_v``, ``W_o``; head i owns rows i*hs … (i+1)*hs - 1); ``memory=None`` is self-attention.

    ``forward(query (..., T, d_model), memory (..., S, d_model) = None, mask=None, cache=None, fused=False)
    -> (out (..., T, d_model), weights (..., h, T, S) or None with fused=True)``. ``mask``: True = attend,
    broadcastable to ``(..., T, S)``, a padding mask ``(B, S)`` works. ``cache``: a ``KVCache``; in
    self-attention the new positions' keys and values are appended to it and the queries attend to all of
    them (the mask then covers ``(T, len(cache) + T)``); in cross-attention it keeps the memory's
    projections after the first call.
    """

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
            batch = torch.broadcast_shapes(query.shape[:-2], source.shape[:-2])
            mask = _checks.mask(mask, torch.Size((*batch, q.shape[-2], k.shape[-2]))).unsqueeze(-3)
        if fused:
            context, weights = fast.scaled_dot_product_attention(q, k, v, mask), None
        else:
            context, weights = attend(scores.scaled_dot(q, k), v, mask)  # (..., h, T, hs), (..., h, T, S)
        context = context.transpose(-3, -2).reshape(*context.shape[:-3], q.shape[-2], -1)  # concat heads
        return self.W_o(context), weights  # (..., T, d_model)
