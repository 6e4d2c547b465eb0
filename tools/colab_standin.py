"""The Colab stand-in's runtimes (tests/colab): made once, kept while what they are made of is unchanged.

    python tools/colab_standin.py        # make (or put back to their base state) both runtimes

``.venv-colab/<kind>/`` (one for the chapters, one for the exercise sets, whose otter-grader needs a newer
ipywidgets and would change what the chapters meet) is a virtual environment with what a Colab runtime has
before the course touches it (``COLAB_BASE``: Colab's ipywidgets 7.7.1 and widget front end, PyTorch, numpy,
pandas, matplotlib, an ipykernel) and nothing of the book's tools (no myst-nb, no jupyter-book, no attnlib).
A stamp file holds ``COLAB_BASE``; while it is unchanged the runtime is only put back to its base state (the
attnlib the last run's setup cells installed removed, anything they changed reinstalled), as tools/setup.sh
keeps .venv. ``google.colab`` exists and is imported when Python starts (Colab imports it too), so the
notebooks' standard setup cells take their Colab branch.

The full tier of tools/test.sh runs this before its tests, as part of its set-up (the first time, it installs
torch 2.14.1, a CUDA build of about 5.5 GB, from pip's cache: about 3 minutes); the tests make the runtimes
themselves when it has not run.
"""

from __future__ import annotations

import fcntl
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENVS = ROOT / ".venv-colab"
KINDS = ("chapters", "exercises")
# A Colab runtime's own packages (its ipywidgets front end is 7.x), with a torch other than the book's pinned
# 2.13.0 (both lie on this machine's disk; 2.14.1 is a CUDA build of about 5.5 GB that runs on the CPU).
COLAB_TORCH = "2.14.1"
COLAB_BASE = [
    f"torch=={COLAB_TORCH}",
    "ipywidgets==7.7.1",
    "widgetsnbextension==3.6.10",
    "ipykernel>=6,<7",
    "numpy",
    "pandas",
    "matplotlib",
    "tqdm",
]
STARTUP = "import google.colab  # a Colab runtime imports it at start-up\n"


def freeze(venv: Path) -> dict[str, str]:
    """{package: version} installed in ``venv``."""
    out = subprocess.run(
        [venv / "bin" / "python", "-m", "pip", "list", "--format=json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return {p["name"].lower(): p["version"] for p in json.loads(out)}


def _pip(python: Path, *args: str) -> None:
    done = subprocess.run(
        [python, "-m", "pip", *args, "--quiet", "--disable-pip-version-check"], capture_output=True, text=True
    )
    if done.returncode != 0:
        raise RuntimeError(f"pip {' '.join(args)} in the Colab stand-in failed:\n{done.stderr[-3000:]}")


def make(kind: str) -> str:
    """Make the runtime ``kind`` once, or put it back to its base state; say which. One process at a time
    (a lock file): two test workers, or the set-up and a test, never change one runtime together."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    venv = VENVS / kind
    VENVS.mkdir(exist_ok=True)
    with open(VENVS / f"{kind}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        python = venv / "bin" / "python"
        stamp = venv / ".colab-stamp"
        if stamp.exists() and stamp.read_text() == "\n".join(COLAB_BASE):
            _pip(python, "uninstall", "--yes", "attnlib")  # what the last run's setup cells installed ...
            _pip(python, "install", *COLAB_BASE)  # ... and what it changed
            return "put back to its base state"
        subprocess.run([sys.executable, "-m", "venv", "--clear", venv], check=True)
        _pip(python, "install", "--upgrade", "pip")  # Colab's pip is recent; a new venv's may be too old
        _pip(python, "install", *COLAB_BASE)
        site = Path(
            subprocess.run(
                [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
        )
        colab = site / "google" / "colab"
        colab.mkdir(parents=True, exist_ok=True)
        stand_in = '"""Stand-in for Colab\'s google.colab (tools/colab_standin.py)."""\n'
        (colab / "__init__.py").write_text(stand_in)
        (site / "colab_standin.pth").write_text(STARTUP.replace("\n", "") + "\n")
        (venv / "base-packages.json").write_text(json.dumps(freeze(venv), indent=1, sort_keys=True))
        stamp.write_text("\n".join(COLAB_BASE))
        return f"made (torch {COLAB_TORCH})"


def main() -> int:
    for kind in KINDS:
        start = time.monotonic()
        done = make(kind)
        print(f"setup: Colab stand-in .venv-colab/{kind} {done} ({time.monotonic() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
