"""Shared setup for the model tests: the same random state and one thread (the tensors are tiny)."""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed_and_threads():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
