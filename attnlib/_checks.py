"""Input validation shared by every attnlib function.

One place for the contract's error messages, so that every function words the same mistake the same way:
the message names the argument and the shapes it got, e.g. ``keys has feature size 7 but W_k expects 8``.
Shape problems raise ``ValueError``; a non-tensor or a wrong dtype raises ``TypeError``.
"""

from __future__ import annotations

import numbers

import torch


def shape_str(x: torch.Tensor) -> str:
    """``(2, 5, 7)`` rather than ``torch.Size([2, 5, 7])``: shorter in error messages."""
    return str(tuple(x.shape))


def tensor(x: object, name: str, *, floating: bool = True, min_dim: int = 0) -> torch.Tensor:
    """``x`` must be a tensor (floating unless ``floating=False``) with at least ``min_dim`` dims."""
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if floating and not x.is_floating_point():
        raise TypeError(f"{name} must have a floating point dtype, got {x.dtype} (shape {shape_str(x)})")
    if x.dim() < min_dim:
        raise ValueError(f"{name} must have at least {min_dim} dims, got shape {shape_str(x)}")
    return x


def same_dtype(x: torch.Tensor, x_name: str, ref: torch.Tensor, ref_name: str) -> None:
    """Mixed dtypes would silently promote (or fail deep inside torch); say which argument differs."""
    if x.dtype != ref.dtype:
        raise TypeError(f"{x_name} has dtype {x.dtype} but {ref_name} has dtype {ref.dtype}")


def feature_size(x: torch.Tensor, x_name: str, expected: int, by: str, by_tensor: torch.Tensor) -> None:
    """``x``'s last dim must equal ``expected``, the size that ``by`` (a weight or another input) expects."""
    if x.shape[-1] != expected:
        raise ValueError(
            f"{x_name} has feature size {x.shape[-1]} but {by} expects {expected} "
            f"({x_name} shape {shape_str(x)}, {by} shape {shape_str(by_tensor)})"
        )


def matrix(W: object, name: str, layout: str) -> torch.Tensor:
    """A learned matrix applied as ``W x``: floating and 2-D; ``layout`` names its dims, e.g. ``(A, dq)``."""
    tensor(W, name)
    if W.dim() != 2:
        raise ValueError(f"{name} must be a matrix {layout}, got shape {shape_str(W)}")
    return W


def vector(v: object, name: str, size: int, size_from: str) -> torch.Tensor:
    """A learned vector of length ``size`` (the attention size, read off ``size_from``)."""
    tensor(v, name)
    if v.dim() != 1 or v.shape[0] != size:
        raise ValueError(f"{name} must have shape ({size},) to match {size_from}, got shape {shape_str(v)}")
    return v


def batch_dims(x: torch.Tensor, x_name: str, y: torch.Tensor, y_name: str) -> torch.Size:
    """Leading batch dims (all but the last two) must broadcast; returns the broadcast batch shape."""
    try:
        return torch.broadcast_shapes(x.shape[:-2], y.shape[:-2])
    except RuntimeError:
        raise ValueError(
            f"{x_name} and {y_name} have batch dims that do not broadcast: "
            f"{x_name} shape {shape_str(x)}, {y_name} shape {shape_str(y)}"
        ) from None


def positive_int(n: object, name: str, *, allow_zero: bool = False) -> int:
    """A size such as S or A: a Python int (bool rejected: ``True`` is not a size)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0 or (n == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {n}")
    return int(n)


def lengths(lengths: object, name: str = "lengths", *, max_len: int | None = None) -> torch.Tensor:
    """Sequence lengths: an integer tensor with 0 <= length (<= max_len when given)."""
    tensor(lengths, name, floating=False)
    if lengths.dtype == torch.bool or lengths.is_floating_point() or lengths.is_complex():
        raise TypeError(f"{name} must have an integer dtype, got {lengths.dtype}")
    if lengths.numel() > 0:
        if bool((lengths < 0).any()):
            raise ValueError(f"{name} must be >= 0, got {lengths.tolist()}")
        if max_len is not None and bool((lengths > max_len).any()):
            raise ValueError(f"{name} must be <= S = {max_len}, got {lengths.tolist()}")
    return lengths


def mask(mask: object, scores: torch.Tensor, name: str = "mask") -> torch.Tensor:
    """Check a bool mask (True = attend); return it in a shape that broadcasts to ``scores (..., T, S)``.

    A padding mask ``(B, S)`` for scores ``(B, T, S)`` has one dim fewer than the scores and would, under
    plain broadcasting, be aligned with ``(T, S)``. Rule used to tell the two apart: when
    ``mask.dim() == scores.dim() - 1`` and ``mask.shape == scores.shape[:-2] + (S,)``, the mask is a padding
    mask and a T dim is inserted: ``(B, S) -> (B, 1, S)``. Every other mask follows ordinary broadcasting.
    If B == T a ``(T, S)`` mask is therefore read as a padding mask; pass it as ``(1, T, S)`` to mean
    "the same (T, S) mask for every example".
    """
    tensor(mask, name, floating=False)
    if mask.dtype != torch.bool:
        raise TypeError(f"{name} must be a bool tensor (True = attend), got dtype {mask.dtype}")
    padding_shape = scores.shape[:-2] + scores.shape[-1:]  # (..., S)
    if mask.dim() >= 1 and mask.dim() == scores.dim() - 1 and mask.shape == padding_shape:
        mask = mask.unsqueeze(-2)  # (..., S) -> (..., 1, S): the same padding for every query step
    try:
        broadcast = torch.broadcast_shapes(mask.shape, scores.shape)
    except RuntimeError:
        broadcast = None
    if broadcast != scores.shape:
        raise ValueError(
            f"{name} of shape {shape_str(mask)} does not broadcast to scores of shape {shape_str(scores)}; "
            "use (..., T, S), or a padding mask (B, S) for scores (B, T, S)"
        )
    return mask
