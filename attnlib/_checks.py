"""Input validation shared by every attnlib function.

One place for the contract's error messages, so that every function words the same mistake the same way:
the message names the argument and the shapes it got, e.g. ``keys has feature size 7 but W_k expects 8``.
Shape problems raise ``ValueError``; a non-tensor or a wrong dtype raises ``TypeError``.

Each helper states one rule, so that a public function states its checks in a line or two and its equation
follows at once:

    _checks.sequences(query=query, keys=keys)                  # tensors (..., n, d): one dtype, batch dims
    _checks.same_features(keys, "keys", query, "query")        # dq == dk, for scores comparing them directly
    _checks.matrix(W, "W", "(dq, dk)", rows=("query", query), cols=("keys", keys))   # W's shape and dtype
    _checks.positions(values, "values", keys.shape[-2], "keys", keys)               # S of values == S of keys
"""

from __future__ import annotations

import numbers

import torch


def shape_str(x: torch.Tensor) -> str:
    """``(2, 5, 7)`` rather than ``torch.Size([2, 5, 7])``: shorter in error messages."""
    return str(tuple(x.shape))


def broadcast(*shapes: tuple[int, ...]) -> torch.Size | None:
    """The shape that ``shapes`` broadcast to, or None where they do not: aligned on the right, each size
    equal to the others or 1 (NumPy's and PyTorch's rule). Written out because ``torch.broadcast_shapes``
    imports sympy on its first call (0.4 s of the first attention call in a notebook, and in every grader)."""
    ndim = max(map(len, shapes), default=0)
    result = []
    for sizes in zip(*((1,) * (ndim - len(shape)) + tuple(shape) for shape in shapes), strict=True):
        other = {size for size in sizes if size != 1}
        if len(other) > 1:
            return None
        result.append(other.pop() if other else 1)
    return torch.Size(result)


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


def same_features(x: torch.Tensor, x_name: str, ref: torch.Tensor, ref_name: str) -> None:
    """``x`` and ``ref`` must have one feature size, as a score that compares them directly needs."""
    feature_size(x, x_name, ref.shape[-1], ref_name, ref)


def positions(x: torch.Tensor, x_name: str, expected: int, by: str, by_tensor: torch.Tensor) -> None:
    """``x (..., S, d)`` must have the ``expected`` S positions of ``by`` (keys, or the scores' last dim)."""
    if x.shape[-2] != expected:
        raise ValueError(
            f"{x_name} has {x.shape[-2]} positions but {by} has {expected} "
            f"({x_name} shape {shape_str(x)}, {by} shape {shape_str(by_tensor)})"
        )


def sequences(**named: object) -> torch.Size:
    """Inputs such as ``query (..., T, dq)`` and ``keys (..., S, dk)``, named by keyword, first as reference.

    Each must be a floating tensor with at least 2 dims, of the first one's dtype; their batch dims (all but
    the last two) must broadcast together. Returns the broadcast batch shape.
    """
    (first_name, first), *others = named.items()
    for name, x in named.items():
        tensor(x, name, min_dim=2)
    for name, x in others:
        same_dtype(x, name, first, first_name)
    batch = broadcast(*(x.shape[:-2] for x in named.values()))
    if batch is None:
        *most, last = named
        shapes = ", ".join(f"{name} shape {shape_str(x)}" for name, x in named.items())
        raise ValueError(f"{', '.join(most)} and {last} have batch dims that do not broadcast: {shapes}")
    return batch


def matrix(
    W: object,
    name: str,
    layout: str,
    *,
    rows: tuple[str, torch.Tensor] | None = None,
    cols: tuple[str, torch.Tensor] | None = None,
) -> torch.Tensor:
    """A learned matrix applied as ``W x``: floating and 2-D; ``layout`` names its dims, e.g. ``(A, dq)``.

    ``rows`` / ``cols``: ``(name, input)`` whose feature size W's rows / columns must equal; W must then also
    have that input's dtype (the first given).
    """
    tensor(W, name)
    if W.dim() != 2:
        raise ValueError(f"{name} must be a matrix {layout}, got shape {shape_str(W)}")
    inputs = [(dim, given) for dim, given in ((0, rows), (1, cols)) if given is not None]
    if inputs:
        same_dtype(W, name, inputs[0][1][1], inputs[0][1][0])
    for dim, (x_name, x) in inputs:
        feature_size(x, x_name, W.shape[dim], name, W)
    return W


def same_rows(W: torch.Tensor, name: str, ref: torch.Tensor, ref_name: str, meaning: str) -> None:
    """Two matrices that must agree in their number of rows, e.g. the attention size A of W_q and W_k."""
    if W.shape[0] != ref.shape[0]:
        raise ValueError(
            f"{name} has {W.shape[0]} rows ({meaning}) but {ref_name} has {ref.shape[0]} "
            f"({ref_name} shape {shape_str(ref)}, {name} shape {shape_str(W)})"
        )


