"""attnlib.device(): cuda, else mps, else cpu; ATTNLIB_DEVICE overrides and is validated."""

import importlib

import pytest
import torch

import attnlib

# attnlib.device is the function; the module of the same name is reached through importlib.
device_module = importlib.import_module("attnlib.device")


@pytest.fixture
def no_accelerators(monkeypatch):
    monkeypatch.delenv("ATTNLIB_DEVICE", raising=False)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(device_module, "_mps_available", lambda: False)
    return monkeypatch


def test_falls_back_to_cpu_without_accelerators(no_accelerators):
    assert attnlib.device() == torch.device("cpu")


def test_prefers_cuda_then_mps(no_accelerators):
    no_accelerators.setattr(device_module, "_mps_available", lambda: True)
    assert attnlib.device() == torch.device("mps")
    no_accelerators.setattr(torch.cuda, "is_available", lambda: True)
    assert attnlib.device() == torch.device("cuda")


def test_env_var_overrides_the_choice(no_accelerators):
    no_accelerators.setattr(torch.cuda, "is_available", lambda: True)
    no_accelerators.setenv("ATTNLIB_DEVICE", "cpu")
    assert attnlib.device() == torch.device("cpu")


def test_empty_env_var_means_unset(no_accelerators):
    no_accelerators.setenv("ATTNLIB_DEVICE", "")
    assert attnlib.device() == torch.device("cpu")


@pytest.mark.parametrize("value", ["gpu", "cuda:x", "meta"])
def test_invalid_env_var_raises_value_error(no_accelerators, value):
    no_accelerators.setenv("ATTNLIB_DEVICE", value)
    with pytest.raises(ValueError, match=rf"ATTNLIB_DEVICE='{value}' is not a usable device; use one of cpu"):
        attnlib.device()


def test_unavailable_env_device_raises_value_error(no_accelerators):
    no_accelerators.setenv("ATTNLIB_DEVICE", "cuda")
    with pytest.raises(ValueError, match=r"ATTNLIB_DEVICE='cuda' but CUDA is not available"):
        attnlib.device()
