"""Fast path: scaled dot-product attention through PyTorch's fused kernel.

The readable reference is ``attend(scores.scaled_dot(q, k), v, mask)``; this function gives the same context
(forward and backward, within float tolerance) via ``torch.nn.functional.scaled_dot_product_attention``,
which never materialises the (T, S) weights, so it does not return them. Fused kernels may return NaN for a
row with nothing to attend to; here such rows give a zero context and zero gradients, as in the contract.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from attnlib import _checks


def scaled_dot_product_attention(
    query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, mask: torch.Tensor | None = None
) -> torch.Tensor:
    """context = softmax(Q Kᵀ / sqrt(d), mask) V  (Vaswani et al. 2017, §3.2.1, eq. 1).

    Args:
        query: ``(..., T, d)``; keys: ``(..., S, d)``; values: ``(..., S, dv)``.
        mask: bool, True = attend, as in ``attnlib.masked_softmax`` (a padding mask ``(B, S)`` works).

    Returns:
        context ``(..., T, dv)``, equal to ``attnlib.attend(attnlib.scores.scaled_dot(query, keys), values,
        mask)[0]``.
    """
    batch = _checks.sequences(query=query, keys=keys, values=values)
    _checks.same_features(keys, "keys", query, "query")
    _checks.positions(values, "values", keys.shape[-2], "keys", keys)
    # The fused kernels want the same batch dims on all three inputs.
    query = query.expand(*batch, *query.shape[-2:])  # (..., T, d)
    keys = keys.expand(*batch, *keys.shape[-2:])  # (..., S, d)
    values = values.expand(*batch, *values.shape[-2:])  # (..., S, dv)
    if mask is None:
        return F.scaled_dot_product_attention(query, keys, values)

    scores_shape = torch.Size((*batch, query.shape[-2], keys.shape[-2]))  # (..., T, S), never formed
    mask = torch.broadcast_to(_checks.mask(mask, scores_shape), scores_shape)  # (..., T, S)
    has_any = mask.any(dim=-1, keepdim=True)  # (..., T, 1)
    # Let fully masked rows attend everywhere so the kernel stays finite, then zero their output; where()
    # passes no gradient to the discarded rows, so q, k and v get none from them.
    safe_mask = mask | ~has_any
    context = F.scaled_dot_product_attention(query, keys, values, attn_mask=safe_mask)
    return torch.where(has_any, context, torch.zeros_like(context))
