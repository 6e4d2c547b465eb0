"""attnlib.notebook.glue: myst-nb's glue where the book's tools are installed, a plain display in Colab."""

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from attnlib import notebook  # noqa: E402


@pytest.fixture
def shown(monkeypatch):
    calls = []
    monkeypatch.setattr("IPython.display.display", lambda value: calls.append(value))
    return calls


def test_glue_delegates_to_myst_nb_when_installed(monkeypatch, shown):
    recorded = []
    monkeypatch.setattr(notebook, "_myst_glue", lambda *args, **kwargs: recorded.append((args, kwargs)))
    notebook.glue("answer", 42)
    assert recorded == [(("answer", 42), {"display": False})]
    assert shown == []


def test_without_myst_nb_a_figure_is_shown_in_the_cell(monkeypatch, shown):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    fig = plt.figure()
    notebook.glue("fig-example", fig)
    plt.close(fig)
    assert shown == [fig]


def test_without_myst_nb_a_value_is_left_to_the_cell_output(monkeypatch, shown):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    notebook.glue("answer", 42)
    assert shown == []
