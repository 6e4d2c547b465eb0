"""Shared by every test: the same random state, and one CPU thread.

The tensors in these tests are tiny; a second thread only adds synchronisation, which made the suite several
times slower on a busy 2-core machine.
"""

import pytest
import torch


@pytest.fixture(autouse=True)
def _seed_and_one_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    yield
    torch.set_num_threads(threads)
