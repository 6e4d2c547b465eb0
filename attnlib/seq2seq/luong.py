"""Luong attention: score on the CURRENT state s_t, then an attentional state s~_t (Luong et al. 2015, §3).

    s_t  = GRU(x_t, s_{t-1}),   x_t = E y_{t-1}  or, with input feeding, [E y_{t-1}; s~_{t-1}]   (§3.3)
    e_{t,s} = score(s_t, h_s)            dot / general / concat (§3.1, unnumbered, after eq. 7)
    α_t = softmax(e_t)                   global (§3.1, eq. 7), or local (§3.2): local-m (eq. 7 in the window
                                         around p_t = min(t, S_b - 1)), local-p (eqs. 9-10; see attnlib.local)
    α_t = softmax(W_a s_t)               location (§3.1, eq. 8; footnote 6: the first S_b rows)
    c_t = Σ_s α_{t,s} h_s = Hᵀ α_t
    s~_t = tanh(W_c [c_t; s_t] + b_c)                                                          (§3, eq. 5)
    p(y_t | y_<t, x) = softmax(W_s s~_t + b_s)                                                 (§3, eq. 6)

The paper's eqs. 5 and 6 have no biases; ``W_c`` and ``W_s`` are ``nn.Linear`` layers with biases, as study
note 001 writes them (b_c, b_y). ``local="m-gaussian"`` is the course's labelled variant, not the paper's:
local-m's centre with local-p's Gaussian (study note 000 can be read so); its rows sum to less than 1.

Without input feeding, s_t does not depend on attention, so teacher forcing runs the GRU over ALL target
steps in one call and attends for all steps at once (``vectorised=True``): the same numbers as the step loop
(tested), in one batched matmul instead of T small ones. With input feeding the loop is unavoidable.
Luong et al. use a stacked LSTM; we use one GRU layer, as the other decoders do.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib import layers, local
from attnlib.data.vocab import PAD_ID
from attnlib.masking import attend, weighted_sum
from attnlib.seq2seq.config import ModelConfig
from attnlib.seq2seq.decoders import Decoder


def LuongConfig(vocab_size: int, d_h: int, emb: int = 32, hidden: int = 64, **options) -> ModelConfig:
    """The ``ModelConfig`` of a Luong decoder built alone (chapters 5 and 7), given in the decoder's terms:
    target vocabulary ``vocab_size``, annotation size ``d_h``, state size ``hidden`` (d_s). ``options``:
    other ``ModelConfig`` fields (score, local, window, input_feed, attn, dropout, max_src_len)."""
    bidirectional = options.pop("bidirectional", True) and d_h % 2 == 0  # d_h = 2 · hidden per direction
    per_direction = d_h // 2 if bidirectional else d_h
    return ModelConfig(
        src_vocab=0,  # no encoder is built from this config
        tgt_vocab=vocab_size,
        kind="luong",
        emb=emb,
        hidden=per_direction,
        bidirectional=bidirectional,
        dec_hidden=hidden,
        **options,
    )


class LuongDecoder(Decoder):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        if cfg.local not in (None, "m", "p", "m-gaussian"):
            raise ValueError(f"local must be None, 'm', 'p' or 'm-gaussian', got {cfg.local!r}")
        if cfg.fast_additive and (cfg.score not in ("additive", "concat") or cfg.local is not None):
            raise ValueError(
                "fast_additive needs global attention with score 'additive' or 'concat', got "
                f"score={cfg.score!r}, local={cfg.local!r}"
            )
        self.cfg = cfg
        d_s = cfg.d_s
        self.embed = nn.Embedding(cfg.tgt_vocab, cfg.emb, padding_idx=PAD_ID)
        self.drop = nn.Dropout(cfg.dropout)
        self.rnn = nn.GRU(cfg.emb + (d_s if cfg.input_feed else 0), d_s, batch_first=True)
        self.score = layers.make_score(cfg.score, d_s, cfg.d_h, cfg.attn, cfg.max_src_len)
        self.position = layers.PositionPredictor(d_s, cfg.attn) if cfg.local == "p" else None
        self.W_c = nn.Linear(cfg.d_h + d_s, d_s)
        self.W_s = nn.Linear(d_s, cfg.tgt_vocab)

    def attention(self, query, H, src_mask, src_lengths, t0: int = 0):
        """s_t ``(B, T, d_s)`` for steps t0 … t0+T-1 -> context ``(B, T, d_h)``, weights ``(B, T, S)``."""
        if self.cfg.fast_additive:  # global additive / concat, without keeping tanh's (B, T, S, A)
            return self.score.attend_fast(query, H, H, src_mask)
        scores = self.score(query, H)  # (B, T, S)
        if self.cfg.local is None:
            return attend(scores, H, src_mask)
        if self.cfg.local in ("m", "m-gaussian"):  # p_t = min(t, S_b - 1), softmax in the window (eq. 7)
            p = local.monotonic_position(query.shape[1], src_lengths, t0, scores.dtype)  # (B, T)
            gaussian = self.cfg.local == "m-gaussian"  # the labelled variant: times local-p's Gaussian
            weights = local.weights(scores, p, self.cfg.window, src_mask, gaussian=gaussian)  # (B, T, S)
        else:  # p_t predicted (eq. 9), softmax in the window times the Gaussian (eq. 10)
            p = self.position(query, src_lengths)  # (B, T)
            weights = local.weights(scores, p, self.cfg.window, src_mask)  # (B, T, S)
        return weighted_sum(weights, H), weights  # c_t = Hᵀ α_t: (B, T, d_h)

    def output(self, context, s):
        """s~_t = tanh(W_c [c_t; s_t]) and logits W_s s~_t (the softmax is in the loss)."""
        s_tilde = torch.tanh(self.W_c(torch.cat([context, s], dim=-1)))  # (..., d_s)
        return self.W_s(self.drop(s_tilde)), s_tilde

    def start(self, H, src_mask, src_lengths, s0):
        B = H.shape[0]
        state = {"H": H, "mask": src_mask, "lengths": src_lengths, "s": s0, "t": 0}
        if self.cfg.input_feed:
            state["s_tilde"] = H.new_zeros(B, self.cfg.d_s)  # s~_0 = 0
        return state

    def step(self, y_prev, state):
        x = self.drop(self.embed(y_prev))  # (B, emb)
        if self.cfg.input_feed:
            x = torch.cat([x, state["s_tilde"]], dim=-1)  # (B, emb + d_s)
        out, _ = self.rnn(x.unsqueeze(1), state["s"].unsqueeze(0).contiguous())  # (B, 1, d_s)
        context, weights = self.attention(out, state["H"], state["mask"], state["lengths"], state["t"])
        logits, s_tilde = self.output(context, out)  # (B, 1, V), (B, 1, d_s)
        new = {**state, "s": out[:, 0], "t": state["t"] + 1}
        if self.cfg.input_feed:
            new["s_tilde"] = s_tilde[:, 0]
        return logits[:, 0], weights[:, 0], new

    def forward(self, H, src_mask, src_lengths, s0, tgt_in, vectorised: bool = True):
        """Teacher forcing. ``vectorised`` (ignored with input feeding) runs all steps at once."""
        if self.cfg.input_feed or not vectorised:
            return super().forward(H, src_mask, src_lengths, s0, tgt_in)
        x = self.drop(self.embed(tgt_in))  # (B, T, emb)
        states, _ = self.rnn(x, s0.unsqueeze(0).contiguous())  # (B, T, d_s): s_1 … s_T in one call
        context, weights = self.attention(states, H, src_mask, src_lengths)  # (B, T, d_h), (B, T, S)
        logits, _ = self.output(context, states)  # (B, T, V)
        return logits, weights
