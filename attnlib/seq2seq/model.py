"""Encoder + decoder, and ``build_model``, the one place lessons get a seq2seq model from.

    model = build_model("luong", src_vocab, tgt_vocab, score="general", input_feed=False)
    logits, weights = model(batch)           # teacher forcing: (B, T, V), (B, T, S) (None for "plain")

Kinds: "plain" (no attention, Cho et al. 2014), "bahdanau" (Bahdanau et al. 2015), "luong" (Luong et al.
2015; score="dot"/"general"/"concat"/"location", local=None/"m"/"p", window D, input_feed).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from attnlib.device import device as default_device
from attnlib.masking import lengths_to_mask
from attnlib.seq2seq.decoders import BahdanauDecoder, Decoder, DecoderConfig, PlainDecoder
from attnlib.seq2seq.encoder import Encoder, EncoderConfig
from attnlib.seq2seq.luong import LuongConfig, LuongDecoder

KINDS = ("plain", "bahdanau", "luong")


@dataclass
class ModelConfig:
    kind: str = "bahdanau"
    emb: int = 32  # embedding size (source and target)
    hidden: int = 64  # encoder RNN size per direction
    dec_hidden: int | None = None  # d_s; default `hidden`, or d_h = 2 * hidden when "final"/"dot" need it
    attn: int = 64  # attention hidden size A (additive, concat, local-p)
    cell: str = "gru"  # encoder cell: "gru" or "lstm" (decoders use a GRU)
    bidirectional: bool = True
    bridge: str = "learned"  # s_0 = tanh(W_init ←h_1), or "final": s_0 = [→h_S; ←h_1]
    dropout: float = 0.0
    score: str = "general"  # Luong only
    local: str | None = None  # Luong only: None, "m", "p"
    window: int = 4  # Luong local: D
    input_feed: bool = False  # Luong only
    max_src_len: int = 128  # Luong "location" score


class Seq2Seq(nn.Module):
    """``forward(batch) -> (logits (B, T, V), weights (B, T, S) or None)`` with teacher forcing.

    ``batch`` needs ``src (B, S)``, ``src_lengths (B,)``, ``src_mask (B, S)`` (True = real token) and
    ``tgt_in (B, T)`` (starting with <sos>), as ``attnlib.data`` makes them.
    """

    def __init__(self, encoder: Encoder, decoder: Decoder, config: ModelConfig | None = None):
        super().__init__()
        self.encoder = encoder
        self.decoder = decoder
        self.config = config

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(H (B, S, d_h), s_0 (B, d_s))``."""
        return self.encoder(src, src_lengths)

    def start(
        self, src: torch.Tensor, src_lengths: torch.Tensor, src_mask: torch.Tensor | None = None
    ) -> dict:
        """Encode and return the decoder's initial state, for step-by-step decoding."""
        if src_mask is None:
            src_mask = lengths_to_mask(src_lengths.to(src.device), src.shape[1])
        H, s0 = self.encode(src, src_lengths)
        return self.decoder.start(H, src_mask, src_lengths.to(src.device), s0)

    def forward(self, batch, **decoder_kwargs) -> tuple[torch.Tensor, torch.Tensor | None]:
        lengths = batch.src_lengths.to(batch.src.device)
        H, s0 = self.encode(batch.src, lengths)
        return self.decoder(H, batch.src_mask, lengths, s0, batch.tgt_in, **decoder_kwargs)


def _vocab_size(vocab) -> int:
    return vocab if isinstance(vocab, int) else len(vocab)


def build_model(kind: str, src_vocab, tgt_vocab, device: torch.device | str | None = None, **cfg) -> Seq2Seq:
    """A ``Seq2Seq`` of the given kind on ``device`` (default ``attnlib.device()``).

    ``src_vocab`` / ``tgt_vocab``: a ``Vocab`` or its size. ``cfg``: any field of ``ModelConfig``.
    Luong-only options (score, local, window, input_feed) are refused for the other kinds, so that a typo
    cannot silently train the wrong model.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    known = {f.name for f in fields(ModelConfig)} - {"kind"}
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; valid: {sorted(known)}")
    luong_only = {"score", "local", "window", "input_feed", "max_src_len"} & set(cfg)
    if kind != "luong" and luong_only:
        raise ValueError(f"option(s) {sorted(luong_only)} apply to kind='luong' only, not {kind!r}")
    config = ModelConfig(kind=kind, **cfg)
    d_h = config.hidden * (2 if config.bidirectional else 1)
    # d_s: the decoder state size. [→h_S; ←h_1] as s_0, or a score that compares s_t with h_s directly
    # (dot, scaled dot, cosine), need d_s = d_h.
    same_size_scores = ("dot", "scaled_dot", "cosine")
    needs_d_h = config.bridge == "final" or (kind == "luong" and config.score in same_size_scores)
    d_s = config.dec_hidden or (d_h if needs_d_h else config.hidden)
    encoder = Encoder(
        EncoderConfig(
            vocab_size=_vocab_size(src_vocab),
            emb=config.emb,
            hidden=config.hidden,
            cell=config.cell,
            bidirectional=config.bidirectional,
            dec_hidden=d_s,
            bridge=config.bridge,
            dropout=config.dropout,
        )
    )
    common = dict(
        vocab_size=_vocab_size(tgt_vocab),
        d_h=d_h,
        emb=config.emb,
        hidden=d_s,
        attn=config.attn,
        dropout=config.dropout,
        bidirectional=config.bidirectional,
    )
    if kind == "plain":
        decoder = PlainDecoder(DecoderConfig(**common))
    elif kind == "bahdanau":
        decoder = BahdanauDecoder(DecoderConfig(**common))
    else:
        luong = dict(
            score=config.score, local=config.local, window=config.window, input_feed=config.input_feed
        )
        decoder = LuongDecoder(LuongConfig(**common, **luong, max_src_len=config.max_src_len))
    model = Seq2Seq(encoder, decoder, config)
    return model.to(default_device() if device is None else device)
