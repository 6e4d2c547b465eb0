"""Seq2SeqTransformer: the encoder-decoder of Vaswani et al. 2017 under the course's seq2seq protocol."""

import pytest
import torch

from attnlib.data import make_batches, sequence_task
from attnlib.seq2seq import beam_search, greedy
from attnlib.train import train
from attnlib.transformer import Seq2SeqTransformer, Seq2SeqTransformerConfig


def reverse_batches(n: int = 400, batch_size: int = 32):
    task = sequence_task("reverse", n=n, min_len=3, max_len=6, seed=0)
    batches = make_batches(task.train, task.src_vocab, task.tgt_vocab, batch_size, shuffle=True, seed=0)
    return task, batches


def model_for(task, norm_first: bool = False, **sizes) -> Seq2SeqTransformer:
    sizes = {"d_model": 32, "n_heads": 2, "n_layers": 2, "d_ff": 64, **sizes}
    config = Seq2SeqTransformerConfig(
        len(task.src_vocab), len(task.tgt_vocab), norm_first=norm_first, **sizes
    )
    return Seq2SeqTransformer(config)


def test_forward_gives_logits_and_cross_attention_weights_per_layer_and_head():
    task, batches = reverse_batches(n=64)
    batch = batches[0]
    logits, weights = model_for(task)(batch)
    B, T = batch.tgt_in.shape
    assert logits.shape == (B, T, len(task.tgt_vocab))
    assert len(weights) == 2 and weights[0].shape == (B, 2, T, batch.src.shape[1])
    padded = ~batch.src_mask[:, None, None, :].expand_as(weights[0])
    assert torch.all(weights[0][padded] == 0)  # no target step attends to source padding


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_kv_cached_steps_give_the_teacher_forced_logits(norm_first):
    task, batches = reverse_batches(n=64)
    batch = batches[0]
    model = model_for(task, norm_first).double().eval()
    full, weights = model(batch)  # (B, T, V): all positions at once, causal mask
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        logits, w, state = model.decoder.step(batch.tgt_in[:, t], state)
        torch.testing.assert_close(logits, full[:, t], rtol=0.0, atol=1e-12)
        torch.testing.assert_close(w, weights[-1][:, :, t].mean(dim=1), rtol=0.0, atol=1e-12)
    assert state["self_k0"].shape[2] == batch.tgt_in.shape[1]  # (B, h, t, hs): one entry per step


@pytest.mark.slow  # trains a model
def test_learns_to_reverse_and_decodes_with_greedy_and_beam_search():
    task, batches = reverse_batches()
    model = model_for(task)
    history = train(model, batches, steps=150, lr=3e-3, seed=0, progress=False)
    assert history.train_loss[-1] < 0.5 * history.train_loss[0]
    batch = batches[0]
    decoded = greedy(model, batch.src, batch.src_lengths)
    assert len(decoded.tokens) == len(batch) and decoded.weights[0].shape[-1] == int(batch.src_lengths[0])
    beam = beam_search(model, batch.src[:2], batch.src_lengths[:2], width=3)
    assert len(beam.tokens) == 2 and all(isinstance(t, int) for row in beam.tokens for t in row)


def test_too_long_a_source_is_refused_with_its_length():
    task, batches = reverse_batches(n=64)
    with pytest.raises(ValueError, match="src has 6 positions but max_len is 4"):
        model_for(task, max_len=4)(batches[0])


@pytest.mark.parametrize("norm_first", [False, True], ids=["post_norm", "pre_norm"])
def test_recomputing_the_prefix_gives_the_kv_cached_steps(norm_first):
    task, batches = reverse_batches(n=64)
    batch = batches[0]
    model = model_for(task, norm_first).double().eval()
    cached = model.start(batch.src, batch.src_lengths)
    model.decoder.kv_cache = False
    again = model.start(batch.src, batch.src_lengths)
    assert "prefix" in again and "self_k0" not in again
    for t in range(batch.tgt_in.shape[1]):
        y = batch.tgt_in[:, t]
        logits, w, cached = model.decoder.step(y, cached)
        logits_again, w_again, again = model.decoder.step(y, again)
        torch.testing.assert_close(logits_again, logits, rtol=0.0, atol=1e-12)
        torch.testing.assert_close(w_again, w, rtol=0.0, atol=1e-12)
    assert again["prefix"].shape == batch.tgt_in.shape and "self_k0" not in again  # ids kept, no cache


