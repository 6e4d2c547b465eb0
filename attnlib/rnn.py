"""The vanilla RNN and its gradients: why information fades (or blows up) over long sequences (chapter 1).

    h_t = φ(z_t),   z_t = W_h h_{t-1} + W_x x_t + b,   φ = identity ("linear") or tanh

Convention (the course's: column vectors, W applied as W h, Jacobians in numerator layout): entry (a, j) of
∂h_i/∂h_{i-1} is ∂h_{i,a}/∂h_{i-1,j} = φ'(z_{i,a}) (W_h)_{a,j}, so

    ∂h_i/∂h_{i-1} = diag(φ'(z_i)) W_h
    ∂h_t/∂h_{t-k} = diag(φ'(z_t)) W_h · diag(φ'(z_{t-1})) W_h ··· diag(φ'(z_{t-k+1})) W_h   (newest left)

The RNN note writes each factor as W_hᵀ diag(φ'(z_i)) (as Pascanu et al. 2013, eq. 5, for their variant
x_t = W σ(x_{t-1}) + …): the denominator layout, the transpose of ours, the product running the other way.
It is the matrix backpropagation applies, ∇_{h_{t-k}} L = (∂h_t/∂h_{t-k})ᵀ ∇_{h_t} L. A matrix and its
transpose have the same singular values and eigenvalues, so every norm and conclusion is the same in both.
The course follows the numerator layout (as torch.autograd.functional.jacobian returns Jacobians).

Sources: Bengio, Simard & Frasconi 1994 (vanishing gradients); Pascanu, Mikolov & Bengio 2013, §1.1 eq. 5
(the product of Jacobians), §2.1 (the bound ‖∂h_t/∂h_{t-k}‖ ≤ (γ σ_max(W_h))^k, γ = sup |φ'|),
§3.2 (clipping); Hochreiter & Schmidhuber 1997 (LSTM); Cho et al. 2014 (GRU).
Shapes: d_h hidden, d_x input, T steps.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from attnlib import _checks

# Chapter 1 runs its recall experiment through this module (rnn.recall_task, rnn.train_classifier, ...): the
# task lives with the data, the classifier in attnlib.classifier, its training in attnlib.train.
from attnlib.classifier import RecallClassifier as RecallClassifier
from attnlib.classifier import accuracy as accuracy
from attnlib.classifier import train_classifier as train_classifier
from attnlib.data.recall import recall_task as recall_task

Nonlinearity = Literal["linear", "tanh"]
Tensor = torch.Tensor


def phi(z: Tensor, nonlinearity: Nonlinearity = "tanh") -> Tensor:
    if nonlinearity not in ("linear", "tanh"):
        raise ValueError(f"nonlinearity must be 'linear' or 'tanh', got {nonlinearity!r}")
    return z if nonlinearity == "linear" else torch.tanh(z)


def phi_prime(z: Tensor, nonlinearity: Nonlinearity = "tanh") -> Tensor:
    """φ'(z): 1 for linear, 1 - tanh(z)² ∈ (0, 1] for tanh."""
    h = phi(z, nonlinearity)  # also checks the name
    return 1 - h**2 if nonlinearity == "tanh" else torch.ones_like(z)


def rnn_step(h: Tensor, x: Tensor, W_h: Tensor, W_x: Tensor, b: Tensor, nonlinearity: Nonlinearity = "tanh"):
    """z_t = W_h h_{t-1} + W_x x_t + b, h_t = φ(z_t); returns ``(h_t, z_t)``; h (..., d_h), x (..., d_x)."""
    z = h @ W_h.T + x @ W_x.T + b  # (..., d_h)
    return phi(z, nonlinearity), z


def unroll(
    xs: Tensor,
    W_h: Tensor,
    W_x: Tensor,
    b: Tensor,
    h0: Tensor | None = None,
    nonlinearity: Nonlinearity = "tanh",
) -> tuple[Tensor, Tensor]:
    """Run the RNN over ``xs (..., T, d_x)`` from ``h0`` (zeros if None); return ``(states, pre)``, both
    ``(..., T, d_h)``: states[..., i-1, :] = h_i and pre[..., i-1, :] = z_i for i = 1..T."""
    _checks.tensor(xs, "xs", min_dim=2)
    _checks.matrix(W_h, "W_h", "(d_h, d_h)")
    if W_h.shape[0] != W_h.shape[1]:
        raise ValueError(f"W_h must be square (d_h, d_h), got shape {_checks.shape_str(W_h)}")
    _checks.matrix(W_x, "W_x", "(d_h, d_x)")
    _checks.feature_size(xs, "xs", W_x.shape[1], "W_x", W_x)
    h = xs.new_zeros(*xs.shape[:-2], W_h.shape[0]) if h0 is None else h0
    states, pre = [], []
    for t in range(xs.shape[-2]):
        h, z = rnn_step(h, xs[..., t, :], W_h, W_x, b, nonlinearity)
        states.append(h)
        pre.append(z)
    return torch.stack(states, -2), torch.stack(pre, -2)  # (..., T, d_h) each


