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
