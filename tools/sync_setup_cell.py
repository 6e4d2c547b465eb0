"""Write the standard setup cell, and the evidence cells' metadata, into every course notebook, or check them.

python tools/sync_setup_cell.py           # write (replaces the first cell if it is tagged "setup")
python tools/sync_setup_cell.py --check   # exit 1 and list the notebooks that are out of sync

An evidence cell (tag ``evidence``, first line ``#@title How we know: ...``) gets the metadata that folds it
on the website, in Colab and in Jupyter (tools/notebooks.py, ``evidence_metadata``).
"""

from __future__ import annotations

import sys

import nbformat
from notebooks import (
    ROOT,
    SETUP_TAGS,
    course_notebooks,
    evidence_in_sync,
    evidence_metadata,
    has_setup_cell,
    is_evidence,
    setup_cell_in_sync,
    setup_cell_source,
)


def in_sync(nb) -> bool:
    return setup_cell_in_sync(nb) and evidence_in_sync(nb)


def sync(path) -> bool:
    """Put the current setup cell first in the notebook at `path`; True when the file changed."""
    nb = nbformat.read(path, as_version=4)
    if in_sync(nb):
        return False
    if not setup_cell_in_sync(nb):
        cell = nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": list(SETUP_TAGS)})
        if has_setup_cell(nb):
            cell.outputs = nb.cells[0].get("outputs", [])
            cell.execution_count = nb.cells[0].get("execution_count")
            nb.cells[0] = cell
        else:
            nb.cells.insert(0, cell)
        cell["id"] = "setup-cell"  # a fixed id keeps the file stable from one sync to the next
    for cell in nb.cells:
        if is_evidence(cell):
            cell.metadata = nbformat.from_dict(evidence_metadata(cell))
    nbformat.write(nb, path)
    return True


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = [p for p in course_notebooks() if not in_sync(nbformat.read(p, as_version=4))]
    if check:
        for p in stale:
            print(f"out of sync: {p.relative_to(ROOT)} (run python tools/sync_setup_cell.py)")
        return 1 if stale else 0
    for p in stale:
        sync(p)
        print(f"updated: {p.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
