"""torch.autograd.gradcheck (float64) for every differentiable function of the core."""

import pytest
import torch
from torch.autograd import gradcheck

import attnlib
from attnlib import local, scores

T, S, DQ, DK, A = 2, 4, 3, 5, 3


def rand(*shape: int) -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.float64, requires_grad=True)


SCORE_CASES = {
    "dot": (scores.dot, lambda: (rand(2, T, DQ), rand(2, S, DQ))),
    "scaled_dot": (scores.scaled_dot, lambda: (rand(2, T, DQ), rand(2, S, DQ))),
    "general": (scores.general, lambda: (rand(2, T, DQ), rand(2, S, DK), rand(DQ, DK))),
    "additive": (
        scores.additive,
        lambda: (rand(2, T, DQ), rand(2, S, DK), rand(A, DQ), rand(A, DK), rand(A)),
    ),
    "additive_from_projections": (
        scores.additive_from_projections,
        lambda: (rand(2, T, A), rand(2, S, A), rand(A)),
    ),
    "concat": (scores.concat, lambda: (rand(2, T, DQ), rand(2, S, DK), rand(A, DQ + DK), rand(A))),
    "cosine": (
        scores.cosine,
        lambda: (rand(2, T, DQ), rand(2, S, DQ), torch.tensor(1.7, dtype=torch.float64, requires_grad=True)),
    ),
    "location": (lambda q, W: scores.location(q, W, S), lambda: (rand(2, T, DQ), rand(S + 2, DQ))),
}


@pytest.mark.parametrize("name", list(SCORE_CASES))
def test_score_gradients_match_finite_differences(name):
    fn, make_inputs = SCORE_CASES[name]
    assert gradcheck(fn, make_inputs())


def test_masked_softmax_gradients_match_finite_differences():
    mask = attnlib.lengths_to_mask(torch.tensor([3, 0]), S)  # includes a fully masked example
    assert gradcheck(lambda e: attnlib.masked_softmax(e, mask), (rand(2, T, S),))


def test_attend_gradients_match_finite_differences():
    mask = attnlib.lengths_to_mask(torch.tensor([0, 2]), S)
    assert gradcheck(lambda e, v: attnlib.attend(e, v, mask), (rand(2, T, S), rand(2, S, 3)))


def test_local_weights_gradients_match_finite_differences():
    # Centres away from the window edges: the window itself is a step and has no derivative.
    p = torch.tensor([[0.6, 2.3], [1.4, 3.2]], dtype=torch.float64, requires_grad=True)
    mask = attnlib.lengths_to_mask(torch.tensor([4, 3]), S)
    assert gradcheck(lambda e, p: local.weights(e, p, 1.5, mask), (rand(2, T, S), p))


def test_predict_position_gradients_match_finite_differences():
    lengths = torch.tensor([4, 7])
    assert gradcheck(
        lambda q, W, v: local.predict_position(q, W, v, lengths), (rand(2, T, DQ), rand(A, DQ), rand(A))
    )
