"""Results computed ahead of time and shipped with attnlib: what a chapter reads but cannot recompute in its
90 seconds (the other seeds of a training run, a longer budget, another model size) or on the learner's
machine (a benchmark table measured on the course's machines).

    attnlib/results/<name>.json   ->   load(name)

A chapter trains live what its lesson needs and reads the rest from here, and its text says which. Every file
says how it was made: ``recipe`` (the script under ``tools/recipes/`` that computes it), ``environment``
(torch version and CPU kernels) and, for trained results, ``seeds``: ``{seed: result}``, plain numbers and
lists. ``python tools/stored_results.py make NAME`` computes a recipe's seeds under the course's pinned
numeric environment; ``check`` recomputes some of them and fails unless they are equal, bit for bit (the test
command checks a different seed of every recipe on each commit). Being package data, the files are there
wherever attnlib is installed: a notebook opened alone in Colab reads them too.
"""

from __future__ import annotations

import json
import re
from importlib import resources
from typing import Any

_NAME = re.compile(r"[a-z0-9_]+")


def available() -> list[str]:
    """The names of the stored results shipped with this attnlib."""
    folder = resources.files("attnlib") / "results"
    if not folder.is_dir():  # an attnlib that ships nothing stored yet
        return []
    return sorted(p.name.removesuffix(".json") for p in folder.iterdir() if p.name.endswith(".json"))


def load(name: str) -> dict[str, Any]:
    """The stored results ``name``: a dict with ``description``, ``recipe``, ``environment`` and either
    ``seeds`` (``{seed (int): result}``) or ``table`` (a measured table)."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise ValueError(f"name must be lower-case letters, digits and _, got {name!r}")
    path = resources.files("attnlib") / "results" / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no stored results named {name!r}; shipped: {available()}")
    data = json.loads(path.read_text(encoding="utf-8"))
    if "seeds" in data:
        data["seeds"] = {int(seed): result for seed, result in data["seeds"].items()}
    return data


def seed_results(name: str, seeds) -> list:
    """The stored results of ``name`` for each of ``seeds``, in order (a missing seed is an error: the text
    says which seeds are stored)."""
    stored = load(name)["seeds"]
    missing = [s for s in seeds if s not in stored]
    if missing:
        raise ValueError(f"{name!r} stores seeds {sorted(stored)}, not {missing}")
    return [stored[s] for s in seeds]
