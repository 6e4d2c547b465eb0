"""What does an encoder still know? Linear probes of its states, and accuracy per source length (chapter 2).

A *probe* is a small classifier trained to read one fact (here: the token x_s at source position s) off a
frozen representation. If even the best linear read-out fails, the fact is not there in a linear form:

    W* = argmin_W ‖[X 1] W − Y‖² + λ ‖W‖²   (ridge least squares, Y one-hot; closed form, deterministic)
    predicted token = argmax_v ([x 1] W*)_v

Two representations of the same source sentence are probed (note 004, "information-theoretic insight"):

    final    c = [→h_S; ←h_1], all a decoder WITHOUT attention sees: one probe per position s reads x_s off c
    memory   {h_1, …, h_S}, what attention can look at: the probe for position s reads x_s off h_s

Shapes: N sentences, S source positions, d features, V token classes.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from attnlib import metrics
from attnlib.data import Pair, Vocab, make_batches, make_sequence_task
from attnlib.modes import evaluating
from attnlib.ranking import TestScores
from attnlib.seq2seq.decoding import decode_batches
from attnlib.seq2seq.encoder import final_states


def _with_bias(features: torch.Tensor) -> torch.Tensor:
    return torch.cat([features, torch.ones_like(features[..., :1])], dim=-1)  # (..., N, d + 1)


def fit_linear_probe(
    features: torch.Tensor, labels: torch.Tensor, n_classes: int, ridge: float = 1e-3
) -> torch.Tensor:
    """Ridge least-squares probe: features ``(..., N, d)``, labels ``(..., N)`` -> weights ``(..., d+1, V)``.

    Leading dims are independent probes (e.g. one per source position). ``ridge`` is λ per example
    (λ N in the formula above), so that its strength does not depend on N.
    """
    X = _with_bias(features.double())  # (..., N, d+1)
    Y = torch.nn.functional.one_hot(labels.long(), n_classes).double()  # (..., N, V)
    gram = X.transpose(-1, -2) @ X  # (..., d+1, d+1)
    eye = torch.eye(gram.shape[-1], dtype=gram.dtype)
    return torch.linalg.solve(gram + ridge * X.shape[-2] * eye, X.transpose(-1, -2) @ Y)  # (..., d+1, V)


def probe_predict(weights: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
    """Predicted classes ``(..., N)`` of a probe from :func:`fit_linear_probe` on features ``(..., N, d)``."""
    return (_with_bias(features.double()) @ weights).argmax(dim=-1)


@torch.no_grad()
def encoder_states(
    model, pairs: Sequence[Pair], src_vocab: Vocab
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Source ids ``(N, S)``, annotations H ``(N, S, d_h)`` and the context c = [→h_S; ←h_1] ``(N, d_h)``.

    ``pairs`` must all have the same source length S (so that position s means the same thing in each).
    c is what :class:`~attnlib.seq2seq.PlainDecoder` receives (``encoder.final_states``).
    """
    if len({len(p.src) for p in pairs}) != 1:
        raise ValueError("encoder_states needs pairs of one source length")
    device = next(model.parameters()).device
    batch = make_batches(pairs, src_vocab, src_vocab, len(pairs))[0]
    lengths = batch.src_lengths.to(device)
    with evaluating(model):
        H, _ = model.encode(batch.src.to(device), lengths)  # (N, S, d_h)
    c = final_states(H, lengths, model.encoder.cfg.bidirectional)  # (N, d_h)
    return batch.src, H.cpu(), c.cpu()


def position_recovery(
    model,
    src_vocab: Vocab,
    length: int,
    n_train: int = 2000,
    n_test: int = 500,
    seed: int = 0,
    ridge: float = 1e-3,
) -> dict[str, torch.Tensor]:
    """Held-out accuracy ``(S,)`` of linear probes reading each source token x_s, from c and from h_s.

    Fresh random digit sequences of exactly ``length`` tokens (``n_train`` to fit, ``n_test`` to score,
    drawn with seeds ``seed`` and ``seed + 1``) go through the model's encoder. Returns
    ``{"final": acc from c, "memory": acc from h_s}``, position s = 1 … S first to last.
    """
    vocab_size = len(src_vocab) - 4  # the digits; the 4 specials never occur in a source
    parts = [
        make_sequence_task("copy", n, length, length, seed=seed + i, vocab_size=vocab_size)
        for i, n in enumerate((n_train, n_test))
    ]
    (x_tr, H_tr, c_tr), (x_te, H_te, c_te) = (encoder_states(model, p, src_vocab) for p in parts)
    V = len(src_vocab)
    # final: every position's probe sees the same c; one solve with S x V targets would do, but the batched
    # form keeps the two cases alike: (S, N, d) features, (S, N) labels.
    W_final = fit_linear_probe(c_tr.expand(length, -1, -1), x_tr.T, V, ridge)  # (S, d+1, V)
    W_memory = fit_linear_probe(H_tr.transpose(0, 1), x_tr.T, V, ridge)  # (S, d+1, V)
    final = probe_predict(W_final, c_te.expand(length, -1, -1)) == x_te.T  # (S, N)
    memory = probe_predict(W_memory, H_te.transpose(0, 1)) == x_te.T  # (S, N)
    return {"final": final.double().mean(dim=1), "memory": memory.double().mean(dim=1)}


