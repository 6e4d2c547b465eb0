"""Files generated from the repository (Colab editions, diagrams): written only when they change."""

from __future__ import annotations

from pathlib import Path


def update(target: Path, data: bytes, check: bool) -> bool:
    """True when ``target`` does not hold ``data``; then write it, unless ``check``."""
    if target.exists() and target.read_bytes() == data:
        return False
    if not check:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return True


def report(stale: list[str], command: str) -> int:
    """For ``--check``: list the out-of-date files; exit status 1 when there is one."""
    for shown in stale:
        print(f"out of date: {shown} (run {command})")
    return 1 if stale else 0
