"""The sinusoidal positional encoding of Vaswani et al. 2017, §3.5 (chapter 9 of the course)."""

from __future__ import annotations

import torch

from attnlib import _checks


def positional_encoding(S: int, d: int, base: float = 10_000.0) -> torch.Tensor:
    """``(S, d)`` sinusoids, positions p = 0 … S-1 (Vaswani et al. 2017, §3.5):

    PE[p, 2i] = sin(p / base^(2i/d)),  PE[p, 2i+1] = cos(p / base^(2i/d)).
    """
    S = _checks.positive_int(S, "S", allow_zero=True)
    d = _checks.positive_int(d, "d")
    position = torch.arange(S, dtype=torch.float32)[:, None]  # (S, 1)
    frequency = base ** (-torch.arange(0, d, 2, dtype=torch.float32) / d)  # (ceil(d/2),): 1 / base^(2i/d)
    angle = position * frequency  # (S, ceil(d/2))
    pe = torch.zeros(S, d)
    pe[:, 0::2] = torch.sin(angle)
    pe[:, 1::2] = torch.cos(angle[:, : d // 2])
    return pe
