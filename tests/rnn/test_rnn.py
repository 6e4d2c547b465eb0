"""attnlib.rnn as a specification: the Jacobian product against autograd, ρ^k for ρ·Q, the tanh bound,
the spectral-radius helper, clipping, and errors that name the argument (float64)."""

import math

import pytest
import torch
from torch import nn

from attnlib import classifier, data, rnn

D_H, D_X, T = 6, 3, 12
NONLINEARITIES = ["linear", "tanh"]


def weights(radius: float = 0.9, kind: str = "gaussian"):
    W_h = rnn.recurrent_matrix(D_H, radius, kind, seed=1)
    W_x = torch.randn(D_H, D_X, dtype=torch.float64)
    return W_h, W_x, torch.randn(D_H, dtype=torch.float64)


def sequence(length: int = T) -> torch.Tensor:
    return torch.randn(length, D_X, dtype=torch.float64)


def test_unroll_matches_torch_rnn_cell():
    W_h, W_x, b = weights()
    xs = sequence()
    cell = nn.RNNCell(D_X, D_H).double()
    with torch.no_grad():
        cell.weight_hh.copy_(W_h), cell.weight_ih.copy_(W_x), cell.bias_ih.copy_(b), cell.bias_hh.zero_()
    h, expected = torch.zeros(D_H, dtype=torch.float64), []
    for x in xs:
        h = cell(x, h)
        expected.append(h)
    states, _ = rnn.unroll(xs, W_h, W_x, b, nonlinearity="tanh")
    torch.testing.assert_close(states, torch.stack(expected).detach())


@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
@pytest.mark.parametrize("k", [1, 2, 5])
def test_jacobian_product_equals_autograd(nonlinearity, k):
    W_h, W_x, b = weights(1.2)
    xs = sequence()
    states, pre = rnn.unroll(xs, W_h, W_x, b, nonlinearity=nonlinearity)
    start = states[T - k - 1]  # h_{T-k}

    def k_steps(h):
        return rnn.unroll(xs[T - k :], W_h, W_x, b, h, nonlinearity)[0][-1]

    expected = torch.autograd.functional.jacobian(k_steps, start)
    torch.testing.assert_close(rnn.jacobian_product(W_h, pre[T - k :], nonlinearity), expected)


def test_the_notes_denominator_layout_is_the_transpose():
    W_h, W_x, b = weights()
    _, pre = rnn.unroll(sequence(4), W_h, W_x, b)
    notes = torch.eye(D_H, dtype=torch.float64)  # Π W_hᵀ diag(φ'(z_i)), i = t-k+1..t, left to right
    for z in pre:
        notes = notes @ (W_h.T @ torch.diag(rnn.phi_prime(z)))
    torch.testing.assert_close(notes, rnn.jacobian_product(W_h, pre).T)


@pytest.mark.parametrize("nonlinearity", NONLINEARITIES)
def test_gradient_norms_explicit_equals_autograd(nonlinearity):
    W_h, W_x, b = weights(1.1)
    xs = sequence()
    explicit = rnn.gradient_norms(xs, W_h, W_x, b, nonlinearity=nonlinearity, method="explicit")
    autograd = rnn.gradient_norms(xs, W_h, W_x, b, nonlinearity=nonlinearity, method="autograd")
    assert explicit.shape == (T,)
    torch.testing.assert_close(explicit, autograd)


@pytest.mark.parametrize("radius", [0.7, 1.0, 1.3])
def test_linear_norms_of_rho_times_orthogonal_are_rho_to_the_k(radius):
    W_h, W_x, b = weights(radius, "orthogonal")
    norms = rnn.gradient_norms(sequence(), W_h, W_x, b, nonlinearity="linear")
    expected = radius ** torch.arange(1, T + 1, dtype=torch.float64)
    torch.testing.assert_close(norms, expected, rtol=1e-10, atol=0)


