"""``torch.nn.Module`` layers: they own the learned parameters and call ``attnlib.scores`` / ``.local``.

No maths lives here, only parameters, their initialisation and the call to the one functional
implementation. Every score module has the same interface, so models can swap them by name:

    forward(query (..., T, dq), keys (..., S, dk)) -> scores (..., T, S)

Parameters are initialised from torch's global RNG (Xavier-uniform matrices, uniform(±1/sqrt(A)) vectors),
so ``torch.manual_seed`` makes them reproducible.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from attnlib import _checks, chunked_additive, local, scores
from attnlib.masking import attend


def _matrix(rows: int, cols: int) -> nn.Parameter:
    W = torch.empty(rows, cols)
    nn.init.xavier_uniform_(W)  # keeps the variance of W x close to that of x, for tanh to stay unsaturated
    return nn.Parameter(W)


def _vector(size: int) -> nn.Parameter:
    bound = 1.0 / math.sqrt(size)  # as nn.Linear does for a layer with `size` inputs
    return nn.Parameter(torch.empty(size).uniform_(-bound, bound))


class DotScore(nn.Module):
    """e_{t,s} = q_tᵀ k_s (Luong "dot"); no parameters."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return scores.dot(query, keys)


class ScaledDotScore(nn.Module):
    """e_{t,s} = q_tᵀ k_s / sqrt(d) (Vaswani); no parameters."""

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return scores.scaled_dot(query, keys)


class GeneralScore(nn.Module):
    """e_{t,s} = q_tᵀ W k_s (Luong "general"), ``W (query_size, key_size)``."""

    def __init__(self, query_size: int, key_size: int) -> None:
        super().__init__()
        dq = _checks.positive_int(query_size, "query_size")
        self.W = _matrix(dq, _checks.positive_int(key_size, "key_size"))

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return scores.general(query, keys, self.W)


