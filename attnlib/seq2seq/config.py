"""One config for a whole seq2seq model: the encoder and every decoder read the fields they need from it.

As nanoGPT's ``GPTConfig``: a small dataclass, built once by ``build_model`` and passed to each module.
The sizes of the notes are derived, not stored twice:

    d_h = hidden · (2 if bidirectional else 1)     the annotations h_s = [→h_s; ←h_s] (keys = values)
    d_s = dec_hidden, or by default hidden; d_h when s_0 = [→h_S; ←h_1] (bridge="final") or when the score
          compares s_t with h_s directly (Luong "dot", "scaled_dot", "cosine")
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS = ("plain", "bahdanau", "luong")
SAME_SIZE_SCORES = ("dot", "scaled_dot", "cosine")  # scores that need d_s == d_h


@dataclass
class ModelConfig:
    src_vocab: int  # source vocabulary size (the encoder's embedding)
    tgt_vocab: int  # target vocabulary size (the decoder's embedding and output layer)
    kind: str = "bahdanau"  # one of KINDS
    emb: int = 32  # embedding size (source and target)
    hidden: int = 64  # encoder RNN size per direction
    dec_hidden: int | None = None  # d_s; None: see ``d_s``
    attn: int = 64  # attention hidden size A (additive, concat, local-p)
    cell: str = "gru"  # encoder cell: "gru" or "lstm" (decoders use a GRU)
    bidirectional: bool = True
    bridge: str = "learned"  # s_0 = tanh(W_init ←h_1), or "final": s_0 = [→h_S; ←h_1]
    dropout: float = 0.0
    score: str = "general"  # Luong only: any name of layers.make_score
    local: str | None = None  # Luong only: None (global), "m" (p_t = t), "p" (predicted p_t) or "m-gaussian"
    window: int = 4  # Luong local: D, the window is {s : |s - p_t| <= D}
    input_feed: bool = False  # Luong only
    max_src_len: int = 128  # Luong "location" score: rows of W
    fast_additive: bool = False  # additive / concat attention by attnlib.chunked_additive (same numbers)

    @property
    def d_h(self) -> int:
        """Size of the encoder annotations h_s."""
        return self.hidden * (2 if self.bidirectional else 1)

    @property
    def d_s(self) -> int:
        """Size of the decoder state s_t."""
        if self.dec_hidden:
            return self.dec_hidden
        same_size = self.bridge == "final" or (self.kind == "luong" and self.score in SAME_SIZE_SCORES)
        return self.d_h if same_size else self.hidden


# The options build_model accepts only for kind="luong": a typo must not silently train another model.
LUONG_ONLY = ("score", "local", "window", "input_feed", "max_src_len")
