"""The architecture diagrams (tools/diagrams.py): up to date, valid, small, labelled, in their chapters."""

import base64
import html
import xml.etree.ElementTree as ET

import diagrams
import nbformat
import pytest
from colab_edition import edition_path
from notebooks import ROOT

LIMIT = 100_000  # bytes, per SVG
# the labels each diagram must show, as mathtext source (matplotlib writes each text as a comment in the SVG)
KEY_LABELS = {
    "rnn-unrolled": [
        r"$h_t = \varphi(z_t)$",
        "$W_h$",
        "$x_{t-k}$",
        "$h_{t}$",
        r"$\partial h_t / \partial h_{t-k} = \prod_{i=t-k+1}^{t} \mathrm{diag}(\varphi'(z_i))\, W_h$",
    ],
    "gru-cell": [
        r"$h_t = (1 - u_t) \odot n_t + u_t \odot h_{t-1}$",
        r"$\odot\, u_t$",
        r"$\odot\, (1 - u_t)$",
        "the additive path",
        r"reset: $r_t = \sigma(W_r x_t + U_r h_{t-1} + b_r)$",
    ],
    "bahdanau-unrolled": [
        "$s_0$",
        "GRU: $s_1$",
        "query $s_{t-1}$",
        r"$\alpha_2,\ c_2$",
        r"$p(y_3 \mid y_{<3}, x)$",
        r"$s_0 = \tanh(W_{\mathrm{init}} \overleftarrow{h}_1)$",
    ],
    "online-softmax": [
        "chunk $J_1$",
        r"$m' = \max(m,\ \max_J\, e_{t,s})$",
        r"$l' = l\, e^{m - m'} + \Sigma_J\, e^{e_{t,s} - m'}$",
        r"$c_t = n / l$",
    ],
    "kv-cache": [
        "$q_t$",
        "$K^{(t)}$",
        r"$c_t = \mathrm{softmax}(K^{(t)} q_t / \sqrt{d_k})^\top V^{(t)}$",
        r"self-attention: $O(t^2 d)$ per step, $O(T^3 d)$ in all",
        r"cross-attention: $O(S d)$ per step, $O(T S d)$ in all",
    ],
    "seq2seq": [
        r"$c$",
        r"$c = [\overrightarrow{h}_S; \overleftarrow{h}_1]$",
        "$c_{1}$",
        "$c_{T}$",
        "$h_{1}$",
        "$h_{S}$",
        "$s_{1}$",
        "$s_{T}$",
        "$x_{1}$",
        "$y_{T}$",
        r"$c_t = \sum_s \alpha_{t,s} h_s$",
    ],
    "dot-product": [
        "$s_t$",
        "$H$",
        "$e_t = H s_t$",
        r"$\alpha_t = \mathrm{softmax}(e_t)$",
        r"$c_t = H^{\top} \alpha_t$",
        "$[c_t; s_t]$",
        r"$\tilde{s}_t = \tanh(W_c [c_t; s_t] + b_c)$",
        r"$\hat{y}_t = \mathrm{softmax}(W_y \tilde{s}_t + b_y)$",
    ],
    "bahdanau-luong": [
        "$s_{t-1}$",
        "$s_t$",
        r"$e_{t,s} = v^{\top} \tanh(W s_{t-1} + U h_s)$",
        r"$c_t = \sum_s \alpha_{t,s} h_s$",
        "GRU: $c_t$ enters the gates $z_t, r_t, n_t$",
        r"$\tilde{s}_t = \tanh(W_c [c_t; s_t])$",
        r"$\mathrm{softmax}(W_y \tilde{s}_t)$",
    ],
    "transformer": [
        "causal self-attention (multi-head)",
        "cross-attention (multi-head)",
        "feed-forward",
        r"Add & LayerNorm: $\mathrm{LN}(y + \cdot)$",
        r"memory $M = [m_1, \dots, m_S]$",
        "keys, values: $M$",
        "queries from the decoder",
    ],
}
# chapter -> the diagrams it shows
CHAPTERS = {
    "01_rnn_gradients": ["rnn-unrolled", "gru-cell"],
    "02_bottleneck": ["seq2seq"],
    "03_dot_product_attention": ["dot-product"],
    "04_bahdanau_attention": ["bahdanau-luong", "bahdanau-unrolled"],
    "05_luong_attention": ["bahdanau-luong"],
    "07_matrix_form": ["online-softmax"],
    "09_self_attention": ["transformer", "kv-cache"],
}


