"""Shared by the chunked-attention tests: a probe of the largest tensor any operation creates."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode


class LargestTensor(TorchDispatchMode):
    """Records the largest number of elements of any tensor an operation creates."""

    def __init__(self) -> None:
        super().__init__()
        self.numel = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for x in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(x, torch.Tensor):
                self.numel = max(self.numel, x.numel())
        return out


@pytest.fixture
def largest_tensor() -> type[LargestTensor]:
    """The probe's class: ``with largest_tensor() as probe: ...``, then ``probe.numel``."""
    return LargestTensor
