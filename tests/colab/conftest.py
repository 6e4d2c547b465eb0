"""A stand-in for Google Colab, the learner's machine: a fresh environment with another torch, no numeric pin
and other seeds, where the setup cells take their Colab branch and install attnlib from a git URL of this
repository.

- ``.venv-colab/<kind>/``: a runtime with what Colab has before the course touches it, made by
  tools/colab_standin.py (the full tier's set-up runs it; a runtime not yet made is made here).
  ``google.colab`` exists and is imported when Python starts, so the standard setup cell takes its Colab
  branch and pip-installs ``attnlib @ git+<url>@<branch>``. The URL is _config.yml's; here it is replaced by a
  bare clone of this repository's committed state (no network is needed).
- Each notebook runs alone in an empty folder, as Colab opens it.
- It is the learner's machine, not the book's: torch 2.14.1 (a CUDA build, run on the CPU here; the book pins
  2.13.0), none of the numeric pins of tools/numeric_env.py (torch picks its own kernels and thread count),
  ``ATTNLIB_STRICT_CLAIMS`` unset (a false claim prints a note, as for a learner) and ``ATTNLIB_SEED_BASE`` =
  ``SEED_BASE``: the seeds a chapter averages over are not the ones the book was written with. A claim that
  held only for the book's seeds, torch or kernels prints a note here, and the tests fail on any note.

What pip changed in the environment, from the base to after every notebook ran, is written to
``.venv-colab/<kind>/pip-changes.txt`` and printed by the tests (``-s``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

from colab_standin import COLAB_TORCH, VENVS, freeze, make  # noqa: E402, F401 (COLAB_TORCH: test_chapters)

SEED_BASE = 1000  # the seeds the stand-in's notebooks average over start here (the book's start at 0)
# What the learner's machine does not have: the book's numeric pins (tools/numeric_env.py) and strict claims.
NOT_ON_A_LEARNERS_MACHINE = [
    "ATEN_CPU_CAPABILITY",
    "MKL_ENABLE_INSTRUCTIONS",
    "ONEDNN_MAX_CPU_ISA",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "PYTHONHASHSEED",
    "CUDA_VISIBLE_DEVICES",
    "ATTNLIB_STRICT_CLAIMS",
]
CLAIM_NOTE = "Note: the text claims that"


@pytest.fixture(scope="session")
def colab_origin(tmp_path_factory) -> str:
    """A git URL of this repository's committed state, standing in for _config.yml's repository URL."""
    bare = tmp_path_factory.mktemp("origin") / "attention-course.git"
    subprocess.run(["git", "clone", "--quiet", "--bare", ROOT, bare], check=True)
    return f"git+file://{bare}"


def colab_runtime(kind: str, tmp_path_factory):
    """Make (once) the stand-in runtime ``kind``; yield its kernel name; report what pip changed in it."""
    venv = VENVS / kind
    make(kind)
    kernels = tmp_path_factory.mktemp("kernels")
    spec = kernels / "kernels" / f"colab-{kind}"
    spec.mkdir(parents=True)
    # The kernel starts through env(1): the pins and strict claims of the test command's own environment are
    # removed, the seed base set.
    unset = [arg for name in NOT_ON_A_LEARNERS_MACHINE for arg in ("-u", name)]
    argv = [
        "/usr/bin/env",
        *unset,
        f"ATTNLIB_SEED_BASE={SEED_BASE}",
        str(venv / "bin" / "python"),
        "-m",
        "ipykernel_launcher",
        "-f",
        "{connection_file}",
    ]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": kind, "language": "python"}))
    os.environ["JUPYTER_PATH"] = str(kernels) + os.pathsep + os.environ.get("JUPYTER_PATH", "")
    yield f"colab-{kind}"
    changes = _pip_changes(venv)
    (venv / "pip-changes.txt").write_text(changes)
    print(f"\nColab stand-in ({kind}), what pip changed:\n{changes}")


def _pip_changes(venv: Path) -> str:
    before = json.loads((venv / "base-packages.json").read_text())
    after = freeze(venv)
    lines = [
        f"  changed {n}: {before[n]} -> {v}"
        for n, v in sorted(after.items())
        if n in before and before[n] != v
    ]
    lines += [f"  added {n} {v}" for n, v in sorted(after.items()) if n not in before]
    lines += [f"  removed {n} {v}" for n, v in sorted(before.items()) if n not in after]
    return "\n".join(lines) + "\n"


def run_alone(path: Path, kernel: str, origin: str, folder: Path):
    """Run the notebook at ``path`` alone in the empty ``folder`` on the stand-in; return it, executed."""
    import nbformat
    from nbclient import NotebookClient
    from notebooks import repository

    nb = nbformat.read(path, as_version=4)
    url, _ = repository()
    setup = nb.cells[0]
    assert f"git+{url}@" in setup.source, "the setup cell installs from _config.yml's repository"
    setup.source = setup.source.replace(f"git+{url}", origin)
    NotebookClient(
        nb, timeout=600, kernel_name=kernel, resources={"metadata": {"path": str(folder)}}
    ).execute()
    return nb


def claim_notes(nb) -> list[str]:
    """The claim notes (attnlib.notebook.claim) an executed notebook printed: each a sentence of the prose
    that this run did not bear out."""
    return [
        "".join(output.get("text", ""))
        for cell in nb.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        if CLAIM_NOTE in "".join(output.get("text", ""))
    ]
