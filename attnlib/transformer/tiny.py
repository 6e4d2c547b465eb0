"""Self-attention and a tiny Transformer encoder (Vaswani et al. 2017, §3.2-3.5), built on attnlib's core.

    self_attention          queries, keys and values from the same sequence X (scaled dot-product, §3.2.1)
    causal_mask             (T, T) bool, True where s <= t: step t sees itself and the past only
    MultiHeadSelfAttention  h heads of size d_model / h, concatenated, then W_o (§3.2.2)
    positional_encoding     the sinusoids of §3.5
    Block, TinyTransformer  pre-LN encoder blocks and a position-wise tagger for the sequence tasks

One implementation per equation: the weights come from ``attnlib.scores.scaled_dot`` and ``attnlib.attend``;
``fused=True`` swaps in ``attnlib.fast.scaled_dot_product_attention``, tested equal. Matrices apply as
``W x`` with shape ``(out, in)`` (the paper's X W^Q is our X W_qᵀ). Chapter 9 of the course explains all this.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnlib import _checks, fast, scores
from attnlib.data.vocab import EOS_ID, PAD_ID
from attnlib.masking import attend, lengths_to_mask
from attnlib.modes import evaluating


def self_attention(
    x: torch.Tensor,
    W_q: torch.Tensor,
    W_k: torch.Tensor,
    W_v: torch.Tensor,
    mask: torch.Tensor | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention of a sequence to itself (Vaswani et al. 2017, §3.2.1, eq. 1):

        q_t = W_q x_t,  k_s = W_k x_s,  v_s = W_v x_s,   alpha_t = softmax(q_tᵀ k_s / sqrt(d_k)),
        c_t = sum_s alpha_{t,s} v_s;  in matrix form  softmax(Q Kᵀ / sqrt(d_k)) V  with Q = X W_qᵀ, ...

    Args:
        x: ``(..., T, d_model)``, the rows x_1 … x_T.
        W_q, W_k: ``(d_k, d_model)``; W_v: ``(d_v, d_model)``.
        mask: bool, True = attend, broadcastable to ``(..., T, T)`` (e.g. ``causal_mask(T)``); a padding mask
            ``(B, T)`` works as in ``attnlib.attend``.

    Returns:
        ``(context (..., T, d_v), weights (..., T, T))``.
    """
    _checks.matrix(W_q, "W_q", "(d_k, d_model)")
    _checks.same_rows(_checks.matrix(W_k, "W_k", "(d_k, d_model)"), "W_k", W_q, "W_q", "d_k")
    query = scores.project(x, W_q, "x", "W_q")  # (..., T, d_k)
    keys = scores.project(x, W_k, "x", "W_k")  # (..., T, d_k)
    values = scores.project(x, W_v, "x", "W_v")  # (..., T, d_v)
    return attend(scores.scaled_dot(query, keys), values, mask)


