"""Chapter 8's real-data cell (Tatoeba, where the learner has the internet) runs as written: on the sample of
spa.txt the repository ships, with the download replaced by it, it trains, decodes and draws its maps."""

import re
from pathlib import Path

import matplotlib
import nbformat
import pytest

import attnlib.data.tatoeba

ROOT = Path(__file__).resolve().parents[2]
CHAPTER = ROOT / "chapters" / "08_translation.ipynb"
SAMPLE = Path(__file__).parent / "fixtures" / "spa_sample.txt"
BUDGET = re.compile(r"^REAL_PAIRS, REAL_STEPS = [\d_]+, [\d_]+$", re.M)


def _cells() -> dict[str, str]:
    return {c.get("id"): c.source for c in nbformat.read(CHAPTER, as_version=4).cells}


@pytest.mark.slow  # trains a model
def test_the_cell_trains_on_the_download_and_draws_its_maps(monkeypatch):
    matplotlib.use("Agg")
    cells = _cells()
    cell = cells["real-data"]
    assert cell.startswith("REAL_DATA = False") and BUDGET.search(cell)  # the book's build stays offline
    downloads = []

    def download(url, cache_dir=None, sha256=None):
        downloads.append(url)
        return SAMPLE

    monkeypatch.setattr(attnlib.data.tatoeba, "download", download)
    run = cell.replace("REAL_DATA = False", "REAL_DATA = True", 1)
    run = BUDGET.sub("REAL_PAIRS, REAL_STEPS = 1_000, 30", run)
    namespace = {}
    for source in (cells["5c0b89e7"], cells["1d953f7f"], run):  # the imports, draw_translation_map, the cell
        exec(compile(source, str(CHAPTER), "exec"), namespace)
    assert downloads == [attnlib.data.tatoeba.URL]
    assert len(namespace["real_hyps"]) == len(namespace["real_pairs"]) > 0
    assert 0 <= namespace["real_bleu"] <= 100
    figure = namespace["fig"]
    drawn = [ax for ax in figure.axes if ax.images]
    assert len(drawn) == min(3, len(namespace["real_pairs"]))  # a map per held-out pair, three at most
    assert len(figure.axes) == 3 + 1  # and the colour bar


def test_the_stored_timing_is_of_the_cells_budget():
    from attnlib import stored

    budget = BUDGET.search(_cells()["real-data"])[0]
    assert (
        int(budget.split("=")[1].split(",")[1].replace("_", ""))
        == stored.load("ch08_real_data_cost")["cell_steps"]
    )


def test_no_other_code_cell_reads_the_switch():  # the rest of the chapter is the same with it on or off
    cells = nbformat.read(CHAPTER, as_version=4).cells
    readers = [c.get("id") for c in cells if c.cell_type == "code" and "REAL_DATA" in c.source]
    assert readers == ["real-data"]
