"""The Colab editions: each notebook's prose readable in Colab, its numbers, figures and links filled in."""

import base64
import re

import colab_edition
import nbformat
import pytest
from colab_edition import Edition, edition_path, figure_labels
from notebooks import ROOT, course_notebooks

RAW_MYST = re.compile(r"\{(glue(:\w+)?|numref|doc|ref|eq)\}`|^(```|:::)\{", re.M)


def _glue_output(name, data):
    prefix = "application/papermill.record/"
    return nbformat.v4.new_output(
        "display_data",
        data={prefix + mime: value for mime, value in data.items()},
        metadata={"scrapbook": {"name": name, "mime_prefix": prefix}},
    )


def _edition(markdown, glued=None, labels=None):
    return Edition("chapters/99_test", glued or {}, labels or {}, "https://example.org/course/").markdown(
        markdown
    )


def test_every_notebook_has_an_up_to_date_colab_edition(capsys):
    assert colab_edition.main(["--check"]) == 0, capsys.readouterr().out


@pytest.mark.parametrize("path", course_notebooks(), ids=lambda p: p.name)
def test_an_edition_has_no_raw_myst_and_the_same_code(path):
    edition = nbformat.read(edition_path(path), as_version=4)
    source = nbformat.read(path, as_version=4)
    for cell in edition.cells:
        if cell.cell_type == "markdown":
            assert not RAW_MYST.search(cell.source), cell.source[:300]
    assert [c.source for c in edition.cells if c.cell_type == "code"] == [
        c.source for c in source.cells if c.cell_type == "code"
    ]


def test_a_glued_number_is_formatted_as_the_book_formats_it():
    glued = {"loss": {"text/plain": "0.123456"}, "name": {"text/plain": "'dot'"}}
    text = _edition("loss {glue:text}`loss:.2f`, score {glue:text}`name`", glued)
    assert text == "loss 0.12, score dot"


@pytest.mark.parametrize(
    ("option", "alt"),
    [("", "Fig. 7"), (':alt: Two "panels" & a line\n', "Two &quot;panels&quot; &amp; a line")],
    ids=["without alt: its number", "its alt text, escaped"],
)
def test_a_glued_figure_becomes_the_stored_image_with_its_numbered_caption_and_alt_text(option, alt):
    glued = {"fig-x": {"image/png": "iVBORw0K\n", "text/plain": "<Figure>"}}
    labels = {"fig-x": (7, "chapters/99_test")}
    text = _edition(
        f"```{{glue:figure}} fig-x\n:name: fig-x\n{option}\nThe caption.\n```\n\nAs {{numref}}`fig-x` shows.",
        glued,
        labels,
    )
    assert text == (
        f'<img src="data:image/png;base64,iVBORw0K" alt="{alt}"/>\n\n'
        "**Fig. 7.** The caption.\n\nAs Fig. 7 shows."
    )


def test_a_high_density_figure_is_shown_at_the_width_its_output_gives():
    """attnlib stores glued figures with twice their pixels and the width to show them at (issue 28): Colab
    shows them at that width, as the website does, not at twice the size."""
    glued = {"fig-x": {"image/png": "iVBORw0K\n", "metadata": {"image/png": {"width": 345}}}}
    text = _edition("```{glue:figure} fig-x\n:name: fig-x\n:alt: A map\nThe caption.\n```", glued)
    assert text.startswith('<img src="data:image/png;base64,iVBORw0K" width="345" alt="A map"/>')


def test_a_reference_to_another_page_links_to_the_website():
    labels = {"fig-y": (2, "chapters/01_other")}
    assert _edition("See {numref}`fig-y`.", labels=labels) == (
        "See [Fig. 2](https://example.org/course/chapters/01_other.html#fig-y)."
    )
    assert _edition("See {doc}`the notation <../notation>`.") == (
        "See [the notation](https://example.org/course/notation.html)."
    )


def test_a_relative_link_to_a_notebook_links_to_the_website():
    assert _edition("After [chapter 1](../chapters/01_rnn_gradients.ipynb#setup).") == (
        "After [chapter 1](https://example.org/course/chapters/01_rnn_gradients.html#setup)."
    )
    assert (
        _edition("[an address](https://example.org/x.ipynb)") == "[an address](https://example.org/x.ipynb)"
    )


def test_a_relative_link_to_a_missing_page_stops_the_generator():
    with pytest.raises(KeyError, match="no page of the book"):
        _edition("See [this](../chapters/99_missing.ipynb).")