def causal_mask(T: int, device: torch.device | str | None = None) -> torch.Tensor:
    """``(T, T)`` bool, ``mask[t, s] = s <= t`` (True = attend): no step sees the future (§3.2.3)."""
    T = _checks.positive_int(T, "T")
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def positional_encoding(S: int, d: int, base: float = 10_000.0) -> torch.Tensor:
    """``(S, d)`` sinusoids, positions p = 0 … S-1 (Vaswani et al. 2017, §3.5):

    PE[p, 2i] = sin(p / base^(2i/d)),  PE[p, 2i+1] = cos(p / base^(2i/d)).
    """
    S = _checks.positive_int(S, "S", allow_zero=True)
    d = _checks.positive_int(d, "d")
    position = torch.arange(S, dtype=torch.float32)[:, None]  # (S, 1)
    frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # (ceil(d/2),): 1 / base^(2i/d)
    angle = position * frequency  # (S, ceil(d/2))
    pe = torch.zeros(S, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe


class MultiHeadSelfAttention(nn.Module):
    """MultiHead(X) = Concat(head_1, …, head_h) W_oᵀ, head_i = self_attention(X, W_q^i, W_k^i, W_v^i)
    (Vaswani et al. 2017, §3.2.2). Head i owns rows i*hs … (i+1)*hs - 1 of W_q, W_k, W_v, hs = d_model / h.

    ``forward(x (..., T, d_model), mask=None, fused=False) -> (out (..., T, d_model), weights)``, weights
    ``(..., h, T, T)``, or None with ``fused=True`` (the fused kernel does not form them).
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
        self, x: torch.Tensor, mask: torch.Tensor | None = None, fused: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        _checks.tensor(x, "x", min_dim=2)
        _checks.feature_size(x, "x", self.W_q.in_features, "W_q", self.W_q.weight)
        T = x.shape[-2]
        if mask is not None:  # (B, T) padding, (T, T), (B, T, T) … -> (..., 1, T, T): one for all heads
            mask = _checks.mask(mask, torch.Size((*x.shape[:-2], T, T))).unsqueeze(-3)
        q = self.split(self.W_q(x))  # (..., h, T, hs)
        k = self.split(self.W_k(x))  # (..., h, T, hs)
        v = self.split(self.W_v(x))  # (..., h, T, hs)
        if fused:
            context, weights = fast.scaled_dot_product_attention(q, k, v, mask), None
        else:
            context, weights = attend(scores.scaled_dot(q, k), v, mask)  # (..., h, T, hs), (..., h, T, T)
        context = context.transpose(-3, -2).reshape(*x.shape)  # (..., T, h, hs) -> (..., T, d_model): concat
        return self.W_o(context), weights


@dataclass
class TransformerConfig:
    src_vocab: int  # input tokens (with the specials <pad>, <sos>, <eos>, <unk>)
    tgt_vocab: int  # output classes
    d_model: int = 64
    n_heads: int = 4
    n_layers: int = 2
    d_ff: int = 128  # hidden size of the position-wise MLP (§3.3)
    max_len: int = 128
    positions: bool = True  # False: no positional encoding, the model sees a bag of tokens


class Block(nn.Module):
    """Pre-LN encoder block: x + MHA(LN(x)), then x + MLP(LN(x)) (§3.1 with LayerNorm moved first, as in
    GPT-2 and Xiong et al. 2020: it trains without a learning-rate warm-up)."""

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.d_model)
        self.attn = MultiHeadSelfAttention(config.d_model, config.n_heads)
        self.ln_2 = nn.LayerNorm(config.d_model)
        self.mlp = nn.Sequential(  # FFN(x) = W_2 max(0, W_1 x + b_1) + b_2  (§3.3, eq. 2)
            nn.Linear(config.d_model, config.d_ff), nn.ReLU(), nn.Linear(config.d_ff, config.d_model)
        )

    def forward(self, x: torch.Tensor, mask: torch.Tensor | None = None):
        out, weights = self.attn(self.ln_1(x), mask)
        x = x + out  # (B, T, d_model): residual
        return x + self.mlp(self.ln_2(x)), weights


class TinyTransformer(nn.Module):
    """An encoder-only Transformer that tags every position at once: no decoder, no step loop.

    Input: x_1 … x_S <eos> (the <eos> marks where the sequence ends). Output at position t: y_{t+1}, and
    <eos> at position S. So ``forward(batch) -> (logits (B, S+1, V), weights)`` lines up with
    ``batch.tgt_out`` whenever the target is as long as the source (copy, reverse, sort), and trains with
    ``attnlib.train.train``. ``weights``: one ``(B, h, S+1, S+1)`` tensor per layer.
    """

    def __init__(self, config: TransformerConfig):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.src_vocab, config.d_model)
        self.register_buffer("pe", positional_encoding(config.max_len, config.d_model), persistent=False)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.n_layers))
        self.ln_f = nn.LayerNorm(config.d_model)
        self.head = nn.Linear(config.d_model, config.tgt_vocab)

    def forward(self, batch) -> tuple[torch.Tensor, list[torch.Tensor]]:
        src, lengths = batch.src, batch.src_lengths.to(batch.src.device)  # (B, S), (B,)
        B, S = src.shape
        if S + 1 > self.config.max_len:
            raise ValueError(f"src has {S} positions but max_len is {self.config.max_len} (with <eos>)")
        ids = torch.cat([src, src.new_full((B, 1), PAD_ID)], dim=1)  # (B, S+1), padded
        ids[torch.arange(B, device=src.device), lengths] = EOS_ID  # x_1 … x_S <eos> <pad> …
        x = self.embed(ids)  # (B, S+1, d_model)
        if self.config.positions:
            x = x + self.pe[: S + 1]  # (S+1, d_model), the same for every example
        mask = lengths_to_mask(lengths + 1, S + 1)  # (B, S+1): padding, True = attend
        weights = []
        for block in self.blocks:
            x, w = block(x, mask)  # (B, S+1, d_model), (B, h, S+1, S+1)
            weights.append(w)
        return self.head(self.ln_f(x)), weights  # (B, S+1, V)


@torch.no_grad()
def predict(model: TinyTransformer, batch) -> list[list[int]]:
    """Predicted target ids of every example, all positions at once (argmax), cut at the first <eos>."""
    with evaluating(model):
        logits, _ = model(batch.to(next(model.parameters()).device))  # (B, S+1, V)
    out = []
    for row in logits.argmax(-1).tolist():
        out.append(row[: row.index(EOS_ID)] if EOS_ID in row else row)
    return out
