"""Encoder + decoder, and ``build_model``, the one place lessons get a seq2seq model from.

    model = build_model("luong", src_vocab, tgt_vocab, score="general", input_feed=False)
    logits, weights = model(batch)           # teacher forcing: (B, T, V), (B, T, S) (None for "plain")

Kinds: "plain" (no attention, Cho et al. 2014), "bahdanau" (Bahdanau et al. 2015), "luong" (Luong et al.
2015; score="dot"/"general"/"concat"/"location", local=None/"m"/"p", window D, input_feed).
"""

from __future__ import annotations

from dataclasses import fields

import torch
from torch import nn

from attnlib.device import device as default_device
from attnlib.masking import lengths_to_mask
from attnlib.seq2seq.config import KINDS, LUONG_ONLY, ModelConfig
from attnlib.seq2seq.decoders import BahdanauDecoder, Decoder, PlainDecoder
from attnlib.seq2seq.encoder import Encoder
from attnlib.seq2seq.luong import LuongDecoder

DECODERS = {"plain": PlainDecoder, "bahdanau": BahdanauDecoder, "luong": LuongDecoder}


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

    ``src_vocab`` / ``tgt_vocab``: a ``Vocab`` or its size. ``cfg``: any other field of ``ModelConfig``.
    Luong-only options (score, local, window, input_feed, max_src_len) are refused for the other kinds, so
    that a typo cannot silently train the wrong model.
    """
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, got {kind!r}")
    known = {f.name for f in fields(ModelConfig)} - {"kind", "src_vocab", "tgt_vocab"}
    unknown = set(cfg) - known
    if unknown:
        raise ValueError(f"unknown option(s) {sorted(unknown)}; valid: {sorted(known)}")
    luong_only = set(LUONG_ONLY) & set(cfg)
    if kind != "luong" and luong_only:
        raise ValueError(f"option(s) {sorted(luong_only)} apply to kind='luong' only, not {kind!r}")
    if kind == "plain" and cfg.get("fast_additive"):
        raise ValueError("fast_additive applies to attention models ('bahdanau', 'luong'), not 'plain'")
    config = ModelConfig(_vocab_size(src_vocab), _vocab_size(tgt_vocab), kind, **cfg)
    model = Seq2Seq(Encoder(config), DECODERS[kind](config), config)  # the encoder's parameters first
    return model.to(default_device() if device is None else device)