@pytest.mark.parametrize("radius", [0.7, 1.0, 1.3])
def test_tanh_norms_at_most_linear_norms_for_rho_times_orthogonal(radius):
    W_h, W_x, b = weights(radius, "orthogonal")
    xs = sequence()
    tanh = rnn.gradient_norms(xs, W_h, W_x, b, nonlinearity="tanh")
    linear = rnn.gradient_norms(xs, W_h, W_x, b, nonlinearity="linear")
    assert bool((tanh <= linear * (1 + 1e-12)).all())
    assert tanh[-1] < linear[-1]  # strictly: tanh' < 1 wherever z != 0


def test_tanh_norms_below_the_singular_value_bound():
    W_h, W_x, b = weights(1.3)  # non-normal: the bound is σ_max^k, not ρ^k
    sigma_max = float(torch.linalg.matrix_norm(W_h, ord=2))
    norms = rnn.gradient_norms(sequence(), W_h, W_x, b, nonlinearity="tanh")
    assert bool((norms <= sigma_max ** torch.arange(1, T + 1, dtype=torch.float64) * (1 + 1e-12)).all())


@pytest.mark.parametrize("kind", ["gaussian", "orthogonal"])
@pytest.mark.parametrize("radius", [0.5, 1.0, 1.7])
def test_recurrent_matrix_has_the_requested_spectral_radius(kind, radius):
    W = rnn.recurrent_matrix(16, radius, kind, seed=3)
    assert W.shape == (16, 16) and W.dtype == torch.float64
    assert rnn.spectral_radius(W) == pytest.approx(radius, rel=1e-10)


def test_orthogonal_recurrent_matrix_has_every_eigenvalue_on_the_circle():
    W = rnn.recurrent_matrix(16, 0.8, "orthogonal")
    torch.testing.assert_close(torch.linalg.eigvals(W).abs(), torch.full((16,), 0.8, dtype=torch.float64))


def test_recurrent_matrix_is_deterministic_by_seed():
    assert torch.equal(rnn.recurrent_matrix(8, 1.0, seed=5), rnn.recurrent_matrix(8, 1.0, seed=5))
    assert not torch.equal(rnn.recurrent_matrix(8, 1.0, seed=5), rnn.recurrent_matrix(8, 1.0, seed=6))


def test_cell_gradient_norms_of_an_rnn_cell_equal_the_explicit_product():
    cell = nn.RNNCell(D_X, D_H).double()
    xs = sequence()
    b = (cell.bias_ih + cell.bias_hh).detach()
    explicit = rnn.gradient_norms(
        xs, cell.weight_hh.detach(), cell.weight_ih.detach(), b, nonlinearity="tanh"
    )
    torch.testing.assert_close(rnn.cell_gradient_norms(cell, xs), explicit)


def test_cell_gradient_norms_accept_a_layer_and_share_its_weights():
    layer = nn.GRU(D_X, D_H, batch_first=True).double()
    cell = nn.GRUCell(D_X, D_H).double()
    cell.load_state_dict({name.removesuffix("_l0"): p for name, p in layer.state_dict().items()})
    xs = sequence()
    torch.testing.assert_close(rnn.cell_gradient_norms(layer, xs), rnn.cell_gradient_norms(cell, xs))


def zero_weights(cell: nn.Module) -> nn.Module:
    with torch.no_grad():
        for p in cell.parameters():
            p.zero_()
    return cell


@pytest.mark.parametrize("bias", [0.0, 2.0])
def test_gru_with_only_an_update_gate_bias_keeps_sigma_b_per_step(bias):
    # all weights 0: n_t = 0 and h_t = σ(b) h_{t-1}, so ‖∂h_T/∂h_{T-k}‖ = σ(b)^k
    cell = zero_weights(nn.GRUCell(D_X, D_H).double())
    rnn.set_memory_gate_bias(cell, bias)
    keep = 1 / (1 + math.exp(-bias))
    expected = keep ** torch.arange(1, T + 1, dtype=torch.float64)
    torch.testing.assert_close(rnn.cell_gradient_norms(cell, sequence()), expected)


