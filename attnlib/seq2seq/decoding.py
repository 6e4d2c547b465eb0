"""Decoding without teacher forcing: greedy (batched) and beam search, both returning the attention weights.

    greedy:  y_t = argmax_y p(y | y_<t, x), fed back as the next input, until <eos> or ``max_len``
    beam:    keep the ``width`` best partial outputs by sum_t log p(y_t | y_<t, x) / len^alpha
             (length normalisation, Wu et al. 2016 use a similar penalty; alpha=0 gives raw log-probabilities)

Both return a :class:`Decoded`: per sentence, the output ids WITHOUT <eos>, and the weights ``(T_b, S_b)`` of
the steps that produced them (one more row, the <eos> step, when the output ended with <eos>), cut to the
sentence's real source length. Models without attention ("plain") give ``weights=None``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from attnlib import _checks
from attnlib.data.vocab import EOS_ID, SOS_ID
from attnlib.modes import evaluating


@dataclass
class Decoded:
    tokens: list[list[int]]  # output ids per sentence, <eos> excluded
    weights: list[torch.Tensor] | None  # per sentence (steps, S_b); None without attention
    scores: list[float]  # total log-probability of each output (incl. its <eos>)


def _default_max_len(src: torch.Tensor) -> int:
    return 2 * src.shape[1] + 10


def _reorder(state: dict, index: torch.Tensor) -> dict:
    """Select rows ``index`` of every tensor in a decoder state (the batch is dim 0); keep the rest."""
    return {k: v.index_select(0, index) if isinstance(v, torch.Tensor) else v for k, v in state.items()}


@torch.no_grad()
def greedy(
    model, src: torch.Tensor, src_lengths: torch.Tensor, max_len: int | None = None, eos: int = EOS_ID
) -> Decoded:
    """Greedy decoding of a whole batch at once; stops when every sentence has emitted <eos>."""
    src_lengths = src_lengths.to(src.device)
    B = src.shape[0]
    max_len = max_len or _default_max_len(src)
    y = torch.full((B,), SOS_ID, dtype=torch.long, device=src.device)
    done = torch.zeros(B, dtype=torch.bool, device=src.device)
    logp_total = torch.zeros(B, device=src.device)
    outputs, weights = [], []
    with evaluating(model):
        state = model.start(src, src_lengths)
        for _ in range(max_len):
            logits, w, state = model.decoder.step(y, state)  # (B, V), (B, S)
            logp = torch.log_softmax(logits.float(), dim=-1)
            y = logp.argmax(dim=-1)  # (B,)
            logp_total += torch.where(done, 0.0, logp.gather(1, y[:, None])[:, 0])
            outputs.append(y)
            weights.append(w)
            done |= y == eos
            if done.all():
                break
    ys = torch.stack(outputs, dim=1).tolist()  # (B, steps)
    tokens, n_steps = [], []
    for row in ys:
        cut = row.index(eos) if eos in row else len(row)
        tokens.append(row[:cut])
        n_steps.append(min(cut + 1, len(row)))  # the <eos> step has weights too
    W = None
    if weights[0] is not None:
        W_all = torch.stack(weights, dim=1)  # (B, steps, S)
        lengths = src_lengths.tolist()
        W = [W_all[b, : n_steps[b], : lengths[b]] for b in range(B)]
    return Decoded(tokens, W, logp_total.tolist())


def beam_step(
    beam_scores: torch.Tensor, log_probs: torch.Tensor, width: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One step of beam search: the ``width`` best of all k * V candidates

        cand_{i,v} = sigma_i + log p(v | y^(i)_{<t}, x),   i < k (hypotheses), v < V (words),

    whichever hypotheses they extend. ``beam_scores (k,)`` are the summed log-probabilities sigma_i,
    ``log_probs (k, V)`` the next-word log-probabilities. Returns ``(scores, parents, tokens)``, each
    ``(width',)`` with ``width' = min(width, k * V)``, sorted by decreasing score:
    ``scores[j] = cand[parents[j], tokens[j]]``.
    """
    width = _checks.positive_int(width, "width")
    _checks.tensor(beam_scores, "beam_scores")
    _checks.tensor(log_probs, "log_probs")
    if beam_scores.dim() != 1 or log_probs.dim() != 2 or log_probs.shape[0] != beam_scores.shape[0]:
        raise ValueError(
            f"beam_scores must be (k,) and log_probs (k, V) for the same k, got shapes "
            f"{_checks.shape_str(beam_scores)} and {_checks.shape_str(log_probs)}"
        )
    cand = beam_scores[:, None] + log_probs  # (k, V)
    best, flat = cand.view(-1).topk(min(width, cand.numel()))  # (width',): one topk over all k * V
    return best, flat // cand.shape[1], flat % cand.shape[1]  # row = parent hypothesis, column = word