def test_no_edition_links_to_a_relative_notebook_path():
    for path in sorted((ROOT / "colab").rglob("*.ipynb")):
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type == "markdown":
                assert not re.search(r"\]\((?![a-z]+:)[^)]*\.(ipynb|md)\b", cell.source), (
                    path,
                    cell.source[:200],
                )


def test_an_admonition_becomes_a_quoted_block():
    assert _edition("```{admonition} Why\n:class: tip\nBecause.\n\nAnd so.\n```") == (
        "> **Why**\n>\n> Because.\n>\n> And so."
    )


@pytest.fixture
def book(tmp_path, monkeypatch):
    """An empty book root holding chapters/ and figures/, as the generator's ROOT."""
    (tmp_path / "chapters").mkdir()
    (tmp_path / "figures").mkdir()
    monkeypatch.setattr(colab_edition, "ROOT", tmp_path)
    return tmp_path


def test_a_relative_image_becomes_a_data_uri_with_its_alt_text(book):
    png = b"\x89PNG\r\n\x1a\n a diagram"
    (book / "figures" / "d.png").write_bytes(png)
    text = _edition('Before.\n\n![The context [c_t; s_t] & "more"](../figures/d.png)\n\nAfter.')
    data = base64.b64encode(png).decode()
    alt = "The context [c_t; s_t] &amp; &quot;more&quot;"
    assert text == f'Before.\n\n<img src="data:image/png;base64,{data}" alt="{alt}"/>\n\nAfter.'


def test_an_svg_image_is_inlined_as_its_png_twin_because_colab_shows_no_svg(book):
    (book / "figures" / "d.svg").write_text("<svg/>")
    (book / "figures" / "d.png").write_bytes(b"png twin")
    text = _edition("![A diagram](../figures/d.svg)")
    assert (
        text == f'<img src="data:image/png;base64,{base64.b64encode(b"png twin").decode()}" alt="A diagram"/>'
    )


def test_an_image_with_an_address_is_left_as_it_is(book):
    for markdown in ("![x](https://example.org/a.png)", "![x](data:image/png;base64,AAAA)"):
        assert _edition(markdown) == markdown


@pytest.mark.parametrize(
    ("markdown", "message"),
    [
        ("![gone](../figures/missing.png)", "no file 'figures/missing.png' to inline"),
        ("![no twin](../figures/only.svg)", "PNG twin of the SVG"),
    ],
)
def test_a_missing_image_file_stops_the_generator(book, markdown, message):
    (book / "figures" / "only.svg").write_text("<svg/>")
    with pytest.raises(FileNotFoundError, match=re.escape(message)):
        _edition(markdown)


@pytest.mark.parametrize(
    ("markdown", "message"),
    [
        ("{glue:text}`missing`", "no stored output glued"),
        ("{numref}`fig-nowhere`", "no figure of the book"),
        ("```{mermaid}\ngraph LR\n```", "no Colab rendering"),
    ],
)
def test_what_it_cannot_render_stops_the_generator(markdown, message):
    with pytest.raises((KeyError, ValueError), match=message):
        _edition(markdown)


def test_figures_are_numbered_in_reading_order_across_the_book():
    labels = figure_labels()
    numbers = [number for number, _ in labels.values()]
    assert numbers == list(range(1, len(labels) + 1))
    assert labels["fig-norms-vs-k"] == (1, "chapters/01_rnn_gradients")


def test_glue_records_leave_the_code_outputs(tmp_path, monkeypatch):
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# T\n\nvalue {glue:text}`v`"),
            nbformat.v4.new_code_cell("glue('v', 3)", outputs=[_glue_output("v", {"text/plain": "3"})]),
        ]
    )
    path = tmp_path / "chapters" / "99_test.ipynb"
    path.parent.mkdir()
    nbformat.write(nb, path)
    monkeypatch.setattr(colab_edition, "ROOT", tmp_path)
    out = colab_edition.edition(path, {}, "https://example.org/course/")
    assert out.cells[0].source == "# T\n\nvalue 3"
    assert "Colab edition" in out.cells[1].source
    assert out.cells[2].outputs == []


def test_the_editions_live_beside_the_sources():
    assert edition_path(ROOT / "chapters" / "03_x.ipynb") == ROOT / "colab" / "chapters" / "03_x.ipynb"
