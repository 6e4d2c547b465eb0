"""attnlib.grading.stepwise: a Luong decoder with input feeding, its step a function passed in (set 5 q4)."""

import pytest
import torch

from attnlib import masked_softmax
from attnlib.grading import stepwise


def step(emb_prev, s_prev, s_tilde_prev, H, mask, cell, W_a, W_c, b_c):
    """Luong's step with input feeding, written from the equations (the set's model answer does the same)."""
    s = stepwise.gru_cell(torch.cat([emb_prev, s_tilde_prev], dim=-1), s_prev, cell)  # (B, d_s)
    alpha = masked_softmax(torch.einsum("bd,de,bse->bs", s, W_a, H), mask)  # (B, S): s_tᵀ W_a h_s
    context = torch.einsum("bs,bsd->bd", alpha, H)  # (B, d_h)
    return s, alpha, torch.tanh(torch.cat([context, s], dim=-1) @ W_c.T + b_c)


def uniform_step(emb_prev, s_prev, s_tilde_prev, H, mask, cell, W_a, W_c, b_c):
    return step(emb_prev, s_prev, s_tilde_prev, H, mask, cell, torch.zeros_like(W_a), W_c, b_c)


@pytest.fixture(scope="module")
def trained():
    return stepwise.load(step, stepwise.train(step, seed=0))


def test_a_correct_step_trains_a_decoder_that_reverses_and_looks_where_it_copies(trained):
    metrics = stepwise.evaluate(trained, ("uniform", "hard"))
    assert metrics["exact_match"] > 0.3 and metrics["aer"] < 0.25
    assert metrics["lost_uniform"] > 0.25  # it relies on where it looks


def test_a_step_that_never_looks_aligns_nothing_and_loses_nothing_to_uniform_weights():
    metrics = stepwise.evaluate(stepwise.load(uniform_step, stepwise.train(uniform_step, seed=0)))
    assert metrics["aer"] > 0.5 and abs(metrics["lost_uniform"]) < 0.05


@pytest.mark.slow  # trains a model twice
def test_training_is_reproducible_from_its_seed():
    a, b = stepwise.train(step, seed=3), stepwise.train(step, seed=3)
    assert all(torch.equal(a[k], b[k]) for k in a)


def test_uniform_perturbation_spreads_the_weights_over_the_real_positions_only(trained):
    batch = stepwise.test_batch()
    with stepwise.perturbed(trained, "uniform"), torch.no_grad():
        _, weights = trained(batch)  # (B, T, S)
    real = batch.src_mask[:, None, :].expand_as(weights)
    expected = (1.0 / batch.src_lengths.float())[:, None, None].expand_as(weights)
    assert torch.allclose(weights[real], expected[real]) and bool((weights[~real] == 0).all())
    assert trained.decoder.perturb is None  # the block restores the trained weights' use


def test_hard_perturbation_is_one_hot(trained):
    with stepwise.perturbed(trained, "hard"), torch.no_grad():
        _, weights = trained(stepwise.test_batch())
    assert bool(((weights == 0) | (weights == 1)).all()) and torch.equal(
        weights.sum(-1), torch.ones(weights.shape[:2])
    )


def test_bad_input_is_refused_by_name(trained):
    with pytest.raises(ValueError, match="mode must be one of"):
        with stepwise.perturbed(trained, "permuted"):
            pass
    with pytest.raises(TypeError, match=r"must return \(s_t, alpha_t, s_tilde_t\)"):
        stepwise.evaluate(stepwise.build(lambda *args: args[1]))
    cell = tuple(torch.zeros(s) for s in [(6, 4), (6, 2), (6,), (6,)])
    with pytest.raises(ValueError, match="x has size 3 but the cell's W_ih expects inputs of size 4"):
        stepwise.gru_cell(torch.zeros(1, 3), torch.zeros(1, 2), cell)


def test_the_earlier_name_is_the_same_module():
    """Notebooks saved before the harness moved to attnlib.grading import it by its earlier name."""
    import attnlib.seq2seq.stepwise as earlier
    from attnlib.seq2seq.stepwise import THRESHOLDS, gru_cell

    assert earlier is stepwise and gru_cell is stepwise.gru_cell and THRESHOLDS is stepwise.THRESHOLDS
