"""Decoders without attention (Cho et al. 2014) and with Bahdanau attention (Bahdanau et al. 2015).

Every decoder speaks the same small protocol, which ``model.Seq2Seq`` and ``decoding`` rely on:

    state = decoder.start(H, src_mask, src_lengths, s0)      # everything the steps need, batch-first
    logits, weights, state = decoder.step(y_prev, state)     # one target step: (B, V), (B, S) or None
    logits, weights = decoder(H, src_mask, src_lengths, s0, tgt_in)   # teacher forcing, (B, T, V), (B, T, S)

``state`` is a dict whose tensors all have the batch as their first dim, so beam search can reorder it with
``index_select``. Every attention equation comes from the core (``attnlib.attend``, ``attnlib.layers``).
Every decoder reads its sizes off the model's one ``ModelConfig``: ``tgt_vocab``, ``emb``, ``d_h`` (the
annotations, keys = values), ``d_s`` (its state), ``attn`` (A), ``dropout``.
"""

from __future__ import annotations

import torch
from torch import nn

from attnlib import layers
from attnlib.data.vocab import PAD_ID
from attnlib.masking import attend
from attnlib.seq2seq.config import ModelConfig
from attnlib.seq2seq.encoder import final_states


class Decoder(nn.Module):
    """The protocol. ``forward`` defaults to running ``step`` over the target (teacher forcing)."""

    def start(self, H, src_mask, src_lengths, s0) -> dict:
        raise NotImplementedError

    def step(self, y_prev: torch.Tensor, state: dict) -> tuple[torch.Tensor, torch.Tensor | None, dict]:
        raise NotImplementedError

    def forward(self, H, src_mask, src_lengths, s0, tgt_in) -> tuple[torch.Tensor, torch.Tensor | None]:
        state = self.start(H, src_mask, src_lengths, s0)
        all_logits, all_weights = [], []
        for t in range(tgt_in.shape[1]):
            logits, weights, state = self.step(tgt_in[:, t], state)
            all_logits.append(logits)
            all_weights.append(weights)
        weights = None if all_weights[0] is None else torch.stack(all_weights, dim=1)  # (B, T, S)
        return torch.stack(all_logits, dim=1), weights  # (B, T, V), (B, T, S)


class DeepOutput(nn.Module):
    """p(y_t | y_<t, x) = softmax(W_y tanh(W_o [s_t; c_t; E y_{t-1}]))

    Bahdanau et al. 2015 (App. A.2.2) and Cho et al. 2014 feed s, c and y_{t-1} to a maxout layer; we use tanh
    instead of maxout (same inputs, one fewer idea for the reader). Bahdanau's appendix feeds it the previous
    state s_{t-1}, its §3.1 (eq. 4, g(y_{t-1}, s_t, c_t)) the new one; we follow §3.1.
    """

    def __init__(self, d_s: int, d_c: int, emb: int, vocab_size: int):
        super().__init__()
        self.W_o = nn.Linear(d_s + d_c + emb, d_s)
        self.W_y = nn.Linear(d_s, vocab_size)

    def forward(self, s, c, y_emb):
        return self.W_y(torch.tanh(self.W_o(torch.cat([s, c, y_emb], dim=-1))))