class AdditiveScore(nn.Module):
    """e_{t,s} = vᵀ tanh(W_q q_t + W_k k_s) (Bahdanau), ``W_q (A, dq)``, ``W_k (A, dk)``, ``v (A,)``.

    ``W_k k_s`` does not depend on the decoder step: compute it once per sentence with ``project_keys`` and
    pass it to every step as ``projected_keys``.
    """

    def __init__(self, query_size: int, key_size: int, attention_size: int) -> None:
        super().__init__()
        A = _checks.positive_int(attention_size, "attention_size")
        self.W_q = _matrix(A, _checks.positive_int(query_size, "query_size"))
        self.W_k = _matrix(A, _checks.positive_int(key_size, "key_size"))
        self.v = _vector(A)

    def project_keys(self, keys: torch.Tensor) -> torch.Tensor:
        """``W_k k_s`` for every key: ``(..., S, dk) -> (..., S, A)``."""
        return scores.project(keys, self.W_k, "keys", "W_k")

    def forward(
        self, query: torch.Tensor, keys: torch.Tensor, projected_keys: torch.Tensor | None = None
    ) -> torch.Tensor:
        if projected_keys is None:
            return scores.additive(query, keys, self.W_q, self.W_k, self.v)
        _checks.positions(projected_keys, "projected_keys", keys.shape[-2], "keys", keys)
        query_proj = scores.project(query, self.W_q, "query", "W_q")  # (..., T, A)
        return scores.additive_from_projections(query_proj, projected_keys, self.v)

    def attend_fast(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        mask: torch.Tensor | None = None,
        projected_keys: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``attend(self(query, keys, projected_keys), values, mask)`` by ``attnlib.chunked_additive``: the
        same context and weights, without keeping the ``(..., T, S, A)`` hidden states for the backward."""
        if projected_keys is None:
            projected_keys = self.project_keys(keys)  # (..., S, A)
        _checks.positions(projected_keys, "projected_keys", keys.shape[-2], "keys", keys)
        query_proj = scores.project(query, self.W_q, "query", "W_q")  # (..., T, A)
        return chunked_additive.additive_attend_from_projections(
            query_proj, projected_keys, self.v, values, mask
        )


class ConcatScore(nn.Module):
    """e_{t,s} = vᵀ tanh(W [q_t; k_s]) (Luong "concat"), ``W (A, dq + dk)``, ``v (A,)``."""

    def __init__(self, query_size: int, key_size: int, attention_size: int) -> None:
        super().__init__()
        A = _checks.positive_int(attention_size, "attention_size")
        dq = _checks.positive_int(query_size, "query_size")
        self.W = _matrix(A, dq + _checks.positive_int(key_size, "key_size"))
        self.v = _vector(A)

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return scores.concat(query, keys, self.W, self.v)

    def attend_fast(
        self, query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``attend(self(query, keys), values, mask)`` by ``attnlib.chunked_additive``, with W = [W_q W_k]
        split after its first dq columns (as ``scores.concat`` does)."""
        _checks.sequences(query=query, keys=keys)
        dq, dk = query.shape[-1], keys.shape[-1]
        _checks.input_size(self.W, "W", dq + dk, f"[query; keys] has {dq} + {dk}")
        W_q, W_k = self.W[:, :dq], self.W[:, dq:]  # (A, dq), (A, dk)
        return chunked_additive.additive_attend(query, keys, values, W_q, W_k, self.v, mask)


class LocationScore(nn.Module):
    """e_t = (W q_t)[:S] (Luong "location"), ``W (max_source_len, query_size)``; S = keys.shape[-2]."""

    def __init__(self, query_size: int, max_source_len: int) -> None:
        super().__init__()
        self.max_source_len = _checks.positive_int(max_source_len, "max_source_len")
        self.W = _matrix(self.max_source_len, _checks.positive_int(query_size, "query_size"))

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        _checks.tensor(keys, "keys", min_dim=2)
        S = keys.shape[-2]
        if S > self.max_source_len:
            raise ValueError(
                f"keys has {S} source positions (shape {_checks.shape_str(keys)}) but this LocationScore "
                f"was built with max_source_len={self.max_source_len}"
            )
        return scores.location(query, self.W, S)


class CosineScore(nn.Module):
    """e_{t,s} = beta · cos(q_t, k_s) (Graves et al. 2014) with a learned sharpness beta > 0.

    beta = exp(log_beta): positive whatever step the optimiser takes, and a multiplicative step size.
    """

    def __init__(self, init_beta: float = 1.0) -> None:
        super().__init__()
        if isinstance(init_beta, bool) or not isinstance(init_beta, (int, float)):
            raise TypeError(f"init_beta must be a number, got {type(init_beta).__name__}")
        if not (math.isfinite(init_beta) and init_beta > 0):
            raise ValueError(f"init_beta must be a finite number > 0, got {init_beta}")
        self.log_beta = nn.Parameter(torch.tensor(math.log(init_beta)))

    @property
    def beta(self) -> torch.Tensor:
        return self.log_beta.exp()

    def forward(self, query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        return scores.cosine(query, keys, self.beta.to(query.dtype))


class PositionPredictor(nn.Module):
    """Local-p centre p_t = S_b · sigmoid(v_pᵀ tanh(W_p q_t)) (Luong et al. 2015, §3.2, eq. 9)."""

    def __init__(self, query_size: int, attention_size: int) -> None:
        super().__init__()
        A = _checks.positive_int(attention_size, "attention_size")
        self.W_p = _matrix(A, _checks.positive_int(query_size, "query_size"))
        self.v_p = _vector(A)

    def forward(self, query: torch.Tensor, lengths: torch.Tensor | int) -> torch.Tensor:
        return local.predict_position(query, self.W_p, self.v_p, lengths)


class Attention(nn.Module):
    """Score, masked softmax, weighted sum: ``(context (..., T, dv), weights (..., T, S))``.

    Extra keyword arguments go to the score module, e.g. ``projected_keys=`` for ``AdditiveScore``.
    """

    def __init__(self, score: nn.Module) -> None:
        super().__init__()
        self.score = score

    def forward(
        self,
        query: torch.Tensor,
        keys: torch.Tensor,
        values: torch.Tensor,
        mask: torch.Tensor | None = None,
        **score_kwargs: torch.Tensor,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        return attend(self.score(query, keys, **score_kwargs), values, mask)


SCORE_NAMES = ("dot", "scaled_dot", "general", "additive", "concat", "location", "cosine")


def make_score(
    name: str,
    query_size: int,
    key_size: int,
    attention_size: int | None = None,
    max_source_len: int | None = None,
) -> nn.Module:
    """Build a score module by name: one of ``SCORE_NAMES``.

    ``attention_size`` is required by "additive" and "concat", ``max_source_len`` by "location";
    "dot", "scaled_dot" and "cosine" need ``query_size == key_size``.
    """
    if name not in SCORE_NAMES:
        raise ValueError(f"unknown score name {name!r}; valid names: {', '.join(SCORE_NAMES)}")
    _checks.positive_int(query_size, "query_size")
    _checks.positive_int(key_size, "key_size")
    if name in ("dot", "scaled_dot", "cosine") and query_size != key_size:
        raise ValueError(
            f"score {name!r} compares query and keys directly, so it needs query_size == key_size; "
            f"got query_size={query_size}, key_size={key_size}"
        )
    if name in ("additive", "concat") and attention_size is None:
        raise ValueError(f"score {name!r} needs attention_size (the hidden size A of its tanh layer)")
    if name == "location" and max_source_len is None:
        raise ValueError("score 'location' needs max_source_len (the number of rows of W)")
    if name == "dot":
        return DotScore()
    if name == "scaled_dot":
        return ScaledDotScore()
    if name == "general":
        return GeneralScore(query_size, key_size)
    if name == "additive":
        return AdditiveScore(query_size, key_size, attention_size)
    if name == "concat":
        return ConcatScore(query_size, key_size, attention_size)
    if name == "location":
        return LocationScore(query_size, max_source_len)
    return CosineScore()
