"""Re-execute course notebooks in place, deterministically, to refresh their stored outputs.

    python tools/execute_notebooks.py                      # every chapter
    python tools/execute_notebooks.py chapters/03_*.ipynb  # some of them
    python tools/execute_notebooks.py --rebase             # every notebook, made on this machine from now on

Each notebook first gets the current standard setup cell, then runs top to bottom in its own folder under the
course's numeric environment (tools/numeric_env.py: the stored outputs are made under it; the notebooks seed
torch themselves), with the prose's claims checked (a false one stops the run). Widget model ids, which
Jupyter draws at random, are renumbered in order of appearance so that re-executing an unchanged notebook
gives an unchanged file. Prints the wall time of each notebook, then rewrites the Colab editions that changed
(tools/colab_edition.py); the Korean notebooks follow with ``tools/i18n.py generate``. The exercise sets'
learner notebooks are made by their build (``tools/exercises.py build``, which withholds some outputs), not
here.

Refuses, and changes nothing, on a machine that cannot reproduce the stored outputs (``numeric_env.check``):
outputs stored from there would not match those of the other notebooks on any machine. ``--rebase`` is the
way out when the course moves to another kind of machine: every chapter runs here, then the exercise build
remakes the learner notebooks, and only when all of them ran (every claim holding on the new numbers) does
this machine's fingerprint become the notebooks' one (``numeric_env.record("notebooks")``). The stored
package data (results, weights, reference tables) keep their own machine.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import colab_edition
import nbformat
import numeric_env
from nbclient import NotebookClient
from notebooks import ROOT, course_notebooks, joined_streams
from sync_setup_cell import sync

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def stable_widget_ids(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Replace random widget model ids by ids derived from the notebook name and their order."""
    state = nb.metadata.get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    if not state:
        return nb
    text = nbformat.writes(nb)
    for i, old in enumerate(state):
        new = hashlib.sha256(f"{name}:{i}".encode()).hexdigest()[:32]
        text = text.replace(old, new)
    return nbformat.reads(text, as_version=4)


KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}


def execute(path: Path) -> float:
    sync(path)
    nb = nbformat.read(path, as_version=4)
    nb.metadata["kernelspec"] = KERNELSPEC  # Colab and myst-nb read it; authoring tools may leave their own
    nb.metadata.pop("jupytext", None)
    numeric_env.apply()  # the kernel inherits it
    os.environ["ATTNLIB_STRICT_CLAIMS"] = "1"  # the book states its claims: a false one must stop it
    client = NotebookClient(
        nb,
        timeout=900,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
    )
    start = time.perf_counter()
    client.execute()
    seconds = time.perf_counter() - start
    nb = joined_streams(stable_widget_ids(nb, path.stem))
    for cell in nb.cells:  # execution counts start at 1 on every run anyway; keep them
        cell.get("metadata", {}).pop("execution", None)
    nbformat.write(nb, path)
    return seconds


def exercise_build() -> None:
    """The exercise sets' build, which executes their learner notebooks under the pin (tools/exercises.py)."""
    subprocess.run([sys.executable, str(ROOT / "tools" / "exercises.py"), "build"], check=True)


def main(argv: list[str]) -> int:
    rebase = "--rebase" in argv
    argv = [a for a in argv if a != "--rebase"]
    if rebase and argv:
        print(
            "--rebase runs every notebook (a machine becomes the notebooks' one only once all of them were "
            f"made on it): give no paths, not {' '.join(argv)}"
        )
        return 2
    # outputs stored from a machine that cannot reproduce the others would match nothing anywhere
    reason = numeric_env.verdict(*numeric_env.probe()[:4]) if rebase else numeric_env.check()
    if reason is not None:
        print(f"cannot store outputs made here: {reason}")
        return 1
    paths = [Path(a).resolve() for a in argv] or [
        p for p in course_notebooks() if p.parent.name == "chapters"
    ]
    total = 0.0
    for path in paths:
        seconds = execute(path)
        total += seconds
        print(f"{path.relative_to(ROOT)}: {seconds:.1f} s", flush=True)
    print(f"all {len(paths)} notebooks: {total:.1f} s")
    if rebase:
        exercise_build()
        print(f"recorded this machine's numbers in {numeric_env.record('notebooks').relative_to(ROOT)}")
    colab_edition.write(paths)  # the Colab editions follow the stored outputs they are made from
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
