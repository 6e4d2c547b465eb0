"""fast_additive=True: Bahdanau and the concat / additive Luong models give the same loss and gradients."""

import pytest
import torch

from attnlib.seq2seq import build_model
from attnlib.train import teacher_forced_loss

from .tiny import VOCAB, tiny_batch, tiny_model

FAST = ["bahdanau", "bahdanau-lstm-encoder", "luong-concat", "luong-additive"]
TIGHT = {"rtol": 1e-10, "atol": 1e-12}  # float64: the chunked sums add in another order


def loss_and_gradients(name: str, fast: bool, **options):
    torch.manual_seed(0)  # the flag creates no parameter: both models get the same weights
    model = tiny_model(name, fast_additive=fast, **options).double()
    batch = tiny_batch()
    loss = teacher_forced_loss(model, batch)
    return loss, torch.autograd.grad(loss, list(model.parameters()))


@pytest.mark.parametrize("name", FAST)
def test_the_fast_path_gives_the_same_loss_and_gradients(name):
    loss, grads = loss_and_gradients(name, fast=False)
    fast_loss, fast_grads = loss_and_gradients(name, fast=True)
    torch.testing.assert_close(fast_loss, loss, **TIGHT)
    assert len(fast_grads) == len(grads)
    for fast_grad, grad in zip(fast_grads, grads, strict=True):
        torch.testing.assert_close(fast_grad, grad, **TIGHT)


def test_the_luong_step_loop_with_input_feeding_takes_the_fast_path_too():
    loss, grads = loss_and_gradients("luong-concat", fast=False, input_feed=True)
    fast_loss, fast_grads = loss_and_gradients("luong-concat", fast=True, input_feed=True)
    torch.testing.assert_close(fast_loss, loss, **TIGHT)
    for fast_grad, grad in zip(fast_grads, grads, strict=True):
        torch.testing.assert_close(fast_grad, grad, **TIGHT)


@pytest.mark.parametrize("name", ["bahdanau", "luong-concat"])
def test_the_attention_weights_are_the_same(name):
    torch.manual_seed(0)
    slow = tiny_model(name).double()
    fast = tiny_model(name, fast_additive=True).double()
    fast.load_state_dict(slow.state_dict())
    batch = tiny_batch()
    torch.testing.assert_close(fast(batch)[1], slow(batch)[1], **TIGHT)


def test_the_fast_path_is_off_by_default():
    assert tiny_model("bahdanau").config.fast_additive is False


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("plain", {}, "not 'plain'"),
        ("luong", {"score": "general"}, "score 'additive' or 'concat'"),
        ("luong", {"score": "concat", "local": "m"}, "global attention"),
    ],
)
def test_the_flag_is_refused_where_there_is_no_additive_attention(kind, options, message):
    with pytest.raises(ValueError, match=message):
        build_model(kind, VOCAB, VOCAB, emb=8, hidden=8, attn=8, device="cpu", fast_additive=True, **options)