@torch.no_grad()
def beam_search(
    model,
    src: torch.Tensor,
    src_lengths: torch.Tensor,
    width: int = 4,
    max_len: int | None = None,
    alpha: float = 1.0,
    eos: int = EOS_ID,
) -> Decoded:
    """Beam search, one sentence at a time (its ``width`` hypotheses form the batch).

    A hypothesis that emits <eos> leaves the beam and the beam shrinks by one; search ends when the beam is
    empty or after ``max_len`` steps. The output is the finished hypothesis (or, failing any, the best
    unfinished one) with the highest length-normalised score; its weights are returned. Width 1 is greedy.
    """
    src_lengths = src_lengths.to(src.device)
    max_len = max_len or _default_max_len(src)
    with evaluating(model):
        found = [
            _beam_search_one(model, src[b : b + 1, : int(S_b)], S_b[None], width, max_len, alpha, eos)
            for b, S_b in enumerate(src_lengths)
        ]
    tokens, weights, scores = (list(column) for column in zip(*found, strict=True))
    return Decoded(tokens, None if weights[0] is None else weights, scores)


def _beam_search_one(
    model, src: torch.Tensor, src_lengths: torch.Tensor, width: int, max_len: int, alpha: float, eos: int
) -> tuple[list[int], torch.Tensor | None, float]:
    """Beam search for one sentence ``src (1, S_b)``: ``(tokens, weights (steps, S_b) or None, score)``."""
    state = model.start(src, src_lengths)
    tokens = torch.full((1, 0), SOS_ID, dtype=torch.long, device=src.device)  # (k, t) alive outputs
    hist = None  # (k, t, S_b) weights of the alive hypotheses
    score = torch.zeros(1, device=src.device)  # (k,) summed log-probabilities
    y = torch.full((1,), SOS_ID, dtype=torch.long, device=src.device)
    finished = []  # (normalised score, raw score, tokens, weights)
    for t in range(max_len):
        logits, w, state = model.decoder.step(y, state)  # (k, V), (k, S_b)
        k_alive = width - len(finished)
        log_probs = torch.log_softmax(logits.float(), dim=-1)  # (k, V)
        best, parent, y = beam_step(score, log_probs, k_alive)  # (k',) each
        tokens = torch.cat([tokens[parent], y[:, None]], dim=1)  # (k', t+1)
        if w is not None:
            step_w = w[parent, None]  # (k', 1, S_b)
            hist = step_w if hist is None else torch.cat([hist[parent], step_w], dim=1)
        ended = y == eos
        for i in ended.nonzero()[:, 0].tolist():
            raw = best[i].item()
            finished.append((raw / (t + 1) ** alpha, raw, tokens[i, :-1], None if hist is None else hist[i]))
        keep = (~ended).nonzero()[:, 0]
        if len(keep) == 0 or len(finished) >= width:
            break
        tokens, score, y = tokens[keep], best[keep], y[keep]
        hist = None if hist is None else hist[keep]
        state = _reorder(state, parent[keep])
    if not finished:  # nothing reached <eos> within max_len: take the best alive hypothesis
        i = int(score.argmax())
        raw = score[i].item()
        finished.append((raw / tokens.shape[1] ** alpha, raw, tokens[i], None if hist is None else hist[i]))
    _, raw, toks, weights = max(finished, key=lambda f: f[0])
    return toks.tolist(), weights, raw


def decode_batches(model, batches, width: int = 1, max_len: int | None = None) -> Decoded:
    """Decode every batch (greedy for ``width=1``, else beam search) and concatenate, in batch order.

    ``batches`` are ``attnlib.data`` Batches; compare ``tokens`` with ``[vocab.encode(p.tgt) for p in
    batch.examples]`` (or decode them to strings with ``vocab.decode``).
    """
    device = next(model.parameters()).device
    tokens, weights, scores = [], [], []
    for batch in batches:
        src, lengths = batch.src.to(device), batch.src_lengths.to(device)
        out = (
            greedy(model, src, lengths, max_len)
            if width == 1
            else beam_search(model, src, lengths, width, max_len)
        )
        tokens += out.tokens
        scores += out.scores
        weights = None if out.weights is None else (weights or []) + out.weights
    return Decoded(tokens, weights, scores)


def greedy_exact_match(model, batches, tgt_vocab) -> float:
    """Exact match of greedy decoding against the batches' own gold targets (a learning curve's measure).

    Each output is read with ``tgt_vocab.decode`` (up to <eos>) and compared with ``pair.tgt`` of the batch's
    examples.
    """
    from attnlib.metrics import exact_match  # metrics is a sibling concept: imported where it is used

    hyps = [tgt_vocab.decode(tokens) for tokens in decode_batches(model, batches).tokens]
    refs = [list(pair.tgt) for batch in batches for pair in batch.examples]
    return exact_match(hyps, refs)