def input_size(W: torch.Tensor, name: str, expected: int, inputs: str) -> None:
    """``W (out, in)`` must read ``expected`` features; ``inputs`` says whose, e.g. ``query and keys ...``."""
    if W.shape[1] != expected:
        raise ValueError(
            f"{name} has input size {W.shape[1]} but {inputs} = {expected} ({name} shape {shape_str(W)})"
        )


def vector(
    v: object, name: str, size: int, size_from: str, like: tuple[str, torch.Tensor] | None = None
) -> torch.Tensor:
    """A learned vector of length ``size`` (read off ``size_from``), of the dtype of ``like = (name, x)``."""
    tensor(v, name)
    if v.dim() != 1 or v.shape[0] != size:
        raise ValueError(f"{name} must have shape ({size},) to match {size_from}, got shape {shape_str(v)}")
    if like is not None:
        same_dtype(v, name, like[1], like[0])
    return v


def scalar(x: object, name: str) -> None:
    """A number or a 0-dim floating tensor (a learned one, for instance); bool rejected."""
    if isinstance(x, torch.Tensor):
        tensor(x, name)
        if x.dim() != 0:
            raise ValueError(f"{name} must be a number or a 0-dim tensor, got shape {shape_str(x)}")
    elif isinstance(x, bool) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a number or a 0-dim tensor, got {type(x).__name__}")


def broadcasts_to(x: torch.Tensor, name: str, shape: torch.Size, target: str) -> None:
    """``x`` must broadcast to ``shape`` (without growing it); ``target`` describes that shape's owner."""
    if broadcast(x.shape, shape) != shape:
        raise ValueError(f"{name} of shape {shape_str(x)} does not broadcast to {target}")


def flag(x: object, name: str) -> bool:
    """A bool option (``1`` or ``"yes"`` are refused: they usually mean a misplaced argument)."""
    if not isinstance(x, bool):
        raise TypeError(f"{name} must be a bool, got {type(x).__name__}")
    return x


def positive_int(n: object, name: str, *, allow_zero: bool = False) -> int:
    """A size such as S or A: a Python int (bool rejected: ``True`` is not a size)."""
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(n).__name__}")
    if n < 0 or (n == 0 and not allow_zero):
        bound = ">= 0" if allow_zero else "> 0"
        raise ValueError(f"{name} must be {bound}, got {n}")
    return int(n)


def at_most(n: int, name: str, limit: int, holder: str) -> int:
    """``n`` must not exceed ``limit``; ``holder`` says what sets it, e.g. ``W has only 4 rows``."""
    if n > limit:
        raise ValueError(f"{name} is {n} but {holder}")
    return n


def lengths(
    lengths: object,
    name: str = "lengths",
    *,
    max_len: int | None = None,
    one_per: tuple[str, torch.Tensor] | None = None,
) -> torch.Tensor:
    """Sequence lengths: an integer tensor with 0 <= length (<= max_len when given).

    ``one_per``: ``(name, input (..., T, d))``: one length per example, ``lengths`` shaped ``(...)``.
    """
    tensor(lengths, name, floating=False)
    if lengths.dtype == torch.bool or lengths.is_floating_point() or lengths.is_complex():
        raise TypeError(f"{name} must have an integer dtype, got {lengths.dtype}")
    if lengths.numel() > 0:
        if bool((lengths < 0).any()):
            raise ValueError(f"{name} must be >= 0, got {lengths.tolist()}")
        if max_len is not None and bool((lengths > max_len).any()):
            raise ValueError(f"{name} must be <= S = {max_len}, got {lengths.tolist()}")
    if one_per is not None and lengths.shape != one_per[1].shape[:-2]:
        x_name, x = one_per
        raise ValueError(
            f"{name} must have shape {tuple(x.shape[:-2])} (one per example), got shape "
            f"{shape_str(lengths)} for {x_name} of shape {shape_str(x)}"
        )
    return lengths


def mask(mask: object, scores: torch.Tensor | torch.Size, name: str = "mask") -> torch.Tensor:
    """Check a bool mask (True = attend); return it in a shape that broadcasts to ``scores (..., T, S)``.

    ``scores`` may be the scores themselves or only their shape (a fast path that never forms them).

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
    shape = torch.Size(scores.shape if isinstance(scores, torch.Tensor) else scores)
    padding_shape = shape[:-2] + shape[-1:]  # (..., S)
    if mask.dim() >= 1 and mask.dim() == len(shape) - 1 and mask.shape == padding_shape:
        mask = mask.unsqueeze(-2)  # (..., S) -> (..., 1, S): the same padding for every query step
    if broadcast(mask.shape, shape) != shape:
        raise ValueError(
            f"{name} of shape {shape_str(mask)} does not broadcast to scores of shape {tuple(shape)}; "
            "use (..., T, S), or a padding mask (B, S) for scores (B, T, S)"
        )
    return mask
