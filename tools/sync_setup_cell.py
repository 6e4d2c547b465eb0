"""Write the standard setup cell into every course notebook, or check that each has it.

python tools/sync_setup_cell.py           # write (replaces the first cell if it is tagged "setup")
python tools/sync_setup_cell.py --check   # exit 1 and list the notebooks that are out of sync
"""

from __future__ import annotations

import sys

import nbformat
from notebooks import (
    ROOT,
    SETUP_TAGS,
    course_notebooks,
    has_setup_cell,
    setup_cell_in_sync,
    setup_cell_source,
)


def sync(path) -> bool:
    """Put the current setup cell first in the notebook at `path`; True when the file changed."""
    nb = nbformat.read(path, as_version=4)
    if setup_cell_in_sync(nb):
        return False
    cell = nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": list(SETUP_TAGS)})
    if has_setup_cell(nb):
        cell.outputs = nb.cells[0].get("outputs", [])
        cell.execution_count = nb.cells[0].get("execution_count")
        nb.cells[0] = cell
    else:
        nb.cells.insert(0, cell)
    cell["id"] = "setup-cell"  # a fixed id keeps the file stable from one sync to the next
    nbformat.write(nb, path)
    return True


def main(argv: list[str]) -> int:
    check = "--check" in argv
    stale = [p for p in course_notebooks() if not setup_cell_in_sync(nbformat.read(p, as_version=4))]
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