@pytest.mark.slow  # trains a model
def test_greedy_and_beam_search_decode_the_same_with_and_without_the_cache():
    task, batches = reverse_batches()
    model = model_for(task)
    train(model, batches, steps=60, lr=3e-3, seed=0, progress=False)
    batch = batches[0]
    with_cache = greedy(model, batch.src, batch.src_lengths, max_len=12)
    beam = beam_search(model, batch.src[:3], batch.src_lengths[:3], width=3)
    model.decoder.kv_cache = False
    without = greedy(model, batch.src, batch.src_lengths, max_len=12)
    assert without.tokens == with_cache.tokens
    for a, b in zip(without.weights, with_cache.weights, strict=True):
        torch.testing.assert_close(a, b, rtol=0.0, atol=1e-5)
    assert beam_search(model, batch.src[:3], batch.src_lengths[:3], width=3).tokens == beam.tokens


def test_attention_maps_give_every_layer_and_head_and_the_decoder_is_causal():
    task, batches = reverse_batches(n=64)
    batch = batches[0]
    model = model_for(task).eval()
    maps = model.attention_maps(batch)
    B, S = batch.src.shape
    T = batch.tgt_in.shape[1]
    assert [w.shape for w in maps["encoder"]] == [(B, 2, S, S)] * 2
    assert [w.shape for w in maps["decoder"]] == [(B, 2, T, T)] * 2
    _, cross = model(batch)
    for a, b in zip(maps["cross"], cross, strict=True):
        torch.testing.assert_close(a, b, rtol=0.0, atol=0.0)
    future = ~torch.ones(T, T, dtype=torch.bool).tril()
    assert all(torch.all(w[..., future] == 0) for w in maps["decoder"])


def test_attention_maps_without_the_causal_mask_or_the_positions():
    task, batches = reverse_batches(n=64)
    batch = batches[0]
    model = model_for(task).eval()
    T = batch.tgt_in.shape[1]
    future = ~torch.ones(T, T, dtype=torch.bool).tril()
    open_maps = model.attention_maps(batch, causal=False)
    assert any(torch.any(w[..., future] > 0) for w in open_maps["decoder"])  # the future is visible now
    default = model.attention_maps(batch)
    for a, b in zip(open_maps["encoder"], default["encoder"], strict=True):  # no causal mask there
        torch.testing.assert_close(a, b, rtol=0.0, atol=0.0)
    bag = model.attention_maps(batch, positions=False)
    # Without positions the encoder is permutation-equivariant: a shuffled source, a shuffled map.
    one = batch.src[:1]
    perm = torch.randperm(one.shape[1], generator=torch.Generator().manual_seed(0))
    mask = torch.ones_like(one, dtype=torch.bool)
    weights, shuffled = [], []
    with torch.no_grad():
        model.encode(one, mask, weights, positions=False)
        model.encode(one[:, perm], mask, shuffled, positions=False)
    torch.testing.assert_close(shuffled[0][0], weights[0][0][:, perm][:, :, perm], rtol=0.0, atol=1e-6)
    assert not torch.allclose(bag["encoder"][0], default["encoder"][0])


def test_decoder_block_refuses_a_cache_without_the_causal_mask():
    from attnlib.transformer.blocks import DecoderBlock, DecoderCache

    block = DecoderBlock(8, 2, 16)
    with pytest.raises(ValueError, match="causal=False"):
        block(torch.randn(1, 1, 8), torch.randn(1, 3, 8), cache=DecoderCache(), causal=False)


def test_cross_attention_head_shows_one_head_or_their_mean_to_model_alignments():
    from attnlib import metrics
    from attnlib.transformer import CrossAttentionHead

    task, batches = reverse_batches(n=64)
    model = model_for(task).eval()
    batch = batches[0]
    logits, cross = model(batch)
    for head in (0, 1):
        view_logits, weights = CrossAttentionHead(model, layer=0, head=head)(batch)
        torch.testing.assert_close(view_logits, logits, rtol=0.0, atol=0.0)
        torch.testing.assert_close(weights, cross[0][:, head], rtol=0.0, atol=0.0)
    _, mean = CrossAttentionHead(model)(batch)
    torch.testing.assert_close(mean, cross[-1].mean(dim=1), rtol=0.0, atol=0.0)
    predicted, gold = metrics.model_alignments(CrossAttentionHead(model, head=1), batches[:1])
    assert len(predicted) == len(batch) and 0.0 <= metrics.aer(predicted, gold) <= 1.0