def test_lstm_state_is_h_and_c():
    # all weights 0 but the forget bias: c_t = σ(b) c_{t-1}, h_t = σ(0) tanh(c_t); at c = 0 the Jacobian of
    # [h; c] after k steps is [[0, ½ σ(b)^k], [0, σ(b)^k]], whose norm is σ(b)^k √(1 + ¼)
    cell = zero_weights(nn.LSTMCell(D_X, D_H).double())
    rnn.set_memory_gate_bias(cell, 3.0)
    forget = 1 / (1 + math.exp(-3.0))
    expected = forget ** torch.arange(1, T + 1, dtype=torch.float64) * math.sqrt(1.25)
    torch.testing.assert_close(rnn.cell_gradient_norms(cell, sequence()), expected)


def test_chapter_1_reaches_the_recall_experiment_through_rnn():
    assert rnn.recall_task is data.recall_task
    assert rnn.RecallClassifier is classifier.RecallClassifier
    assert rnn.train_classifier is classifier.train_classifier
    assert rnn.accuracy is classifier.accuracy


def test_clip_by_norm_matches_torch_and_keeps_the_direction():
    grads = [torch.randn(3, 4, dtype=torch.float64) * 10, torch.randn(5, dtype=torch.float64)]
    clipped, norm = rnn.clip_by_norm(grads, 1.0)
    params = [nn.Parameter(g.clone()) for g in grads]
    for p, g in zip(params, grads, strict=True):
        p.grad = g.clone()
    assert norm == pytest.approx(float(nn.utils.clip_grad_norm_(params, 1.0)))
    for c, p, g in zip(clipped, params, grads, strict=True):
        torch.testing.assert_close(c, p.grad)
        torch.testing.assert_close(c * norm, g * 1.0, rtol=1e-5, atol=0)  # same direction, length 1
    flat = torch.cat([c.flatten() for c in clipped])
    assert float(flat.norm()) == pytest.approx(1.0, rel=1e-5)


def test_clip_by_norm_leaves_small_gradients_alone():
    grads = [torch.full((3,), 0.1, dtype=torch.float64)]
    clipped, _ = rnn.clip_by_norm(grads, 1.0)
    torch.testing.assert_close(clipped[0], grads[0], rtol=1e-5, atol=0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: rnn.phi(torch.zeros(2), "relu"), r"nonlinearity must be 'linear' or 'tanh', got 'relu'"),
        (lambda: rnn.unroll(sequence(), torch.zeros(6, 5), *weights()[1:]), r"W_h must be square"),
        (
            lambda: rnn.unroll(sequence(), weights()[0], torch.zeros(6, 4), weights()[2]),
            r"xs has feature size 3",
        ),
        (
            lambda: rnn.gradient_norms(torch.zeros(2, T, D_X), *weights()),
            r"xs must be one sequence \(T, d_x\)",
        ),
        (lambda: rnn.gradient_norms(sequence(), *weights(), method="svd"), r"method must be 'explicit'"),
        (lambda: rnn.recurrent_matrix(4, 0.0), r"radius must be > 0, got 0.0"),
        (lambda: rnn.recurrent_matrix(4, 1.0, "uniform"), r"kind must be 'gaussian' or 'orthogonal'"),
        (lambda: rnn.recurrent_matrix(0, 1.0), r"d_h must be > 0, got 0"),
        (lambda: rnn.set_memory_gate_bias(nn.RNNCell(3, 4), 1.0), r"module must be a GRU or an LSTM"),
        (
            lambda: rnn.cell_gradient_norms(nn.GRU(3, 4, num_layers=2), sequence()),
            r"module must be an RNN/GRU",
        ),
        (lambda: rnn.clip_by_norm([torch.ones(2)], 0.0), r"max_norm must be > 0, got 0.0"),
    ],
)
def test_bad_inputs_raise_value_errors_naming_the_argument(call, message):
    with pytest.raises(ValueError, match=message):
        call()
