"""Every chapter's Colab edition runs to the end on the learner's-machine stand-in (tests/colab/conftest.py:
another torch, no numeric pin, default threads, other seeds), and every claim of its prose holds there."""

import os

import pytest
from colab_edition import edition_path
from notebooks import ROOT

from .conftest import COLAB_TORCH, SEED_BASE, claim_notes, colab_runtime, run_alone

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from colab_runtime("chapters", tmp_path_factory)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_colab_edition_runs_to_the_end(path, kernel, colab_origin, tmp_path):
    nb = run_alone(edition_path(path), kernel, colab_origin, tmp_path)  # a cell that raises fails the test
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "attnlib" in printed and "will run on: cpu" in printed  # the setup cell installed and imported it
    notes = claim_notes(nb)
    assert not notes, f"{len(notes)} claim(s) of the prose failed with seeds from {SEED_BASE}:\n" + "\n".join(
        notes
    )


def test_installing_attnlib_keeps_colabs_widgets_and_torch(kernel, colab_origin, tmp_path):
    from .conftest import VENVS, freeze

    run_alone(edition_path(CHAPTERS[0]), kernel, colab_origin, tmp_path)
    packages = freeze(VENVS / "chapters")
    assert packages["ipywidgets"] == "7.7.1"
    assert packages["torch"].startswith(COLAB_TORCH)
    assert "myst-nb" not in packages and "jupyter-book" not in packages


def test_the_stand_in_is_not_the_books_machine(kernel, colab_origin, tmp_path):
    """Positive control of the stand-in itself: its kernel runs another torch, without the numeric pins and
    strict claims of the test command, with the shifted seeds; and a false claim prints the note the tests
    look for."""
    import nbformat

    probe = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "import os, torch\n"
                "from attnlib.notebook import claim\n"
                "from attnlib.seeds import course_seeds\n"
                "pins = [os.environ.get(name) for name in ('ATEN_CPU_CAPABILITY', 'OMP_NUM_THREADS')]\n"
                "print(torch.__version__, *pins)\n"
                "print(course_seeds(2))\n"
                "claim(False, 'this probe fails on purpose')"
            )
        ]
    )
    path = tmp_path / "probe.ipynb"
    nbformat.write(probe, path)
    from nbclient import NotebookClient

    env_origin = os.environ.get("PYTHONPATH", "")
    os.environ["PYTHONPATH"] = str(ROOT)  # the probe imports this checkout's attnlib, not an installed one
    try:
        NotebookClient(
            probe, timeout=300, kernel_name=kernel, resources={"metadata": {"path": str(tmp_path)}}
        ).execute()
    finally:
        os.environ["PYTHONPATH"] = env_origin
    printed = "".join(o.get("text", "") for o in probe.cells[0].outputs)
    assert printed.startswith(f"{COLAB_TORCH}") and " None None\n" in printed
    assert f"[{SEED_BASE}, {SEED_BASE + 1}]" in printed
    assert claim_notes(probe)
