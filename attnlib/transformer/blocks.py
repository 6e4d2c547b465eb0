"""The encoder and decoder blocks of the Transformer (Vaswani et al. 2017, §3.1, §3.3, Figure 1).

    EncoderBlock   self-attention, then the feed-forward network
    DecoderBlock   causal self-attention, cross-attention to the encoder's memory, then the feed-forward
    FeedForward    FFN(x) = W_2 max(0, W_1 x + b_1) + b_2, the same at every position (§3.3, eq. 2)

Each sub-layer is wrapped in a residual connection and a LayerNorm. Post-norm, as in the paper and torch's
default (``norm_first=False``): x = LayerNorm(x + Sublayer(x)). Pre-norm (``norm_first=True``, GPT-2; Xiong
et al. 2020): x = x + Sublayer(LayerNorm(x)). Dropout is left out: these blocks compute the equations.
The names follow torch's layers (``norm1``, ``norm2``, ``norm3``; ``linear1``, ``linear2``) so a reader can
copy weights across; ``tests/transformer`` checks both give the same outputs. Chapter 9 of the course.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from attnlib.transformer.attention import KVCache, MultiHeadAttention, shifted_causal_mask


class FeedForward(nn.Module):
    """FFN(x) = W_2 max(0, W_1 x + b_1) + b_2 (§3.3, eq. 2); ``linear1``: W_1 ``(d_ff, d_model)``, b_1;
    ``linear2``: W_2 ``(d_model, d_ff)``, b_2."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.linear1 = nn.Linear(d_model, d_ff)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.linear2(torch.relu(self.linear1(x)))  # (..., T, d_ff) -> (..., T, d_model)


def _sublayer(x: torch.Tensor, norm: nn.LayerNorm, sublayer, norm_first: bool):
    """LayerNorm(x + Sublayer(x)) (post-norm, §3.1), or x + Sublayer(LayerNorm(x)) (pre-norm).

    ``sublayer(x) -> (out, weights)``; returns the new x and the weights."""
    if norm_first:
        out, weights = sublayer(norm(x))
        return x + out, weights
    out, weights = sublayer(x)
    return norm(x + out), weights


def _full_rank(mask: torch.Tensor, batch: torch.Size) -> torch.Tensor:
    """``(T, S) -> (1, …, 1, T, S)``: never mistaken for a padding mask ``(B, S)`` when B happens to be T."""
    return mask.view(*(1,) * len(batch), *mask.shape)


class EncoderBlock(nn.Module):
    """x = LayerNorm(x + MultiHead(x, x)),  x = LayerNorm(x + FFN(x))  (Vaswani et al. 2017, §3.1).

    ``forward(x (..., S, d_model), mask=None) -> (x (..., S, d_model), weights (..., h, S, S))``;
    ``mask``: the source padding mask ``(B, S)`` (True = a real token), or any mask of ``(..., S, S)``.
    ``bias=False`` leaves the biases out of the attention's projections (the paper's W^Q, W^K, W^V, W^O).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm_first: bool = False, bias: bool = True):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=bias)
        self.norm1 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        x, weights = _sublayer(x, self.norm1, lambda x: self.self_attn(x, mask=mask), self.norm_first)
        x, _ = _sublayer(x, self.norm2, lambda x: (self.feed_forward(x), None), self.norm_first)
        return x, weights  # (..., S, d_model), (..., h, S, S)


@dataclass
class DecoderCache:
    """What one decoder block keeps between decoding steps: its self-attention keys and values of the
    positions decoded so far, and its cross-attention projections of the memory."""

    self_attn: KVCache = field(default_factory=KVCache)
    cross_attn: KVCache = field(default_factory=KVCache)


class DecoderBlock(nn.Module):
    """The decoder block of Vaswani et al. 2017, §3.1 (post-norm):

        y = LayerNorm(y + MultiHead(y, y, causal mask))        masked self-attention: no step sees the future
        y = LayerNorm(y + MultiHead(y, memory, source mask))   cross-attention to the encoder (§3.2.3)
        y = LayerNorm(y + FFN(y))

    ``forward(y (..., T, d_model), memory (..., S, d_model), memory_mask=None, cache=None)
    -> (y, self_weights (..., h, T, T'), cross_weights (..., h, T, S))``. ``memory_mask``: the source
    padding mask ``(B, S)``, True = a real token. With a ``DecoderCache``, ``y`` holds only the new
    positions; the self-attention also attends to the cached earlier ones (T' = cached + T), which gives the
    same numbers as running the whole prefix again (incremental decoding). ``causal=False`` drops the causal
    mask (to see what trained weights do when the future is visible; chapter 9's explorer).
    """

    def __init__(self, d_model: int, n_heads: int, d_ff: int, norm_first: bool = False):
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, n_heads, bias=True)
        self.norm1 = nn.LayerNorm(d_model)
        self.cross_attn = MultiHeadAttention(d_model, n_heads, bias=True)
        self.norm2 = nn.LayerNorm(d_model)
        self.feed_forward = FeedForward(d_model, d_ff)
        self.norm3 = nn.LayerNorm(d_model)

    def forward(
        self,
        y: torch.Tensor,
        memory: torch.Tensor,
        memory_mask: torch.Tensor | None = None,
        cache: DecoderCache | None = None,
        causal: bool = True,
    ):
        T, past = y.shape[-2], 0 if cache is None else len(cache.self_attn)
        if not causal and cache is not None:
            raise ValueError("causal=False (every position sees the whole target) cannot use a KV cache")
        causal = _full_rank(shifted_causal_mask(T, past, y.device), y.shape[:-2]) if causal else None
        self_cache, cross_cache = (None, None) if cache is None else (cache.self_attn, cache.cross_attn)
        y, self_weights = _sublayer(
            y, self.norm1, lambda y: self.self_attn(y, mask=causal, cache=self_cache), self.norm_first
        )
        y, cross_weights = _sublayer(
            y,
            self.norm2,
            lambda y: self.cross_attn(y, memory, mask=memory_mask, cache=cross_cache),
            self.norm_first,
        )
        y, _ = _sublayer(y, self.norm3, lambda y: (self.feed_forward(y), None), self.norm_first)
        return y, self_weights, cross_weights  # (..., T, d_model), (..., h, T, T'), (..., h, T, S)