def step_jacobian(W_h: Tensor, z: Tensor, nonlinearity: Nonlinearity = "tanh") -> Tensor:
    """∂h_i/∂h_{i-1} = diag(φ'(z_i)) W_h, ``(d_h, d_h)``, built without the diagonal matrix."""
    return phi_prime(z, nonlinearity)[:, None] * W_h  # row a scaled by φ'(z_{i,a})


def jacobian_product(W_h: Tensor, pre: Tensor, nonlinearity: Nonlinearity = "tanh") -> Tensor:
    """∂h_t/∂h_{t-k} = Π_{i=t-k+1..t} diag(φ'(z_i)) W_h, newest factor on the left (Pascanu et al.
    2013, eq. 5, in the other layout: see the module docstring).

    ``pre (k, d_h)`` holds z_{t-k+1}, …, z_t, oldest first as :func:`unroll` returns them (k = 0: identity).
    """
    _checks.tensor(pre, "pre", min_dim=2)
    J = torch.eye(W_h.shape[0], dtype=W_h.dtype)
    for z in pre:  # oldest first, so each newer factor multiplies on the left
        J = step_jacobian(W_h, z, nonlinearity) @ J
    return J


def _one_sequence(xs: Tensor) -> None:
    _checks.tensor(xs, "xs", min_dim=2)
    if xs.dim() != 2:
        raise ValueError(f"xs must be one sequence (T, d_x), got shape {_checks.shape_str(xs)}")


def _norms_by_perturbation(step, s0: Tensor, xs: Tensor) -> Tensor:
    """‖∂s_T/∂s_{T-k}‖₂, k = 1..T, by autograd alone: a zero perturbation ε_i is added to every state s_i
    as it enters the next step, and ∂s_T/∂ε_i = ∂s_T/∂s_i (one Jacobian of s_T w.r.t. all the ε)."""
    T = xs.shape[0]

    def final_state(eps: Tensor) -> Tensor:  # eps (T, size)
        s = s0
        for t in range(T):
            s = step(s + eps[t], xs[t])
        return s

    J = torch.autograd.functional.jacobian(final_state, xs.new_zeros(T, s0.shape[0]), vectorize=True)
    # J (size, T, size): J[:, i, :] = ∂s_T/∂s_i with k = T - i; flip so that entry k-1 is for k
    return torch.linalg.matrix_norm(J.permute(1, 0, 2).flip(0), ord=2).detach()


def gradient_norms(
    xs: Tensor,
    W_h: Tensor,
    W_x: Tensor,
    b: Tensor,
    h0: Tensor | None = None,
    nonlinearity: Nonlinearity = "tanh",
    method: Literal["explicit", "autograd"] = "explicit",
) -> Tensor:
    """‖∂h_T/∂h_{T-k}‖₂ (largest singular value) for k = 1..T over one sequence ``xs (T, d_x)``; ``(T,)``.

    "explicit" multiplies the factors diag(φ'(z_i)) W_h; "autograd" knows no formula (see
    :func:`_norms_by_perturbation`): two independent computations of the same matrices.
    """
    _one_sequence(xs)
    if method not in ("explicit", "autograd"):
        raise ValueError(f"method must be 'explicit' or 'autograd', got {method!r}")
    h0 = xs.new_zeros(W_h.shape[0]) if h0 is None else h0
    if method == "autograd":
        return _norms_by_perturbation(lambda h, x: rnn_step(h, x, W_h, W_x, b, nonlinearity)[0], h0, xs)
    _, pre = unroll(xs, W_h, W_x, b, h0, nonlinearity)
    J, norms = torch.eye(W_h.shape[0], dtype=W_h.dtype), []
    for k in range(1, xs.shape[0] + 1):  # one more, older, factor on the right
        J = J @ step_jacobian(W_h, pre[-k], nonlinearity)
        norms.append(torch.linalg.matrix_norm(J, ord=2))
    return torch.stack(norms)


def spectral_radius(W: Tensor) -> float:
    """max |λ| over the eigenvalues λ of a square matrix."""
    return float(torch.linalg.eigvals(W).abs().max())


