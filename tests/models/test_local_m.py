"""Specification of the Luong decoder's local-m (Luong et al. 2015, §3.2): p_t = min(t, S_b - 1) and the plain
softmax of the scores inside the window [p_t - D, p_t + D] (eq. 7), without local-p's Gaussian."""

import math

import pytest
import torch

from attnlib import local
from attnlib.seq2seq import beam_search, build_model, greedy

from .tiny import VOCAB, tiny_batch, tiny_model


def local_m_model(window: int) -> torch.nn.Module:
    """tiny.py's local-m model (window 2) with another half-width D."""
    return build_model("luong", VOCAB, VOCAB, emb=8, hidden=8, attn=8, device="cpu", local="m", window=window)


def loop_local_m(e: torch.Tensor, length: int, D: float) -> torch.Tensor:
    """One example: e (T, S) -> weights (T, S), centre min(t, length - 1), softmax over the window's words."""
    T, S = e.shape
    out = torch.zeros(T, S)
    for t in range(T):
        centre = min(t, length - 1)
        window = [s for s in range(length) if abs(s - centre) <= D]
        denom = sum(math.exp(e[t, s].item()) for s in window)
        for s in window:
            out[t, s] = math.exp(e[t, s].item()) / denom
    return out


@pytest.mark.parametrize("window", [1, 2])
def test_local_m_attention_is_the_window_softmax_around_the_clipped_step(window):
    model = local_m_model(window).eval()
    B, T, S, d_s, d_h = 3, 9, 6, model.decoder.cfg.d_s, model.decoder.cfg.d_h
    query, H = torch.randn(B, T, d_s), torch.randn(B, S, d_h)
    lengths = torch.tensor([6, 3, 1])  # T = 9 runs past the end of every source
    mask = torch.arange(S)[None, :] < lengths[:, None]
    with torch.no_grad():
        context, weights = model.decoder.attention(query, H, mask, lengths)
        e = model.decoder.score(query, H)  # (B, T, S)
    for b in range(B):
        expected = loop_local_m(e[b], int(lengths[b]), window)
        torch.testing.assert_close(weights[b], expected)
        torch.testing.assert_close(context[b], expected @ H[b])


def test_local_m_weights_sum_to_one_at_every_step_even_past_the_source_end():
    model, batch = local_m_model(1), tiny_batch()  # the third source has 2 words, T = 7
    _, weights = model(batch)  # (B, T, S)
    assert weights.shape[1] > int(batch.src_lengths.min()) + 1  # some steps lie past the window's reach
    assert torch.isfinite(weights).all()
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:2]))
    assert torch.all(weights[~batch.src_mask[:, None, :].expand_as(weights)] == 0)


def test_local_m_decodes_past_the_source_end_with_finite_weights():
    model, batch = local_m_model(1), tiny_batch()
    for out in (
        greedy(model, batch.src, batch.src_lengths, max_len=12),
        beam_search(model, batch.src, batch.src_lengths, width=2, max_len=12),
    ):
        for w in out.weights:
            assert torch.isfinite(w).all()
            torch.testing.assert_close(w.sum(-1), torch.ones(w.shape[0]))


def test_local_p_keeps_the_gaussian():
    """Positive control: local-p's rows sum to less than 1 (eq. 10 is not renormalised), local-m's to 1."""
    batch = tiny_batch()
    _, local_p = tiny_model("luong-local-p")(batch)
    real = batch.tgt_out != 0  # the steps that predict a real token or <eos>
    assert torch.all(local_p.sum(-1)[real] < 1 - 1e-4)


def test_the_labelled_variant_m_gaussian_is_local_m_times_the_gaussian_and_sums_to_less_than_one():
    plain = build_model("luong", VOCAB, VOCAB, emb=8, hidden=8, attn=8, device="cpu", local="m", window=2)
    variant = build_model(
        "luong", VOCAB, VOCAB, emb=8, hidden=8, attn=8, device="cpu", local="m-gaussian", window=2
    )
    variant.load_state_dict(plain.state_dict())  # same parameters: only the weights' formula differs
    batch = tiny_batch()
    with torch.no_grad():
        _, w_plain = plain.eval()(batch)  # (B, T, S)
        _, w_variant = variant.eval()(batch)
    T, S = w_plain.shape[1:]
    p = local.monotonic_position(T, batch.src_lengths)  # (B, T): min(t, S_b - 1)
    torch.testing.assert_close(w_variant, w_plain * local.gaussian(p, S, 2))
    torch.testing.assert_close(w_plain.sum(-1), torch.ones(w_plain.shape[:2]))  # control: local-m sums to 1
    assert torch.all(w_variant.sum(-1) < 1)  # the Gaussian is below 1 off the centre: every row is dimmer


def test_an_unknown_local_kind_is_refused_with_its_name():
    with pytest.raises(ValueError, match="local must be None, 'm', 'p' or 'm-gaussian', got 'q'"):
        build_model("luong", VOCAB, VOCAB, emb=8, hidden=8, device="cpu", local="q")
