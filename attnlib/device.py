"""Pick the device a lesson runs on: cuda if available, else mps, else cpu.

The environment variable ``ATTNLIB_DEVICE`` (``cpu``, ``cuda``, ``cuda:1``, ``mps``) overrides the choice, so
that a reader, or CI, can pin every notebook to one device without editing them.

Note: ``attnlib.device`` is this function (the package re-exports it over the submodule's name); to reach the
module itself use ``importlib.import_module("attnlib.device")``.
"""

from __future__ import annotations

import os

import torch

ENV_VAR = "ATTNLIB_DEVICE"
_KINDS = ("cpu", "cuda", "mps")


def _mps_available() -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def _from_env(value: str) -> torch.device:
    """Parse and check the override; a typo must fail loudly rather than silently fall back to cpu."""
    hint = f"{ENV_VAR}={value!r} is not a usable device; use one of {', '.join(_KINDS)} (e.g. cuda:0)"
    try:
        dev = torch.device(value)
    except RuntimeError:
        raise ValueError(hint) from None
    if dev.type not in _KINDS:
        raise ValueError(hint)
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(f"{ENV_VAR}={value!r} but CUDA is not available on this machine")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise ValueError(
                f"{ENV_VAR}={value!r} but only {torch.cuda.device_count()} CUDA device(s) are visible"
            )
    if dev.type == "mps" and not _mps_available():
        raise ValueError(f"{ENV_VAR}={value!r} but MPS is not available on this machine")
    return dev


def device() -> torch.device:
    """``torch.device`` to run on: ``$ATTNLIB_DEVICE`` if set (non-empty), else cuda, else mps, else cpu.

    Raises:
        ValueError: ``ATTNLIB_DEVICE`` names an unknown or unavailable device.
    """
    value = os.environ.get(ENV_VAR, "").strip().lower()
    if value:
        return _from_env(value)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if _mps_available():
        return torch.device("mps")
    return torch.device("cpu")
