"""Specification of attnlib.seq2seq: encoder, decoders and the model factory."""

import pytest
import torch

from attnlib.seq2seq import ContextGRUCell, build_model, final_states
from attnlib.train import loss_fn

from .tiny import ATTENTION, GLOBAL_ATTENTION, KINDS, LUONG_NO_FEED, VOCAB, tiny_batch, tiny_model


@pytest.mark.parametrize("name", list(KINDS))
def test_every_kind_runs_forward_and_backward(name):
    model, batch = tiny_model(name), tiny_batch()
    logits, weights = model(batch)
    B, T = batch.tgt_in.shape
    assert logits.shape == (B, T, len(VOCAB))
    assert (weights is None) == (name == "plain")
    if weights is not None:
        assert weights.shape == (B, T, batch.src.shape[1])
    loss_fn(logits, batch.tgt_out).backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert all(g is not None and torch.isfinite(g).all() for g in grads)


@pytest.mark.parametrize("name", GLOBAL_ATTENTION)
def test_global_weights_sum_to_one_over_real_tokens_and_are_zero_on_padding(name):
    model, batch = tiny_model(name), tiny_batch()
    _, weights = model(batch)  # (B, T, S)
    pad = ~batch.src_mask[:, None, :].expand_as(weights)
    assert torch.all(weights[pad] == 0)
    torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:2]))


@pytest.mark.parametrize("name", ["luong-local-m", "luong-local-p"])
def test_local_weights_are_zero_on_padding_and_sum_to_at_most_one(name):
    model, batch = tiny_model(name), tiny_batch()
    _, weights = model(batch)
    assert torch.all(weights[~batch.src_mask[:, None, :].expand_as(weights)] == 0)
    assert torch.all(weights.sum(-1) <= 1 + 1e-6)  # not renormalised after the Gaussian (Luong et al.)


@pytest.mark.parametrize("name", LUONG_NO_FEED)
def test_vectorised_luong_equals_the_per_step_loop(name):
    model, batch = tiny_model(name), tiny_batch()
    fast_logits, fast_weights = model(batch, vectorised=True)
    slow_logits, slow_weights = model(batch, vectorised=False)
    torch.testing.assert_close(fast_logits, slow_logits)
    torch.testing.assert_close(fast_weights, slow_weights)
    fast_grads = torch.autograd.grad(loss_fn(fast_logits, batch.tgt_out), list(model.parameters()))
    slow_grads = torch.autograd.grad(loss_fn(slow_logits, batch.tgt_out), list(model.parameters()))
    for fast, slow in zip(fast_grads, slow_grads, strict=True):
        torch.testing.assert_close(fast, slow)


@pytest.mark.parametrize("name", ["plain", "bahdanau"])
def test_teacher_forcing_equals_stepping_the_decoder(name):
    model, batch = tiny_model(name), tiny_batch()
    logits, weights = model(batch)
    state = model.start(batch.src, batch.src_lengths)
    for t in range(batch.tgt_in.shape[1]):
        step_logits, step_weights, state = model.decoder.step(batch.tgt_in[:, t], state)
        torch.testing.assert_close(step_logits, logits[:, t])
        if weights is not None:
            torch.testing.assert_close(step_weights, weights[:, t])


def test_bahdanau_scores_the_previous_state():
    """The first step's query is s_0 (from the encoder), so its weights do not depend on y_0 at all."""
    model, batch = tiny_model("bahdanau"), tiny_batch()
    state = model.start(batch.src, batch.src_lengths)
    _, w_a, _ = model.decoder.step(torch.full((3,), 4), state)
    _, w_b, _ = model.decoder.step(torch.full((3,), 7), state)
    torch.testing.assert_close(w_a, w_b)


def test_luong_scores_the_current_state():
    """Luong's first query is s_1, which has read y_0: a different input gives different weights."""
    model, batch = tiny_model("luong-general"), tiny_batch()
    state = model.start(batch.src, batch.src_lengths)
    _, w_a, _ = model.decoder.step(torch.full((3,), 4), state)
    _, w_b, _ = model.decoder.step(torch.full((3,), 7), state)
    assert not torch.allclose(w_a, w_b)


def test_context_gru_cell_is_the_gru_of_the_notes():
    """Oracle: the equations of note 000 written with separate W_z, U_z, C_z, ... matrices, per gate."""
    d_y, d_c, d_s = 3, 4, 5
    cell = ContextGRUCell(d_y, d_c, d_s)
    y, c, s = torch.randn(2, d_y), torch.randn(2, d_c), torch.randn(2, d_s)
    W, b = cell.W.weight, cell.W.bias  # (3 d_s, d_y), (3 d_s,)
    C, U_zr, U = cell.C.weight, cell.U_zr.weight, cell.U.weight
    W_z, W_r, W_s = W.split(d_s)
    b_z, b_r, b_s = b.split(d_s)
    C_z, C_r, C_s = C.split(d_s)
    U_z, U_r = U_zr.split(d_s)
    z = torch.sigmoid(y @ W_z.T + s @ U_z.T + c @ C_z.T + b_z)
    r = torch.sigmoid(y @ W_r.T + s @ U_r.T + c @ C_r.T + b_r)
    candidate = torch.tanh(y @ W_s.T + (r * s) @ U.T + c @ C_s.T + b_s)
    expected = z * s + (1 - z) * candidate
    torch.testing.assert_close(cell(cell.input_proj(y), c, s), expected)


def test_encoder_states_do_not_depend_on_padding():
    model, batch = tiny_model("bahdanau"), tiny_batch()
    H, s0 = model.encode(batch.src, batch.src_lengths)
    n = int(batch.src_lengths[0])
    H_alone, s0_alone = model.encode(batch.src[:1, :n], batch.src_lengths[:1])
    torch.testing.assert_close(H[0, :n], H_alone[0])
    torch.testing.assert_close(s0[0], s0_alone[0])
    assert torch.all(H[0, n:] == 0)


def test_final_states_are_forward_last_and_backward_first():
    H = torch.arange(2 * 4 * 6, dtype=torch.float).reshape(2, 4, 6)  # (B, S, d_h), halves of size 3
    lengths = torch.tensor([4, 2])
    summary = final_states(H, lengths)
    torch.testing.assert_close(summary[1], torch.cat([H[1, 1, :3], H[1, 0, 3:]]))
    torch.testing.assert_close(summary[0], torch.cat([H[0, 3, :3], H[0, 0, 3:]]))


@pytest.mark.parametrize("name", ATTENTION)
def test_models_are_seed_reproducible(name):
    torch.manual_seed(3)
    a = tiny_model(name)(tiny_batch())[0]
    torch.manual_seed(3)
    b = tiny_model(name)(tiny_batch())[0]
    torch.testing.assert_close(a, b)


def test_build_model_refuses_luong_options_for_other_kinds():
    with pytest.raises(ValueError, match="input_feed"):
        build_model("bahdanau", VOCAB, VOCAB, input_feed=True, device="cpu")


def test_build_model_refuses_unknown_options_and_kinds():
    with pytest.raises(ValueError, match="hiden"):
        build_model("luong", VOCAB, VOCAB, hiden=8, device="cpu")
    with pytest.raises(ValueError, match="kind"):
        build_model("transformer", VOCAB, VOCAB, device="cpu")
