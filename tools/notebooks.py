"""Shared facts about the course's notebooks: where they are, and the standard setup cell.

The standard setup cell is the first cell of every notebook. In Colab it installs attnlib from the course
repository (URL and branch read from _config.yml, the one place that holds them); elsewhere it installs
nothing. It then prints the device attnlib will use.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import yaml

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK_DIRS = ("chapters", "exercises")
SETUP_TAG = "setup"
# "hide-cell" folds the cell on the website (the page opens on its title); Colab and Jupyter show it.
SETUP_TAGS = [SETUP_TAG, "hide-cell"]
# An evidence cell holds a section's evidence (seed tables, claims, glue) after its lesson code. Its first
# line is its title; the rest of its metadata follows from the tag: a collapsed block titled "How we know:
# ..." on the website (myst-nb's hide-cell with the title as its prompt), a form cell in Colab (only the title
# and the output show), collapsed source in Jupyter.
EVIDENCE_TAG = "evidence"
EVIDENCE_TITLE = re.compile(r"#@title (How we know: \S.*)")


def course_notebooks() -> list[Path]:
    """Every notebook of the course, in chapter order (chapters/ first, then exercises/)."""
    found: list[Path] = []
    for folder in NOTEBOOK_DIRS:
        found += sorted(p for p in (ROOT / folder).glob("*.ipynb"))
    return found


def repository() -> tuple[str, str]:
    """(url, branch) of the course repository, from _config.yml."""
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    repo = config["repository"]
    return repo["url"].rstrip("/"), repo.get("branch", "main")


def setup_cell_source() -> str:
    url, branch = repository()
    return f"""# Standard setup cell (written by tools/sync_setup_cell.py; the same in every notebook).
# In Colab it installs attnlib from the course repository; elsewhere it installs nothing.
import sys

if "google.colab" in sys.modules:
    import subprocess

    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "attnlib @ git+{url}@{branch}"],
        check=True,
    )

import attnlib

print(f"attnlib {{attnlib.__version__}} will run on: {{attnlib.device()}}")"""


def has_setup_cell(nb: nbformat.NotebookNode) -> bool:
    return bool(nb.cells) and SETUP_TAG in nb.cells[0].get("metadata", {}).get("tags", [])


def setup_cell_in_sync(nb: nbformat.NotebookNode) -> bool:
    first = nb.cells[0] if nb.cells else None
    return (
        has_setup_cell(nb)
        and first.cell_type == "code"
        and first.metadata.get("tags") == SETUP_TAGS
        and first.source == setup_cell_source()
    )


def is_evidence(cell) -> bool:
    return cell.get("cell_type") == "code" and EVIDENCE_TAG in cell.get("metadata", {}).get("tags", [])


def evidence_title(cell) -> str:
    """The title of an evidence cell, from its first line ``#@title How we know: ...``."""
    first = cell.source.split("\n", 1)[0].strip()
    match = EVIDENCE_TITLE.fullmatch(first)
    if not match:
        raise ValueError(
            f"an evidence cell must start with '#@title How we know: <what it shows>', got {first[:80]!r}"
        )
    return match[1]


def evidence_metadata(cell) -> dict:
    """The metadata an evidence cell must carry: its own tags plus the website's, the collapsed block's
    title, Jupyter's collapsed source and Colab's form view."""
    metadata = dict(cell.get("metadata", {}))
    tags = [t for t in metadata.get("tags", []) if t not in (EVIDENCE_TAG, "hide-cell")]
    metadata["tags"] = [EVIDENCE_TAG, "hide-cell", *tags]
    title = evidence_title(cell)
    metadata["mystnb"] = {
        "code_prompt_show": title,
        "code_prompt_hide": f"Hide: {title[0].lower()}{title[1:]}",
    }
    metadata["jupyter"] = {**metadata.get("jupyter", {}), "source_hidden": True}
    metadata["cellView"] = "form"
    return metadata


def evidence_in_sync(nb: nbformat.NotebookNode) -> bool:
    return all(cell.metadata == evidence_metadata(cell) for cell in nb.cells if is_evidence(cell))


def joined_streams(nb: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """Join each run of consecutive outputs of one stream (stdout, stderr) into one output, in place.

    How a cell's prints are cut into stream outputs depends on when the kernel flushed them, so two runs of
    the same notebook could store different outputs; joined, the stored file depends only on the text
    printed (nbval joins them the same way before comparing).
    """
    for cell in nb.cells:
        joined = []
        for output in cell.get("outputs", []):
            previous = joined[-1] if joined else None
            if (
                output.get("output_type") == "stream"
                and previous is not None
                and previous.get("output_type") == "stream"
                and previous.get("name") == output.get("name")
            ):
                previous["text"] = "".join(previous["text"]) + "".join(output["text"])
            else:
                joined.append(output)
        if "outputs" in cell:
            cell["outputs"] = joined
    return nb
