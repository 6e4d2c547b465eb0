"""Re-execute course notebooks in place, deterministically, to refresh their stored outputs.

    python tools/execute_notebooks.py                      # every notebook in chapters/ and exercises/
    python tools/execute_notebooks.py chapters/03_*.ipynb  # some of them

Each notebook first gets the current standard setup cell, then runs top to bottom in its own folder under the
course's numeric environment (tools/numeric_env.py: the stored outputs are made under it; the notebooks seed
torch themselves). Widget model ids, which Jupyter draws at random, are
renumbered in order of appearance so that re-executing an unchanged notebook gives an unchanged file.
Prints the wall time of each notebook, then rewrites the Colab editions that changed (tools/colab_edition.py).
Refuses, and changes nothing, on a machine that cannot reproduce the stored outputs (``numeric_env.check``).
"""

from __future__ import annotations

import hashlib
import os
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


def main(argv: list[str]) -> int:
    reason = numeric_env.check()
    if reason is not None:  # outputs stored from here would not reproduce on the machines that check them
        print(f"cannot store outputs made here: {reason}")
        return 1
    paths = [Path(a).resolve() for a in argv] or course_notebooks()
    total = 0.0
    for path in paths:
        seconds = execute(path)
        total += seconds
        print(f"{path.relative_to(ROOT)}: {seconds:.1f} s", flush=True)
    print(f"all {len(paths)} notebooks: {total:.1f} s")
    colab_edition.write(paths)  # the Colab editions follow the stored outputs they are made from
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
