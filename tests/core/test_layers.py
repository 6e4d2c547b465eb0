"""nn.Module layers: each equals the functional call with its own parameters, and its parameters learn."""

import pytest
import torch

import attnlib
from attnlib import layers, local, scores

B, T, S, DQ, DK, A = 2, 3, 5, 4, 6, 7


@pytest.fixture
def qk():
    return torch.randn(B, T, DQ), torch.randn(B, S, DK)


def test_dot_and_scaled_dot_layers_equal_functions():
    q, k = torch.randn(B, T, DQ), torch.randn(B, S, DQ)
    assert torch.equal(layers.DotScore()(q, k), scores.dot(q, k))
    assert torch.equal(layers.ScaledDotScore()(q, k), scores.scaled_dot(q, k))


def test_general_layer_equals_function(qk):
    q, k = qk
    layer = layers.GeneralScore(DQ, DK)
    assert layer.W.shape == (DQ, DK)
    assert torch.equal(layer(q, k), scores.general(q, k, layer.W))


def test_additive_layer_equals_function(qk):
    q, k = qk
    layer = layers.AdditiveScore(DQ, DK, A)
    assert (layer.W_q.shape, layer.W_k.shape, layer.v.shape) == ((A, DQ), (A, DK), (A,))
    assert torch.equal(layer(q, k), scores.additive(q, k, layer.W_q, layer.W_k, layer.v))


def test_additive_layer_with_projected_keys_gives_same_scores(qk):
    q, k = qk
    layer = layers.AdditiveScore(DQ, DK, A)
    projected = layer.project_keys(k)  # (B, S, A), once per sentence
    assert projected.shape == (B, S, A)
    torch.testing.assert_close(layer(q, k, projected_keys=projected), layer(q, k))


def test_concat_layer_equals_function(qk):
    q, k = qk
    layer = layers.ConcatScore(DQ, DK, A)
    assert layer.W.shape == (A, DQ + DK)
    assert torch.equal(layer(q, k), scores.concat(q, k, layer.W, layer.v))


def test_location_layer_uses_key_length_as_s(qk):
    q, k = qk
    layer = layers.LocationScore(DQ, max_source_len=8)
    assert torch.equal(layer(q, k), scores.location(q, layer.W, S))


def test_cosine_layer_equals_function_with_its_beta():
    q, k = torch.randn(B, T, DQ), torch.randn(B, S, DQ)
    layer = layers.CosineScore(init_beta=3.0)
    torch.testing.assert_close(layer.beta, torch.tensor(3.0))
    torch.testing.assert_close(layer(q, k), scores.cosine(q, k, 3.0))


def test_cosine_beta_is_learned_and_stays_positive():
    q, k = torch.randn(B, T, DQ), torch.randn(B, S, DQ)
    layer = layers.CosineScore(init_beta=0.5)
    opt = torch.optim.SGD(layer.parameters(), lr=1.0)
    for _ in range(20):  # push beta towards -inf: an unconstrained beta would go negative at once
        opt.zero_grad()
        layer(q, k).abs().sum().backward()
        opt.step()
    assert 0 < layer.beta.item() < 0.5


def test_position_predictor_equals_function():
    q, lengths = torch.randn(B, T, DQ), torch.tensor([4, 9])
    layer = layers.PositionPredictor(DQ, A)
    assert torch.equal(layer(q, lengths), local.predict_position(q, layer.W_p, layer.v_p, lengths))


def test_attention_module_equals_attend_on_its_scores(qk):
    q, k = qk
    v = torch.randn(B, S, 3)
    pad = attnlib.lengths_to_mask(torch.tensor([5, 2]), S)
    attention = layers.Attention(layers.AdditiveScore(DQ, DK, A))
    context, weights = attention(q, k, v, pad)
    expected = attnlib.attend(attention.score(q, k), v, pad)
    assert torch.equal(context, expected[0]) and torch.equal(weights, expected[1])


def test_attention_module_passes_projected_keys_to_its_score(qk):
    q, k = qk
    v = torch.randn(B, S, 3)
    attention = layers.Attention(layers.AdditiveScore(DQ, DK, A))
    projected = attention.score.project_keys(k)
    torch.testing.assert_close(attention(q, k, v, projected_keys=projected)[0], attention(q, k, v)[0])


@pytest.mark.parametrize("name", ["general", "additive", "concat", "location", "cosine"])
def test_gradients_reach_every_parameter(name):
    d = DQ  # dot-like scores need dq == dk
    score = layers.make_score(name, d, d, attention_size=A, max_source_len=8)
    q, k, v = torch.randn(B, T, d), torch.randn(B, S, d), torch.randn(B, S, 3)
    context, _ = layers.Attention(score)(q, k, v)
    context.square().sum().backward()
    assert len(list(score.parameters())) > 0
    for pname, param in score.named_parameters():
        assert param.grad is not None and param.grad.abs().sum() > 0, pname


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        ("dot", layers.DotScore),
        ("scaled_dot", layers.ScaledDotScore),
        ("general", layers.GeneralScore),
        ("additive", layers.AdditiveScore),
        ("concat", layers.ConcatScore),
        ("location", layers.LocationScore),
        ("cosine", layers.CosineScore),
    ],
)
def test_make_score_builds_the_named_module(name, cls):
    assert isinstance(layers.make_score(name, DQ, DQ, attention_size=A, max_source_len=8), cls)


def test_initialisation_is_deterministic_under_manual_seed():
    torch.manual_seed(123)
    first = layers.AdditiveScore(DQ, DK, A).state_dict()
    torch.manual_seed(123)
    second = layers.AdditiveScore(DQ, DK, A).state_dict()
    assert all(torch.equal(first[key], second[key]) for key in first)