def _svg(name: str) -> bytes:
    return (diagrams.OUT / f"{name}.svg").read_bytes()


def _texts(svg: bytes) -> list[str]:
    """The texts of the drawing (the comments matplotlib writes before each text's glyphs)."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(svg, parser=parser)
    return [html.unescape(element.text.strip()) for element in root.iter() if element.tag is ET.Comment]


def test_the_diagram_files_are_up_to_date(capsys):
    assert diagrams.main(["--check"]) == 0, capsys.readouterr().out


def test_every_diagram_is_listed_here():
    assert set(KEY_LABELS) == set(diagrams.DIAGRAMS)
    assert {name for names in CHAPTERS.values() for name in names} == set(diagrams.DIAGRAMS)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_is_an_svg_under_the_size_limit(name):
    svg = _svg(name)
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert len(svg) < LIMIT, f"{name}.svg has {len(svg)} bytes"


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_carries_no_date(name):
    assert b"<dc:date>" not in _svg(name)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_shows_its_key_labels(name):
    texts = _texts(_svg(name))
    missing = [label for label in KEY_LABELS[name] if not any(label in text for text in texts)]
    assert not missing, f"{name}.svg lacks {missing}; it has {texts}"


BEFORE_ATTENTION = {"rnn-unrolled", "gru-cell"}  # chapter 1's diagrams: there is no attention yet


@pytest.mark.parametrize("name", sorted(set(diagrams.DIAGRAMS) - BEFORE_ATTENTION))
def test_a_diagram_draws_the_attention_in_its_colour(name):
    assert f"stroke: {diagrams.ROLES['attention'][1]}".encode() in _svg(name)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_has_a_png_twin_for_colab(name):
    assert (diagrams.OUT / f"{name}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_check_finds_a_changed_diagram(tmp_path, monkeypatch):
    monkeypatch.setattr(diagrams, "OUT", tmp_path)
    assert diagrams.write(names=["dot-product"]) == [
        tmp_path / "dot-product.svg",
        tmp_path / "dot-product.png",
    ]
    assert diagrams.write(check=True, names=["dot-product"]) == []
    (tmp_path / "dot-product.svg").write_bytes(b"<svg/>")
    assert diagrams.write(check=True, names=["dot-product"]) == [tmp_path / "dot-product.svg"]
    assert (tmp_path / "dot-product.svg").read_bytes() == b"<svg/>"  # --check writes nothing


@pytest.mark.parametrize(("chapter", "names"), CHAPTERS.items())
def test_a_chapter_shows_its_diagram_on_the_website(chapter, names):
    nb = nbformat.read(ROOT / "chapters" / f"{chapter}.ipynb", as_version=4)
    markdown = "\n".join(cell.source for cell in nb.cells if cell.cell_type == "markdown")
    for name in names:
        assert f"](../figures/diagrams/{name}.svg)" in markdown, f"{chapter} shows no {name} diagram"


@pytest.mark.parametrize(("chapter", "names"), CHAPTERS.items())
def test_a_chapter_shows_its_diagram_in_colab(chapter, names):
    edition = edition_path(ROOT / "chapters" / f"{chapter}.ipynb").read_text()
    for name in names:
        png = base64.b64encode((diagrams.OUT / f"{name}.png").read_bytes()).decode()
        assert f"data:image/png;base64,{png}" in edition, f"the Colab edition of {chapter} lacks {name}"


def test_compacting_rounds_positions_but_keeps_the_glyph_scales():
    # rounding a scale of 0.109589 to 0.11 draws every glyph 0.4% too large for its place: the letters of a
    # mathtext label then overlap in the browser
    svg = b'<g transform="translate(61.523438 -0.015625) scale(0.109589 -0.109589)">\n    <use x="2.5"/>'
    assert (
        diagrams.compact(svg)
        == b'<g transform="translate(61.52 -0.0156) scale(0.1096 -0.1096)">\n<use x="2.5"/>'
    )


@pytest.mark.parametrize("name", sorted(BEFORE_ATTENTION))
def test_a_diagram_before_attention_keeps_green_free(name):
    assert f"stroke: {diagrams.ROLES['attention'][1]}".encode() not in _svg(name)
