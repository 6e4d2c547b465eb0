"""Fast path: scaled dot-product attention through PyTorch's fused kernel.

The readable reference is ``attend(scores.scaled_dot(q, k), v, mask)``; this function gives the same context
(forward and backward, within float tolerance) via ``torch.nn.functional.scaled_dot_product_attention``
(SDPA), which does not return the weights. Fused kernels may return NaN for a row with nothing to attend to;
here such rows give a zero context and zero gradients, as in the contract.

SDPA picks a backend per call. Its fused kernels (FlashAttention on the CPU; FlashAttention, memory-efficient
and cuDNN on CUDA) take only 4-D inputs ``(N, heads, T, d)`` (the check ``check_tensor_shapes`` in
``sdp_utils_cpp.h``, shipped with torch). What SDPA does with 3-D inputs depends on the torch version: torch
2.13 runs its *math* backend, plain PyTorch operations that form the ``(N, T, S)`` weights like the reference
does; torch 2.14 (measured with 2.14.1) adds the head dimension itself and runs the fused kernel
(``attnlib/results/ch07_sdpa_dispatch.json`` records both). So the inputs are brought to 4-D here, whatever
the version, and a padding mask is kept in its compact shape ``(N, 1, 1, S)`` rather than broadcast to
``(N, 1, T, S)``, which would write a tensor of the very size the kernel avoids. Lesson: chapter 7, "Why a
fused kernel is fast".

``prepare`` does all of this once and ``run`` only calls the kernel, so that a benchmark can time the
kernel alone; ``scaled_dot_product_attention`` is the two in one call.
"""

from __future__ import annotations

from typing import NamedTuple

import torch
import torch.nn.functional as F

from attnlib import _checks


class Prepared(NamedTuple):
    """Inputs in the kernel's layout: query ``(N, h, T, d)``, keys ``(N, h, S, d)``, values ``(N, h, S, dv)``,
    an additive float mask ``(N, 1 or h, 1 or T, S)`` (0 = attend, -inf = not) or None, the rows that attend
    to something ``(N, 1 or h, 1 or T, 1)`` or None when all do, and the context's shape ``(..., T, dv)``."""

    query: torch.Tensor
    keys: torch.Tensor
    values: torch.Tensor
    attn_mask: torch.Tensor | None
    attended: torch.Tensor | None
    shape: torch.Size


def _kernel_layout(x: torch.Tensor, batch: torch.Size) -> torch.Tensor:
    """``(..., n, f)`` with batch dims ``batch`` (at least two) -> ``(N, h, n, f)``: the last batch dim
    becomes the kernel's head dim and the others fold into N (a view unless ``x`` was broadcast)."""
    x = x.expand(*batch, *x.shape[-2:])
    return x.reshape(-1, batch[-1], *x.shape[-2:])


def prepare(
    query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None
) -> Prepared:
    """Check the inputs and bring them to the fused kernel's layout (see ``Prepared``)."""
    batch = _checks.sequences(query=query, keys=keys, values=values)
    _checks.same_features(keys, "keys", query, "query")
    _checks.positions(values, "values", keys.shape[-2], "keys", keys)
    T, S, dv = query.shape[-2], keys.shape[-2], values.shape[-1]
    shape = torch.Size((*batch, T, dv))
    if mask is not None:
        mask = _checks.mask(mask, torch.Size((*batch, T, S)))  # broadcasts to (..., T, S), not broadcast
        mask = mask.reshape((1,) * (len(batch) + 2 - mask.dim()) + mask.shape)  # same rank as the scores
    added = max(0, 2 - len(batch))  # 4-D needs two batch dims: add size-1 ones in front of (T, d)
    for _ in range(added):
        query, keys, values = query.unsqueeze(-3), keys.unsqueeze(-3), values.unsqueeze(-3)
        mask = None if mask is None else mask.unsqueeze(-3)
    batch = torch.Size((*batch, *(1,) * added))  # (..., h) once the head dim exists
    query, keys, values = (_kernel_layout(x, batch) for x in (query, keys, values))  # (N, h, n, f)
    if mask is None:
        return Prepared(query, keys, values, None, None, shape)

    mask = mask.expand(*batch[:-1], *mask.shape[-3:]).reshape(-1, *mask.shape[-3:])  # (N, 1|h, 1|T, S)
    attended = mask.any(dim=-1, keepdim=True)  # (N, 1|h, 1|T, 1)
    if bool(attended.all()):
        attended = None
    else:  # let empty rows attend everywhere so the kernel stays finite; run() zeroes their context
        mask = mask | ~attended
    additive = torch.zeros(mask.shape, dtype=query.dtype, device=query.device)
    additive = additive.masked_fill(~mask, float("-inf"))  # what SDPA would make of a bool mask, made once
    return Prepared(query, keys, values, additive, attended, shape)


def run(prepared: Prepared, scale: float | None = None) -> torch.Tensor:
    """The kernel call alone: context ``(..., T, dv)`` from ``prepare``'s output; ``scale`` as in SDPA
    (default ``1 / sqrt(d)``; ``scale=1.0`` gives plain dot-product scores)."""
    p = prepared
    context = F.scaled_dot_product_attention(p.query, p.keys, p.values, attn_mask=p.attn_mask, scale=scale)
    if p.attended is not None:  # where() passes no gradient to the discarded rows: q, k, v get none
        context = torch.where(p.attended, context, torch.zeros_like(context))
    return context.reshape(p.shape)  # (..., T, dv)


def scaled_dot_product_attention(
    query: torch.Tensor,
    keys: torch.Tensor,
    values: torch.Tensor,
    mask: torch.Tensor | None = None,
    scale: float | None = None,
) -> torch.Tensor:
    """context = softmax(Q Kᵀ / sqrt(d), mask) V  (Vaswani et al. 2017, §3.2.1, eq. 1).

    Args:
        query: ``(..., T, d)``; keys: ``(..., S, d)``; values: ``(..., S, dv)``.
        mask: bool, True = attend, as in ``attnlib.masked_softmax`` (a padding mask ``(B, S)`` works).
        scale: the factor of Q Kᵀ; None: ``1 / sqrt(d)``.

    Returns:
        context ``(..., T, dv)``, equal to ``attnlib.attend(attnlib.scores.scaled_dot(query, keys), values,
        mask)[0]``.
    """
    return run(prepare(query, keys, values, mask), scale)
