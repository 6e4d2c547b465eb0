"""Specification of attnlib.seq2seq.decoding: greedy and beam search with attention weights; beam_step."""

import pytest
import torch

from attnlib.data.vocab import EOS_ID
from attnlib.seq2seq import beam_search, beam_step, greedy

from .tiny import GLOBAL_ATTENTION, KINDS, tiny_batch, tiny_model


@pytest.mark.parametrize("name", list(KINDS))
def test_greedy_and_beam_of_width_one_agree(name):
    model, batch = tiny_model(name), tiny_batch()
    g = greedy(model, batch.src, batch.src_lengths, max_len=7)
    b = beam_search(model, batch.src, batch.src_lengths, width=1, max_len=7)
    assert g.tokens == b.tokens
    assert g.scores == pytest.approx(b.scores, abs=1e-5)
    if g.weights is not None:
        for wg, wb in zip(g.weights, b.weights, strict=True):
            torch.testing.assert_close(wg, wb)


@pytest.mark.parametrize("name", GLOBAL_ATTENTION)
def test_decoded_weights_cover_the_real_source_and_sum_to_one(name):
    model, batch = tiny_model(name), tiny_batch()
    for out in (
        greedy(model, batch.src, batch.src_lengths, max_len=5),
        beam_search(model, batch.src, batch.src_lengths, width=3, max_len=5),
    ):
        for w, toks, n in zip(out.weights, out.tokens, batch.src_lengths.tolist(), strict=True):
            assert w.shape[1] == n  # cut to the real source tokens: padding is not part of the sentence
            assert w.shape[0] in (len(toks), len(toks) + 1)  # + the <eos> step when there was one
            torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[0]))


def test_greedy_weights_are_zero_on_padding_before_cutting():
    model, batch = tiny_model("bahdanau"), tiny_batch()
    state = model.start(batch.src, batch.src_lengths)
    _, weights, _ = model.decoder.step(torch.ones(3, dtype=torch.long), state)
    assert torch.all(weights[~batch.src_mask] == 0)


def test_greedy_respects_max_len_and_stops_at_eos():
    model, batch = tiny_model("luong-general"), tiny_batch()
    out = greedy(model, batch.src, batch.src_lengths, max_len=4)
    assert all(len(t) <= 4 and EOS_ID not in t for t in out.tokens)


def test_greedy_on_a_batch_equals_greedy_one_sentence_at_a_time():
    model, batch = tiny_model("bahdanau"), tiny_batch()
    together = greedy(model, batch.src, batch.src_lengths, max_len=6)
    for b in range(3):
        n = int(batch.src_lengths[b])
        alone = greedy(model, batch.src[b : b + 1, :n], batch.src_lengths[b : b + 1], max_len=6)
        assert alone.tokens[0] == together.tokens[b]
        torch.testing.assert_close(alone.weights[0], together.weights[b])


def test_beam_finds_an_output_at_least_as_likely_as_greedy():
    model, batch = tiny_model("luong-general"), tiny_batch()
    g = greedy(model, batch.src, batch.src_lengths, max_len=6)
    b = beam_search(model, batch.src, batch.src_lengths, width=5, max_len=6, alpha=0.0)
    for greedy_score, beam_score in zip(g.scores, b.scores, strict=True):
        assert beam_score >= greedy_score - 1e-5


def test_decoding_restores_training_mode():
    model, batch = tiny_model("plain"), tiny_batch()
    model.train()
    greedy(model, batch.src, batch.src_lengths, max_len=3)
    assert model.training


def test_beam_step_keeps_the_best_of_all_candidates_in_order():
    beam_scores = torch.tensor([-0.5, -1.5])
    log_probs = torch.tensor([[0.1, 0.6, 0.2, 0.1], [0.05, 0.05, 0.1, 0.8]]).log()  # (k, V) = (2, 4)
    every = sorted(  # all k * V candidates by hand: (score, parent, token), best first
        ((beam_scores[i] + log_probs[i, v]).item(), i, v) for i in range(2) for v in range(4)
    )[::-1]
    for width in (1, 3, 8, 20):  # more than k * V keeps them all
        scores, parents, tokens = beam_step(beam_scores, log_probs, width)
        kept = every[:width]
        assert parents.tolist() == [i for _, i, _ in kept] and tokens.tolist() == [v for _, _, v in kept]
        assert torch.allclose(scores, torch.tensor([c for c, _, _ in kept]))


@pytest.mark.parametrize(
    ("args", "error", "message"),
    [
        ((torch.zeros(2), torch.zeros(2, 5), 0), ValueError, r"width must be > 0, got 0"),
        ((torch.zeros(2), torch.zeros(3, 5), 2), ValueError, r"log_probs \(k, V\) for the same k"),
        ((torch.zeros(2, 1), torch.zeros(2, 5), 2), ValueError, r"got shapes \(2, 1\) and \(2, 5\)"),
    ],
)
def test_beam_step_names_the_bad_argument(args, error, message):
    with pytest.raises(error, match=message):
        beam_step(*args)