def recurrent_matrix(
    d_h: int,
    radius: float,
    kind: Literal["gaussian", "orthogonal"] = "gaussian",
    seed: int = 0,
    dtype: torch.dtype = torch.float64,
) -> Tensor:
    """A seeded ``(d_h, d_h)`` W_h whose spectral radius is ``radius`` (ρ).

    "orthogonal": ρ·Q with Q orthogonal: every |λ| = ρ and every singular value = ρ, so ‖W_h^k‖₂ = ρ^k.
    "gaussian": N(0, 1) entries rescaled to radius ρ: the eigenvalues fill a disc (the circular law) and
    ‖W_h^k‖₂ ≈ C ρ^k for large k, a line of slope log ρ on a log scale.
    """
    d_h = _checks.positive_int(d_h, "d_h")
    if not radius > 0:
        raise ValueError(f"radius must be > 0, got {radius}")
    if kind not in ("gaussian", "orthogonal"):
        raise ValueError(f"kind must be 'gaussian' or 'orthogonal', got {kind!r}")
    G = torch.randn(d_h, d_h, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    if kind == "orthogonal":
        Q, R = torch.linalg.qr(G)
        W = Q * torch.sign(torch.diagonal(R))  # the sign fix makes Q uniformly (Haar) distributed
    else:
        W = G / spectral_radius(G)
    return (radius * W).to(dtype)


def _as_cell(module: nn.Module) -> nn.RNNCellBase:
    """A cell sharing the parameters of a one-layer ``nn.RNN``/``nn.GRU``/``nn.LSTM`` (or the cell itself)."""
    if isinstance(module, nn.RNNCellBase):
        return module
    cells = {nn.RNN: nn.RNNCell, nn.GRU: nn.GRUCell, nn.LSTM: nn.LSTMCell}
    if type(module) not in cells or module.num_layers != 1 or module.bidirectional:
        raise ValueError(f"module must be an RNN/GRU/LSTM cell or a one-layer one-way layer, got {module}")
    extra = {"nonlinearity": module.nonlinearity} if isinstance(module, nn.RNN) else {}
    cell = cells[type(module)](module.input_size, module.hidden_size, **extra)
    for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
        setattr(cell, name, getattr(module, f"{name}_l0"))
    return cell


def set_memory_gate_bias(module: nn.Module, value: float) -> None:
    """Set the bias of the gate that keeps the old state: the LSTM forget gate f, the GRU update gate z.

    torch's GRU (as Cho et al. 2014) keeps with z: h_t = (1 - z_t) ⊙ n_t + z_t ⊙ h_{t-1}. Both gates are rows
    H:2H of the stacked weights ([i, f, g, o] and [r, z, n]). A bias b holds the gate near σ(b). The forget
    gate is Gers et al. 2000's; a forget bias of 1 is the usual advice (Jozefowicz et al. 2015). In place.
    """
    cell = _as_cell(module)
    if not isinstance(cell, (nn.GRUCell, nn.LSTMCell)):
        raise ValueError(f"module must be a GRU or an LSTM (a vanilla RNN has no gate), got {module!r}")
    H = cell.hidden_size
    with torch.no_grad():
        cell.bias_ih[H : 2 * H] = value
        cell.bias_hh[H : 2 * H] = 0.0


def cell_gradient_norms(module: nn.Module, xs: Tensor) -> Tensor:
    """‖∂s_T/∂s_{T-k}‖₂ for k = 1..T, by autograd, for a torch RNN, GRU or LSTM (cell or one-layer layer).

    The state s is h for the RNN and the GRU, and [h; c] for the LSTM, whose cell state carries the additive
    path c_t = f_t ⊙ c_{t-1} + i_t ⊙ g_t (Hochreiter & Schmidhuber 1997). ``xs (T, d_x)``; s_0 = 0.
    """
    cell = _as_cell(module)
    _one_sequence(xs)
    H = cell.hidden_size
    if isinstance(cell, nn.LSTMCell):
        return _norms_by_perturbation(
            lambda s, x: torch.cat(cell(x, (s[:H], s[H:]))), xs.new_zeros(2 * H), xs
        )
    return _norms_by_perturbation(lambda s, x: cell(x, s), xs.new_zeros(H), xs)


def clip_by_norm(grads: list[Tensor], max_norm: float) -> tuple[list[Tensor], float]:
    """ĝ = g · min(1, c / ‖g‖), all gradients taken as one vector g (Pascanu et al. 2013, §3.2, Algorithm 1).

    Keeps the direction and caps the length. Returns ``(clipped, ‖g‖)``; torch's
    ``nn.utils.clip_grad_norm_`` does the same in place.
    """
    if not max_norm > 0:
        raise ValueError(f"max_norm must be > 0, got {max_norm}")
    norm = float(torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])))
    scale = min(1.0, max_norm / (norm + 1e-6))  # torch adds the same 1e-6
    return [g * scale for g in grads], norm
