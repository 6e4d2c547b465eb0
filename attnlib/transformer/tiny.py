"""A tiny encoder-only Transformer that tags every position at once, for the course's sequence tasks.

    TransformerConfig, TinyTransformer   pre-norm ``EncoderBlock``s and a position-wise output layer
    predict                              every position's argmax, cut at the first <eos>

Built from ``attnlib.transformer.blocks.EncoderBlock`` with ``norm_first=True`` (LayerNorm first, as in GPT-2
and Xiong et al. 2020: it trains without a learning-rate warm-up) and attention projections without biases.
No other module imports this one. Chapter 9 of the course.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from attnlib.data.vocab import EOS_ID, PAD_ID
from attnlib.masking import lengths_to_mask
from attnlib.modes import evaluating
from attnlib.transformer.blocks import EncoderBlock
from attnlib.transformer.positions import positional_encoding


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
        self.blocks = nn.ModuleList(
            EncoderBlock(config.d_model, config.n_heads, config.d_ff, norm_first=True, bias=False)
            for _ in range(config.n_layers)
        )
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