def scores_by_length(
    model, pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int = 500
) -> dict[int, tuple[TestScores, TestScores]]:
    """``{S: (exact match, token accuracy)}`` of greedy decoding per source length S, kept per test
    sentence (``TestScores``: 1/0 per sentence, right tokens / reference tokens per sentence), so that a
    ranking can weigh the test sample's own noise (attnlib.ranking); ``float()`` of each is the score on all
    sentences of S."""
    by_length: dict[int, list[Pair]] = {}
    for p in pairs:
        by_length.setdefault(len(p.src), []).append(p)
    result = {}
    for S in sorted(by_length):
        batches = make_batches(by_length[S], src_vocab, tgt_vocab, batch_size)
        hyps = decode_batches(model, batches).tokens
        refs = [tgt_vocab.encode(p.tgt) for b in batches for p in b.examples]
        result[S] = (metrics.exact_scores(hyps, refs), metrics.token_scores(hyps, refs))
    return result


def accuracy_by_length(
    model, pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int = 500
) -> dict[int, tuple[float, float]]:
    """``{S: (exact match, token accuracy)}`` of greedy decoding, for each source length S in ``pairs``: the
    values of :func:`scores_by_length`."""
    scores = scores_by_length(model, pairs, src_vocab, tgt_vocab, batch_size)
    return {S: (float(exact), float(token)) for S, (exact, token) in scores.items()}


def accuracy_by_step(
    model, pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int = 500
) -> tuple[torch.Tensor, list[list[int]]]:
    """Fraction of ``pairs`` whose greedy output is right at each target step ``(T,)``, and the outputs
    (token ids, in the order of ``pairs``).

    ``pairs`` must all have the same target length T; an output shorter than T counts as wrong where it
    has no token.
    """
    if len({len(p.tgt) for p in pairs}) != 1:
        raise ValueError("accuracy_by_step needs pairs of one target length")
    T = len(pairs[0].tgt)
    batches = make_batches(pairs, src_vocab, tgt_vocab, batch_size)
    hyps = decode_batches(model, batches).tokens
    refs = torch.tensor([tgt_vocab.encode(p.tgt) for b in batches for p in b.examples])  # (N, T)
    padded = torch.tensor([(h + [-1] * T)[:T] for h in hyps])  # (N, T), -1 where the output is short
    return (padded == refs).double().mean(dim=0), hyps


def source_gradient_norms(model, batch) -> torch.Tensor:
    """Mean over the batch of ‖∂ log p(y_t | y_<t, x) / ∂ E x_s‖, the gradient reaching source embedding s
    from target step t: ``(T, S)``. Teacher forcing on ``batch`` (sentences of one source and one target
    length, so that no step or position is padding); one backward pass per target step.

    How strongly can the loss at step t teach the encoder about position s? Without attention the signal
    reaches c directly from every step (c is an input of each decoder step and of the output layer) and from
    c crosses the encoder's recurrence to position s; with attention it also reaches every h_s through c_t.
    """
    if len(set(batch.src_lengths.tolist())) != 1 or not bool(batch.tgt_mask.all()):
        raise ValueError("source_gradient_norms needs sentences of one source length and one target length")
    captured = {}
    hook = model.encoder.embed.register_forward_hook(lambda module, inputs, out: captured.update(x=out))
    device = next(model.parameters()).device
    batch = batch.to(device)
    try:
        with evaluating(model):
            logits, _ = model(batch)  # (B, T, V)
    finally:
        hook.remove()
    logp = torch.log_softmax(logits, dim=-1).gather(2, batch.tgt_out[..., None])[..., 0]  # (B, T)
    rows = []
    for t in range(logp.shape[1]):
        (grad,) = torch.autograd.grad(logp[:, t].sum(), captured["x"], retain_graph=True)  # (B, S, emb)
        rows.append(grad.norm(dim=-1).mean(dim=0))  # (S,)
    return torch.stack(rows).detach().cpu()  # (T, S)


def length_measures(
    model,
    pairs: Sequence[Pair],
    src_vocab: Vocab,
    tgt_vocab: Vocab,
    ranked_lengths: Sequence[int] = (),
    step_lengths: Sequence[int] = (),
    probe_lengths: Sequence[int] = (),
    probe_seed: int = 1000,
) -> dict[str, list]:
    """Chapter 2's measures of one trained model, as plain lists (JSON-ready, for stored results):

    ``lengths`` (every source length in ``pairs``, ascending) with the ``token`` accuracy and ``exact`` match
    of each (:func:`scores_by_length`); ``right``: for each of ``ranked_lengths``, the right output tokens of
    every test sentence of that length (for ``TestScores``: a reversal of S tokens has S to get right);
    ``by_step``: for each of ``step_lengths``, :func:`accuracy_by_step` (T,); ``final`` and ``memory``: for
    each of ``probe_lengths``, :func:`position_recovery` (S,) with seed ``probe_seed + S``.
    """
    scores = scores_by_length(model, pairs, src_vocab, tgt_vocab)
    lengths = sorted(scores)
    recovery = [position_recovery(model, src_vocab, S, seed=probe_seed + S) for S in probe_lengths]
    return {
        "lengths": lengths,
        "token": [float(scores[S][1]) for S in lengths],
        "exact": [float(scores[S][0]) for S in lengths],
        "right": [scores[S][1].items[:, 0].astype(int).tolist() for S in ranked_lengths],  # (ranked, N_S)
        "by_step": [
            accuracy_by_step(model, [p for p in pairs if len(p.src) == S], src_vocab, tgt_vocab)[0].tolist()
            for S in step_lengths
        ],
        "final": [r["final"].tolist() for r in recovery],  # (probe lengths, S)
        "memory": [r["memory"].tolist() for r in recovery],
    }
