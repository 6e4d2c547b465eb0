"""The encoder: embeddings -> (bidirectional) GRU or LSTM -> annotations H, plus the decoder's first state.

    →h_s = RNN(x_s, →h_{s-1}),  ←h_s = RNN(x_s, ←h_{s+1}),  h_s = [→h_s; ←h_s]    (Bahdanau et al. 2015, §3.2)
    H = [h_1, …, h_S]ᵀ                                                                  (S × d_h)
    s_0 = tanh(W_init ←h_1)                          (bridge="learned"; Bahdanau et al. 2015, App. A.2.2)
    s_0 = [→h_S; ←h_1]                               (bridge="final": the final states as they are)

Padding: the batch is packed (``pack_padded_sequence``) so that the backward RNN starts at each sentence's
own last real token, not at a pad, and padded positions of H are exactly 0.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

from attnlib.data.vocab import PAD_ID
from attnlib.seq2seq.config import ModelConfig


class Encoder(nn.Module):
    """Embedding + one (bi)RNN layer. ``forward(src, lengths) -> (H (B, S, d_h), s_0 (B, d_s))``.

    Reads ``src_vocab``, ``emb``, ``hidden`` (per direction), ``cell``, ``bidirectional``, ``bridge``,
    ``dropout`` (on the embeddings) and ``d_s`` (the size of the s_0 the bridge makes) off the config.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.cell not in ("gru", "lstm"):
            raise ValueError(f"cell must be 'gru' or 'lstm', got {cfg.cell!r}")
        if cfg.bridge not in ("learned", "final"):
            raise ValueError(f"bridge must be 'learned' or 'final', got {cfg.bridge!r}")
        self.cfg = cfg
        self.d_h = cfg.d_h
        if cfg.bridge == "final" and cfg.d_s != self.d_h:
            raise ValueError(
                f"bridge='final' passes [→h_S; ←h_1] of size {self.d_h} as s_0, but dec_hidden={cfg.d_s}"
            )
        self.embed = nn.Embedding(cfg.src_vocab, cfg.emb, padding_idx=PAD_ID)
        self.drop = nn.Dropout(cfg.dropout)
        rnn = nn.GRU if cfg.cell == "gru" else nn.LSTM
        self.rnn = rnn(cfg.emb, cfg.hidden, batch_first=True, bidirectional=cfg.bidirectional)
        # W_init reads ←h_1 only (Bahdanau), or the forward final state →h_S for a unidirectional encoder.
        self.W_init = nn.Linear(cfg.hidden, cfg.d_s) if cfg.bridge == "learned" else None

    def forward(self, src: torch.Tensor, lengths: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """src ``(B, S)`` ids, lengths ``(B,)`` -> H ``(B, S, d_h)`` (0 on padding), s_0 ``(B, d_s)``."""
        B, S = src.shape
        x = self.drop(self.embed(src))  # (B, S, emb)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, final = self.rnn(packed)
        H, _ = pad_packed_sequence(out, batch_first=True, total_length=S)  # (B, S, d_h)
        h_n = final[0] if self.cfg.cell == "lstm" else final  # (dirs, B, hidden); LSTM: (h_n, c_n)
        # h_n[0] = →h_S (forward, after each sentence's last real token); h_n[1] = ←h_1 (backward, at s = 1).
        last = h_n[-1]  # (B, hidden): ←h_1 if bidirectional, else →h_S
        if self.W_init is not None:
            s0 = torch.tanh(self.W_init(last))  # (B, d_s)
        else:
            s0 = h_n.transpose(0, 1).reshape(B, self.d_h)  # (dirs, B, hidden) -> (B, dirs * hidden)
        return H, s0


def final_states(H: torch.Tensor, lengths: torch.Tensor, bidirectional: bool = True) -> torch.Tensor:
    """The fixed-size summary of a sentence, read off H: [→h_S; ←h_1] (or →h_S for a unidirectional encoder).

    This single vector is all a decoder WITHOUT attention sees of the source: the bottleneck of
    Cho et al. 2014 and Sutskever et al. 2014 (note 004, "single vector bottleneck").
    """
    B, S, d_h = H.shape
    last = (lengths.to(H.device) - 1).clamp_min(0)  # (B,) index of each sentence's last real token
    h_last = H[torch.arange(B, device=H.device), last]  # (B, d_h): h_S of each sentence
    if not bidirectional:
        return h_last
    half = d_h // 2
    return torch.cat([h_last[:, :half], H[:, 0, half:]], dim=-1)  # [→h_S; ←h_1] (B, d_h)
