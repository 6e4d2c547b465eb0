"""The learner notebook's own cells: the setup and grading cells every set starts with, the cells made from
the master's, and the cells whose outputs the committed notebook does not store."""

from __future__ import annotations

import json

import nbformat
from notebooks import SETUP_TAGS, setup_cell_source

OTTER_VERSION = "7.0.0"
ANSWER_PROMPT = "_Type your answer here, replacing this text._"
# A master cell with this tag is a predict-then-run cell: the learner writes a prediction, then runs it.
PREDICT_TAG = "predict-then-run"
# Learner cells whose outputs are not stored (the learner has not done the exercise yet, so what they print
# would be the answer): the check cell of a find-the-bug question, which runs the public tests on the buggy
# code as given, and every predict-then-run cell. nbval runs them and does not compare their outputs.
WITHHELD = {"find_the_bug": "the check of a find-the-bug question", "predict": "a predict-then-run cell"}


# What grader.check needs of otter-grader in Colab: otter without its dependencies (they would replace Colab's
# ipywidgets 7.7 by 8 and add about 40 packages, Sphinx and a headless browser among them, for the teacher's
# tools), the three small packages its checking code imports, and four common ones Colab already has (pip
# installs them only where missing). Measured: this alone runs otter.Notebook.check (tests/colab).
OTTER_CHECK_PACKAGES = [
    f"otter-grader=={OTTER_VERSION}",
    "fica==0.4.1",
    "ipylab==1.1.0",
    "python-frontmatter==1.3.0",
]
OTTER_CHECK_COMMON = ["dill", "pandas", "pyyaml", "wrapt>=1.16,<2"]
# What `pip check` then reports missing, on purpose (the Colab stand-in's test compares the two): the
# teacher's tools of otter-grader and fica, and otter's ipywidgets 8 (Colab keeps 7.7 for its front end).
OTTER_LEFT_OUT = {"click", "docutils", "jupytext", "python-on-whales", "sphinx", "ipywidgets"}


def grading_cell_source(set_name: str) -> str:
    otter, common = json.dumps(OTTER_CHECK_PACKAGES), ", ".join(json.dumps(p) for p in OTTER_CHECK_COMMON)
    left_out = ", ".join(sorted(OTTER_LEFT_OUT - {"ipywidgets"}))
    return f'''# grader.check("q1") runs the public tests of q1 (otter-grader; installed here in Colab).
import subprocess
import sys

if "google.colab" in sys.modules:  # otter-grader's checking part only: Colab keeps its own widgets
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-warn-conflicts"]
    otter = {otter}
    subprocess.run([*pip, "--no-deps", *otter], check=True)
    subprocess.run([*pip, {common}], check=True)  # installs only what is missing
    # `pip check` now lists, on purpose: {left_out} (teacher's tools), ipywidgets 8 (Colab keeps 7.7)

from attnlib import grading

grader = grading.notebook("{set_name}")'''


def _withhold(cell, why: str):
    """Mark a learner cell whose outputs the committed notebook does not store (``WITHHELD``)."""
    cell.metadata.setdefault("exercise", {})["withheld"] = why
    cell.metadata["tags"] = ["nbval-ignore-output"]  # nbval runs it but compares no stored output
    return cell


def withheld(cell) -> str | None:
    """Why this learner cell stores no outputs (a key of ``WITHHELD``), or None."""
    return cell.get("metadata", {}).get("exercise", {}).get("withheld")


def _new_cell(kind: str, source: str, answer: str | None = None, render: dict | None = None):
    cell = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}[kind](source)
    if answer:
        cell.metadata["exercise"] = {"answer": answer}  # lets tests and teachers find the answer cells
    if render:
        cell.metadata["mystnb"] = render  # the master's rendering options, e.g. {"image": {"alt": ...}}
    return cell


def _notebook(set_name: str, cells: list) -> nbformat.NotebookNode:
    setup = nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": list(SETUP_TAGS)})
    grading = nbformat.v4.new_code_cell(grading_cell_source(set_name))
    nb = nbformat.v4.new_notebook(cells=[setup, grading, *cells])
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nb.cells[0]["id"], nb.cells[1]["id"] = "setup-cell", "grading-cell"
    for i, cell in enumerate(nb.cells[2:], start=1):
        cell["id"] = f"cell-{i:03d}"  # fixed ids: rebuilding an unchanged set changes no byte
    return nb
