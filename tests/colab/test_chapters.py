"""Every chapter's Colab edition runs to the end on the Colab stand-in (tests/colab/conftest.py)."""

import pytest
from colab_edition import edition_path
from notebooks import ROOT

from .conftest import colab_runtime, run_alone

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    yield from colab_runtime("chapters", tmp_path_factory)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_the_colab_edition_runs_to_the_end(path, kernel, colab_origin, tmp_path):
    nb = run_alone(edition_path(path), kernel, colab_origin, tmp_path)  # a cell that raises fails the test
    printed = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert "attnlib" in printed and "will run on: cpu" in printed  # the setup cell installed and imported it


def test_installing_attnlib_keeps_colabs_widgets_and_torch(kernel, colab_origin, tmp_path):
    from .conftest import VENVS, _freeze

    run_alone(edition_path(CHAPTERS[0]), kernel, colab_origin, tmp_path)
    packages = _freeze(VENVS / "chapters")
    assert packages["ipywidgets"] == "7.7.1"
    assert packages["torch"].startswith("2.13.0")
    assert "myst-nb" not in packages and "jupyter-book" not in packages
