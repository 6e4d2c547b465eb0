"""What the grader reads: the notebooks of a folder (regular files only, each with its label), their bytes
(capped, read without following a link) and their code cells (in time linear in their size)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from attnlib_grader import report

MAX_NOTEBOOK_BYTES = 20 * 2**20  # a larger file is not graded (a grader error for that learner)


def code_cells(notebook_bytes: bytes) -> list[str]:
    """The code cells of a submitted notebook, in order; raises ValueError if it is not a notebook. A
    version-4 notebook is read as JSON, in time linear in its size (no schema validation, which is not)."""
    try:
        nb = json.loads(notebook_bytes.decode("utf-8"))
        if isinstance(nb, dict) and nb.get("nbformat") == 4 and isinstance(nb.get("cells"), list):
            cells = []
            for cell in nb["cells"]:
                if isinstance(cell, dict) and cell.get("cell_type") == "code":
                    source = cell.get("source", "")
                    cells.append("".join(source) if isinstance(source, list) else str(source))
            if all(isinstance(c, str) for c in cells):
                return cells
        import nbformat

        nb = nbformat.reads(notebook_bytes.decode("utf-8"), as_version=4)
        return [c.source for c in nb.cells if c.cell_type == "code"]
    except Exception as e:  # nbformat and json raise many kinds for broken files
        from attnlib.grading.messages import say

        error = f"{type(e).__name__}: {str(e)[:200]}"
        raise ValueError(say("not a readable notebook ({error})", error=error)) from None


def language(notebook_bytes: bytes) -> str:
    """The language a submission's feedback is written in: its ``metadata.attnlib.language`` (the Korean
    notebooks carry "ko"), English for anything else, an unreadable file included."""
    from attnlib.grading import messages

    try:
        return messages.notebook_language(json.loads(notebook_bytes.decode("utf-8"))) or "en"
    except Exception:  # noqa: BLE001 - a broken notebook is graded (and reported) in English
        return "en"


def find_submissions(folder: str | Path) -> tuple[list[tuple[str, Path]], list[str]]:
    """The notebooks to grade in ``folder`` (regular files named ``*.ipynb``, any case), each with its label
    (``report.label``: one-to-one), and a warning for every other entry: folders, links, devices and other
    files are never opened."""
    found, skipped = [], []
    for entry in sorted(os.scandir(folder), key=lambda e: os.fsencode(e.name)):
        shown = report.escaped(entry.name)
        if entry.is_symlink():
            skipped.append(f"{shown}: skipped, a symbolic link (copy the file itself into the folder)")
        elif not entry.is_file(follow_symlinks=False):
            skipped.append(f"{shown}: skipped, not a regular file")
        elif not entry.name.lower().endswith(".ipynb"):
            skipped.append(f"{shown}: skipped, not named *.ipynb")
        else:
            found.append((report.label(entry.name), Path(entry.path)))
    return found, skipped


def read(path: Path) -> bytes | None:
    """The file's bytes, without following a link that replaced it, at most MAX_NOTEBOOK_BYTES + 1."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb") as f:
            fd = -1
            return f.read(MAX_NOTEBOOK_BYTES + 1)
    finally:
        if fd >= 0:
            os.close(fd)