class PlainDecoder(Decoder):
    """No attention: the same context c = [→h_S; ←h_1] at every step (Cho et al. 2014, §2.2).

        s_t = GRU([E y_{t-1}; c], s_{t-1})       (the [W : C] identity: W y + C c = [W C][y; c], note 000)

    c does not depend on t, so teacher forcing runs the GRU over all steps in one call. ``weights`` is None.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.tgt_vocab, cfg.emb, padding_idx=PAD_ID)
        self.drop = nn.Dropout(cfg.dropout)
        self.rnn = nn.GRU(cfg.emb + cfg.d_h, cfg.d_s, batch_first=True)
        self.out = DeepOutput(cfg.d_s, cfg.d_h, cfg.emb, cfg.tgt_vocab)

    def start(self, H, src_mask, src_lengths, s0):
        return {"c": final_states(H, src_lengths, self.cfg.bidirectional), "s": s0}  # (B, d_h), (B, d_s)

    def _run(self, y_prev, c, s):
        """y_prev (B, T) -> logits (B, T, V) and the last state, for any number of steps T."""
        y_emb = self.drop(self.embed(y_prev))  # (B, T, emb)
        c = c.unsqueeze(1).expand(-1, y_prev.shape[1], -1)  # (B, d_h) -> (B, T, d_h)
        states, s_last = self.rnn(torch.cat([y_emb, c], dim=-1), s.unsqueeze(0).contiguous())  # (B, T, d_s)
        return self.out(states, c, y_emb), s_last[0]

    def step(self, y_prev, state):
        logits, s = self._run(y_prev.unsqueeze(1), state["c"], state["s"])
        return logits[:, 0], None, {**state, "s": s}

    def forward(self, H, src_mask, src_lengths, s0, tgt_in):
        state = self.start(H, src_mask, src_lengths, s0)
        logits, _ = self._run(tgt_in, state["c"], state["s"])
        return logits, None


class ContextGRUCell(nn.Module):
    """The GRU of Bahdanau's decoder with the context c_t entering every gate (note 000; Bahdanau App. A.2.2):

        z_t  = σ(W_z y_{t-1} + U_z s_{t-1} + C_z c_t + b_z)
        r_t  = σ(W_r y_{t-1} + U_r s_{t-1} + C_r c_t + b_r)
        s^_t = tanh(W y_{t-1} + U (r_t ⊙ s_{t-1}) + C c_t + b)
        s_t  = z_t ⊙ s_{t-1} + (1 - z_t) ⊙ s^_t

    Written out rather than ``nn.GRUCell([y; c])`` so that each matrix of the note is a parameter a reader can
    find (``W``, ``U``, ``C`` stack the z, r and candidate rows). ``nn.GRUCell`` on [y; c] would give the same
    gates by the [W : C] identity, EXCEPT the candidate: PyTorch (like cuDNN) computes r ⊙ (U s + b), not
    U (r ⊙ s) as the note and the paper do. The W y_{t-1} terms do not depend on the recurrence, so teacher
    forcing computes them for all steps at once (``input_proj``).
    """

    def __init__(self, d_y: int, d_c: int, d_s: int):
        super().__init__()
        self.d_s = d_s
        self.W = nn.Linear(d_y, 3 * d_s)  # rows: [W_z; W_r; W], bias [b_z; b_r; b]
        self.C = nn.Linear(d_c, 3 * d_s, bias=False)  # [C_z; C_r; C]
        self.U_zr = nn.Linear(d_s, 2 * d_s, bias=False)  # [U_z; U_r]
        self.U = nn.Linear(d_s, d_s, bias=False)

    def input_proj(self, y_emb: torch.Tensor) -> torch.Tensor:
        """W y_{t-1} + b for any leading shape: ``(..., d_y) -> (..., 3 d_s)``."""
        return self.W(y_emb)

    def forward(self, Wy: torch.Tensor, c: torch.Tensor, s_prev: torch.Tensor) -> torch.Tensor:
        """Wy ``(B, 3 d_s)`` from ``input_proj``, c ``(B, d_c)``, s_prev ``(B, d_s)`` -> s_t ``(B, d_s)``."""
        Wy_z, Wy_r, Wy_s = Wy.chunk(3, dim=-1)  # 3 x (B, d_s)
        Cc_z, Cc_r, Cc_s = self.C(c).chunk(3, dim=-1)
        Us_z, Us_r = self.U_zr(s_prev).chunk(2, dim=-1)
        z = torch.sigmoid(Wy_z + Us_z + Cc_z)
        r = torch.sigmoid(Wy_r + Us_r + Cc_r)
        candidate = torch.tanh(Wy_s + self.U(r * s_prev) + Cc_s)
        return z * s_prev + (1 - z) * candidate


class BahdanauDecoder(Decoder):
    """Additive attention on the PREVIOUS state s_{t-1} (Bahdanau et al. 2015, §3.1; note 003):

        e_{t,s} = vᵀ tanh(W s_{t-1} + U h_s)       (U h_s once per sentence: ``AdditiveScore.project_keys``)
        α_t, c_t = attend(e_t, H, mask)
        s_t = ContextGRUCell(E y_{t-1}, c_t, s_{t-1})
        p(y_t | y_<t, x) = DeepOutput(s_t, c_t, E y_{t-1})

    c_t depends on s_{t-1}, so the steps cannot be batched over t: teacher forcing loops over steps.
    """

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.embed = nn.Embedding(cfg.tgt_vocab, cfg.emb, padding_idx=PAD_ID)
        self.drop = nn.Dropout(cfg.dropout)
        self.score = layers.AdditiveScore(cfg.d_s, cfg.d_h, cfg.attn)
        self.cell = ContextGRUCell(cfg.emb, cfg.d_h, cfg.d_s)
        self.out = DeepOutput(cfg.d_s, cfg.d_h, cfg.emb, cfg.tgt_vocab)

    def start(self, H, src_mask, src_lengths, s0):
        return {"H": H, "keys_proj": self.score.project_keys(H), "mask": src_mask, "s": s0}  # U H: (B, S, A)

    def _recur(self, Wy, state):
        """One step of the recurrence: s_{t-1} -> (α_t, c_t) -> s_t. Returns c_t, α_t and the new state."""
        s_prev = state["s"]
        query = s_prev.unsqueeze(1)  # (B, 1, d_s): one query per sentence, the PREVIOUS state s_{t-1}
        if self.cfg.fast_additive:  # the same numbers, without keeping tanh's (B, 1, S, A) for backward
            context, weights = self.score.attend_fast(
                query, state["H"], state["H"], state["mask"], projected_keys=state["keys_proj"]
            )
        else:
            scores = self.score(query, state["H"], projected_keys=state["keys_proj"])  # (B, 1, S)
            context, weights = attend(scores, state["H"], state["mask"])  # (B, 1, d_h), (B, 1, S)
        c = context[:, 0]  # (B, d_h)
        return c, weights[:, 0], {**state, "s": self.cell(Wy, c, s_prev)}

    def step(self, y_prev, state):
        y_emb = self.drop(self.embed(y_prev))  # (B, emb)
        c, weights, state = self._recur(self.cell.input_proj(y_emb), state)
        return self.out(state["s"], c, y_emb), weights, state

    def forward(self, H, src_mask, src_lengths, s0, tgt_in):
        """Teacher forcing: the recurrence loops over t; W y_{t-1} and the output layer run once for all t."""
        state = self.start(H, src_mask, src_lengths, s0)
        y_emb = self.drop(self.embed(tgt_in))  # (B, T, emb)
        Wy = self.cell.input_proj(y_emb)  # (B, T, 3 d_s)
        states, contexts, all_weights = [], [], []
        for t in range(tgt_in.shape[1]):
            c, weights, state = self._recur(Wy[:, t], state)
            states.append(state["s"])
            contexts.append(c)
            all_weights.append(weights)
        s, c = torch.stack(states, dim=1), torch.stack(contexts, dim=1)  # (B, T, d_s), (B, T, d_h)
        return self.out(s, c, y_emb), torch.stack(all_weights, dim=1)  # (B, T, V), (B, T, S)
