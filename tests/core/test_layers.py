"""nn.Module layers: each computes its equation with its own parameters (checked against a per-element loop
written from the paper's formula, not against the function the layer calls), and its parameters learn."""

import math

import pytest
import torch

import attnlib
from attnlib import layers

B, T, S, DQ, DK, A = 2, 3, 5, 4, 6, 7


@pytest.fixture
def qk():
    return torch.randn(B, T, DQ, dtype=torch.float64), torch.randn(B, S, DK, dtype=torch.float64)


def per_element(score_one, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """e[b, t, s] = score_one(q_bt, k_bs), one scalar at a time: the oracle every layer is checked against."""
    e = torch.empty(query.shape[0], query.shape[1], keys.shape[1], dtype=query.dtype)
    with torch.no_grad():
        for b in range(query.shape[0]):
            for t in range(query.shape[1]):
                for s in range(keys.shape[1]):
                    e[b, t, s] = score_one(query[b, t], keys[b, s])
    return e


def close(actual: torch.Tensor, expected: torch.Tensor) -> None:
    torch.testing.assert_close(actual, expected.detach(), rtol=1e-10, atol=1e-12)


def test_dot_and_scaled_dot_layers_follow_their_formulas():
    q, k = torch.randn(B, T, DQ, dtype=torch.float64), torch.randn(B, S, DQ, dtype=torch.float64)
    close(layers.DotScore()(q, k), per_element(lambda qt, ks: sum(qt[i] * ks[i] for i in range(DQ)), q, k))
    scaled = per_element(lambda qt, ks: sum(qt[i] * ks[i] for i in range(DQ)) / math.sqrt(DQ), q, k)
    close(layers.ScaledDotScore()(q, k), scaled)


def test_general_layer_is_q_transpose_W_k(qk):
    q, k = qk
    layer = layers.GeneralScore(DQ, DK).double()
    assert layer.W.shape == (DQ, DK)
    W = layer.W

    def general_one(qt, ks):
        return sum(qt[i] * W[i, j] * ks[j] for i in range(DQ) for j in range(DK))

    bilinear = per_element(general_one, q, k)
    close(layer(q, k), bilinear)


def additive_one(qt, ks, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k), every sum written out."""
    total = 0.0
    for a in range(v.shape[0]):
        pre = sum(W_q[a, i] * qt[i] for i in range(len(qt))) + sum(W_k[a, j] * ks[j] for j in range(len(ks)))
        total = total + v[a] * math.tanh(float(pre))
    return total


def test_additive_layer_is_v_transpose_tanh_of_the_projections(qk):
    q, k = qk
    layer = layers.AdditiveScore(DQ, DK, A).double()
    assert (layer.W_q.shape, layer.W_k.shape, layer.v.shape) == ((A, DQ), (A, DK), (A,))
    expected = per_element(lambda qt, ks: additive_one(qt, ks, layer.W_q, layer.W_k, layer.v), q, k)
    close(layer(q, k), expected)


def test_additive_layer_with_projected_keys_gives_same_scores(qk):
    q, k = qk
    layer = layers.AdditiveScore(DQ, DK, A).double()
    projected = layer.project_keys(k)  # (B, S, A), once per sentence
    assert projected.shape == (B, S, A)
    torch.testing.assert_close(layer(q, k, projected_keys=projected), layer(q, k))


def test_concat_layer_is_v_transpose_tanh_of_W_on_the_concatenation(qk):
    q, k = qk
    layer = layers.ConcatScore(DQ, DK, A).double()
    assert layer.W.shape == (A, DQ + DK)
    W, v = layer.W, layer.v

    def concat_one(qt, ks):
        x = torch.cat([qt, ks])  # [q_t; k_s]
        return sum(v[a] * math.tanh(float(sum(W[a, i] * x[i] for i in range(DQ + DK)))) for a in range(A))

    close(layer(q, k), per_element(concat_one, q, k))


def test_location_layer_scores_positions_with_the_first_S_rows_of_W(qk):
    q, k = qk
    layer = layers.LocationScore(DQ, max_source_len=8).double()
    W = layer.W
    expected = torch.empty(B, T, S, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            for s in range(S):  # row s of W scores position s, whatever the key there
                expected[b, t, s] = sum(W[s, i] * q[b, t, i] for i in range(DQ))
    close(layer(q, k), expected)
    close(layer(q, torch.zeros_like(k)), expected)  # content plays no part


def test_cosine_layer_is_beta_times_the_cosine():
    q, k = torch.randn(B, T, DQ, dtype=torch.float64), torch.randn(B, S, DQ, dtype=torch.float64)
    layer = layers.CosineScore(init_beta=3.0).double()
    torch.testing.assert_close(layer.beta, torch.tensor(3.0, dtype=torch.float64), rtol=1e-6, atol=0)

    beta = float(layer.beta.detach())  # exp(log_beta): 3 up to the float32 rounding of log(3)

    def cosine_one(qt, ks):
        dot = sum(qt[i] * ks[i] for i in range(DQ))
        return beta * dot / (math.sqrt(sum(x * x for x in qt)) * math.sqrt(sum(x * x for x in ks)))

    close(layer(q, k), per_element(cosine_one, q, k))


def test_cosine_beta_is_learned_and_stays_positive():
    q, k = torch.randn(B, T, DQ), torch.randn(B, S, DQ)
    layer = layers.CosineScore(init_beta=0.5)
    opt = torch.optim.SGD(layer.parameters(), lr=1.0)
    for _ in range(20):  # push beta towards -inf: an unconstrained beta would go negative at once
        opt.zero_grad()
        layer(q, k).abs().sum().backward()
        opt.step()
    assert 0 < layer.beta.item() < 0.5


def test_position_predictor_is_the_length_times_a_sigmoid():
    q, lengths = torch.randn(B, T, DQ, dtype=torch.float64), torch.tensor([4, 9])
    layer = layers.PositionPredictor(DQ, A).double()
    W_p, v_p = layer.W_p.detach(), layer.v_p.detach()
    expected = torch.empty(B, T, dtype=torch.float64)
    for b in range(B):
        for t in range(T):  # p_t = S_b · sigmoid(v_p^T tanh(W_p q_t))
            hidden = [math.tanh(float(sum(W_p[a, i] * q[b, t, i] for i in range(DQ)))) for a in range(A)]
            logit = float(sum(v_p[a] * hidden[a] for a in range(A)))
            expected[b, t] = int(lengths[b]) / (1 + math.exp(-logit))
    close(layer(q, lengths), expected)


def test_attention_module_is_softmax_over_attended_positions_then_weighted_sum(qk):
    q, k = qk
    v = torch.randn(B, S, 3, dtype=torch.float64)
    lengths = [5, 2]
    pad = attnlib.lengths_to_mask(torch.tensor(lengths), S)
    attention = layers.Attention(layers.AdditiveScore(DQ, DK, A).double())
    context, weights = attention(q, k, v, pad)
    W_q, W_k, v_a = (p.detach() for p in (attention.score.W_q, attention.score.W_k, attention.score.v))
    for b in range(B):
        for t in range(T):
            e = [additive_one(q[b, t], k[b, s], W_q, W_k, v_a) for s in range(lengths[b])]
            z = sum(math.exp(float(x)) for x in e)
            alpha = [math.exp(float(x)) / z for x in e] + [0.0] * (S - lengths[b])  # padding gets 0
            close(weights[b, t], torch.tensor(alpha, dtype=torch.float64))
            close(context[b, t], sum(alpha[s] * v[b, s] for s in range(S)))


def test_attention_module_passes_projected_keys_to_its_score(qk):
    q, k = qk
    v = torch.randn(B, S, 3, dtype=torch.float64)
    attention = layers.Attention(layers.AdditiveScore(DQ, DK, A).double())
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
