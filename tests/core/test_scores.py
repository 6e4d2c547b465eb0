"""Each score equation against an independent per-element loop (float64), plus shape conventions."""

import math

import pytest
import torch

from attnlib import scores

B, T, S, DQ, DK, A = 2, 3, 4, 5, 6, 7


def rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64)


def loop(query: torch.Tensor, keys: torch.Tensor, score_one) -> torch.Tensor:
    """e[b, t, s] = score_one(q[b, t], k[b, s]) one element at a time: the oracle."""
    out = torch.empty(query.shape[0], query.shape[1], keys.shape[1], dtype=torch.float64)
    for b in range(query.shape[0]):
        for t in range(query.shape[1]):
            for s in range(keys.shape[1]):
                out[b, t, s] = score_one(query[b, t], keys[b, s])
    return out


def test_dot_matches_loop():
    q, k = rand(B, T, DQ), rand(B, S, DQ)
    expected = loop(q, k, lambda qt, ks: sum(qt[i] * ks[i] for i in range(DQ)))
    torch.testing.assert_close(scores.dot(q, k), expected)


def test_scaled_dot_matches_loop():
    q, k = rand(B, T, DQ), rand(B, S, DQ)
    expected = loop(q, k, lambda qt, ks: sum(qt[i] * ks[i] for i in range(DQ)) / math.sqrt(DQ))
    torch.testing.assert_close(scores.scaled_dot(q, k), expected)


def test_general_matches_loop():
    q, k, W = rand(B, T, DQ), rand(B, S, DK), rand(DQ, DK)
    expected = loop(q, k, lambda qt, ks: sum(qt[i] * W[i, j] * ks[j] for i in range(DQ) for j in range(DK)))
    torch.testing.assert_close(scores.general(q, k, W), expected)


def additive_one(qt, ks, W_q, W_k, v):
    total = 0.0
    for a in range(v.shape[0]):
        pre = sum(W_q[a, i] * qt[i] for i in range(qt.shape[0])) + sum(
            W_k[a, j] * ks[j] for j in range(ks.shape[0])
        )
        total += v[a] * math.tanh(pre)
    return total


def test_additive_matches_loop():
    q, k, W_q, W_k, v = rand(B, T, DQ), rand(B, S, DK), rand(A, DQ), rand(A, DK), rand(A)
    expected = loop(q, k, lambda qt, ks: additive_one(qt, ks, W_q, W_k, v))
    torch.testing.assert_close(scores.additive(q, k, W_q, W_k, v), expected)


def test_concat_matches_loop_over_concatenated_input():
    q, k, W, v = rand(B, T, DQ), rand(B, S, DK), rand(A, DQ + DK), rand(A)

    def concat_one(qt, ks):
        x = torch.cat([qt, ks])  # [q_t; k_s]
        return sum(v[a] * math.tanh(sum(W[a, i] * x[i] for i in range(DQ + DK))) for a in range(A))

    torch.testing.assert_close(scores.concat(q, k, W, v), loop(q, k, concat_one))


def test_concat_equals_additive_with_split_matrix():
    q, k, W_q, W_k, v = rand(B, T, DQ), rand(B, S, DK), rand(A, DQ), rand(A, DK), rand(A)
    W = torch.cat([W_q, W_k], dim=1)  # [W_q W_k]
    torch.testing.assert_close(scores.concat(q, k, W, v), scores.additive(q, k, W_q, W_k, v))


def test_additive_from_projections_equals_additive():
    q, k, W_q, W_k, v = rand(B, T, DQ), rand(B, S, DK), rand(A, DQ), rand(A, DK), rand(A)
    from_proj = scores.additive_from_projections(q @ W_q.T, k @ W_k.T, v)
    torch.testing.assert_close(from_proj, scores.additive(q, k, W_q, W_k, v))


def test_cosine_matches_loop():
    q, k = rand(B, T, DQ), rand(B, S, DQ)
    beta = 2.5

    def cos_one(qt, ks):
        dot = sum(qt[i] * ks[i] for i in range(DQ))
        return beta * dot / (math.sqrt(sum(x * x for x in qt)) * math.sqrt(sum(x * x for x in ks)))

    torch.testing.assert_close(scores.cosine(q, k, beta), loop(q, k, cos_one))


def test_cosine_of_zero_vector_is_zero_not_nan():
    q, k = torch.zeros(1, 2, DQ, dtype=torch.float64), rand(1, S, DQ)
    assert torch.equal(scores.cosine(q, k), torch.zeros(1, 2, S, dtype=torch.float64))


def test_cosine_accepts_a_tensor_beta():
    q, k = rand(B, T, DQ), rand(B, S, DQ)
    torch.testing.assert_close(
        scores.cosine(q, k, torch.tensor(3.0, dtype=torch.float64)), 3 * scores.cosine(q, k)
    )


def test_location_matches_loop_and_ignores_content():
    S_max = 9
    q, W = rand(B, T, DQ), rand(S_max, DQ)
    expected = torch.empty(B, T, S, dtype=torch.float64)
    for b in range(B):
        for t in range(T):
            for s in range(S):
                expected[b, t, s] = sum(W[s, i] * q[b, t, i] for i in range(DQ))
    torch.testing.assert_close(scores.location(q, W, S), expected)


@pytest.mark.parametrize("name", ["dot", "scaled_dot", "cosine"])
def test_unbatched_inputs_give_unbatched_scores(name):
    fn = getattr(scores, name)
    q, k = rand(T, DQ), rand(S, DQ)
    out = fn(q, k)
    assert out.shape == (T, S)
    torch.testing.assert_close(out, fn(q[None], k[None])[0])


def test_any_number_of_leading_batch_dims():
    q, k, W_q, W_k, v = rand(2, 3, T, DQ), rand(2, 3, S, DK), rand(A, DQ), rand(A, DK), rand(A)
    out = scores.additive(q, k, W_q, W_k, v)
    assert out.shape == (2, 3, T, S)
    torch.testing.assert_close(out[1, 2], scores.additive(q[1, 2], k[1, 2], W_q, W_k, v))


def test_leading_batch_dims_broadcast():
    q, k = rand(B, T, DQ), rand(S, DQ)  # one set of keys shared by the batch
    torch.testing.assert_close(scores.dot(q, k), scores.dot(q, k.expand(B, S, DQ)))
