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


# Glue numbers only: the prose's words are the same in every run and language, its numbers are the run's.
@pytest.mark.parametrize("value", [42, 0.953, "0, 1, 2, 3", "1.5e-08", "[2, 5]", "12 × 3", "-0.25"])
def test_numbers_and_texts_of_numbers_can_be_glued(monkeypatch, value):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    notebook.glue("value", value)


@pytest.mark.parametrize("value", ["slower", "15 or 16", "¿ todavía estás en casa ?", "seed 0: layer 2"])
def test_words_cannot_be_glued(monkeypatch, value):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    with pytest.raises(ValueError, match="glue numbers only, never words"):
        notebook.glue("value", value)


def test_a_verdict_is_a_claim_not_a_glued_bool(monkeypatch):
    monkeypatch.setattr(notebook, "_myst_glue", None)
    with pytest.raises(TypeError, match="got a bool"):
        notebook.glue("faster", True)


def test_nan_and_tables_cannot_be_glued(monkeypatch):
    import pandas as pd

    monkeypatch.setattr(notebook, "_myst_glue", None)
    with pytest.raises(ValueError, match="must be finite"):
        notebook.glue("value", float("nan"))
    with pytest.raises(TypeError, match="got a DataFrame"):
        notebook.glue("table", pd.DataFrame({"a": [1]}))


def test_the_book_stores_a_figure_with_twice_its_pixels_and_the_size_to_show_it_at(monkeypatch):
    """What myst-nb records for a glued figure: a PNG drawn at attnlib.plotting.DENSITY times the figure's
    dpi, cropped as Jupyter crops figures, with its width in CSS pixels (issue 28)."""
    import io

    import IPython.core.formatters
    import PIL.Image

    from attnlib.plotting import DENSITY

    recorded = []
    monkeypatch.setattr(notebook, "_myst_glue", lambda name, value, display: recorded.append(value))
    fig, ax = plt.subplots(figsize=(4, 3), dpi=100)
    ax.plot([0, 1], [0, 1])
    notebook.glue("fig-dense", fig)
    bundle, metadata = IPython.core.formatters.format_display_data(recorded[0])
    image = PIL.Image.open(io.BytesIO(bundle["image/png"]))
    assert metadata["image/png"] == {
        "width": image.width // DENSITY
    }  # no height: a narrowed figure keeps its shape
    assert image.width % DENSITY == image.height % DENSITY == 0
    assert 300 < image.width / DENSITY <= 400 and 200 < image.height / DENSITY <= 300  # cropped, at 100 dpi
    assert bundle["text/plain"] == repr(fig)  # the figure's size and axes: the same text on every run
    again, _ = IPython.core.formatters.format_display_data(recorded[0])
    assert again["image/png"] == bundle["image/png"] and b"Software" not in bundle["image/png"]
    plt.close(fig)
