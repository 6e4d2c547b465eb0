"""The architecture diagrams (tools/diagrams.py): up to date, valid, small, labelled, in their chapters; and
in Korean, with the same drawing and maths, every word translated."""

import base64
import dataclasses
import html
import re
import xml.etree.ElementTree as ET
from collections import Counter

import diagrams
import matplotlib
import nbformat
import pytest
from colab_edition import edition_path
from diagramlib import canvas, words
from diagramlib.words import WORDS
from matplotlib.patches import FancyBboxPatch
from notebooks import ROOT

import i18n

# bytes, per SVG. A Korean diagram is larger: its glyphs are paths, and each Hangul syllable is an outline of
# its own (gzipped, as a web server sends them, the Korean SVGs are 19 to 48 kB, the English 13 to 22 kB)
LIMIT = {"en": 100_000, "ko": 170_000}
LANGUAGES = diagrams.LANGUAGES
# the labels each English diagram must show, as mathtext source (matplotlib writes each text as a comment in
# the SVG)
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


def _svg(name: str, language: str = "en") -> bytes:
    return (diagrams.OUT[language] / f"{name}.svg").read_bytes()


def _texts(svg: bytes) -> list[str]:
    """The texts of the drawing (the comments matplotlib writes before each text's glyphs)."""
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    root = ET.fromstring(svg, parser=parser)
    return [html.unescape(element.text.strip()) for element in root.iter() if element.tag is ET.Comment]


@pytest.mark.slow  # draws every diagram in both languages (7 s)
def test_the_diagram_files_are_up_to_date(capsys):
    assert diagrams.main(["--check"]) == 0, capsys.readouterr().out


def test_every_diagram_is_listed_here():
    assert set(KEY_LABELS) == set(diagrams.DIAGRAMS)
    assert {name for names in CHAPTERS.values() for name in names} == set(diagrams.DIAGRAMS)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_is_an_svg_under_the_size_limit(name, language):
    svg = _svg(name, language)
    assert ET.fromstring(svg).tag == "{http://www.w3.org/2000/svg}svg"
    assert len(svg) < LIMIT[language], f"{language}: {name}.svg has {len(svg)} bytes"


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_carries_no_date(name, language):
    assert b"<dc:date>" not in _svg(name, language)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_shows_its_key_labels(name):
    texts = _texts(_svg(name))
    missing = [label for label in KEY_LABELS[name] if not any(label in text for text in texts)]
    assert not missing, f"{name}.svg lacks {missing}; it has {texts}"


BEFORE_ATTENTION = {"rnn-unrolled", "gru-cell"}  # chapter 1's diagrams: there is no attention yet


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(set(diagrams.DIAGRAMS) - BEFORE_ATTENTION))
def test_a_diagram_draws_the_attention_in_its_colour(name, language):
    assert f"stroke: {diagrams.ROLES['attention'][1]}".encode() in _svg(name, language)


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_has_a_png_twin_for_colab(name, language):
    assert (diagrams.OUT[language] / f"{name}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


@pytest.mark.slow  # draws diagrams in both languages
def test_the_check_finds_a_changed_diagram_in_each_language(tmp_path, monkeypatch):
    out = {language: tmp_path / language for language in LANGUAGES}
    monkeypatch.setattr(diagrams, "OUT", out)
    assert diagrams.write(names=["dot-product"]) == [
        out[language] / f"dot-product{suffix}" for language in LANGUAGES for suffix in (".svg", ".png")
    ]
    assert diagrams.write(check=True, names=["dot-product"]) == []
    for language in LANGUAGES:
        (out[language] / "dot-product.svg").write_bytes(b"<svg/>")
        assert diagrams.write(check=True, names=["dot-product"]) == [out[language] / "dot-product.svg"]
        assert (out[language] / "dot-product.svg").read_bytes() == b"<svg/>"  # --check writes nothing
        (out[language] / "dot-product.svg").unlink()
        diagrams.write(names=["dot-product"])


def test_the_check_names_an_unknown_diagram():
    with pytest.raises(SystemExit, match="no diagram named dot-prodcut"):
        diagrams.write(check=True, names=["dot-prodcut"])


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
        png = base64.b64encode((diagrams.OUT["en"] / f"{name}.png").read_bytes()).decode()
        assert f"data:image/png;base64,{png}" in edition, f"the Colab edition of {chapter} lacks {name}"


def test_compacting_rounds_positions_but_keeps_the_glyph_scales():
    # rounding a scale of 0.109589 to 0.11 draws every glyph 0.4% too large for its place: the letters of a
    # mathtext label then overlap in the browser
    svg = b'<g transform="translate(61.523438 -0.015625) scale(0.109589 -0.109589)">\n    <use x="2.5"/>'
    assert (
        diagrams.compact(svg)
        == b'<g transform="translate(61.52 -0.0156) scale(0.1096 -0.1096)">\n<use x="2.5"/>'
    )


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", sorted(BEFORE_ATTENTION))
def test_a_diagram_before_attention_keeps_green_free(name, language):
    assert f"stroke: {diagrams.ROLES['attention'][1]}".encode() not in _svg(name, language)


# ---------------------------------------------------------------------------------------------------------
# The Korean diagrams: the same drawing and maths, every word from the Korean table
# ---------------------------------------------------------------------------------------------------------
MATH = re.compile(r"\$[^$]*\$")
PLACEHOLDER = re.compile(r"\{\w+\}")
# the Latin words a Korean diagram may keep: names of a model, a library and authors
NAMES = {"GRU", "PyTorch", "KV", "Milakov", "Gimelshein", "Dao"}


def _english_words(texts: list[str]) -> list[str]:
    """The Latin words of ``texts`` outside their maths, other than NAMES."""
    return [
        word
        for text in texts
        for word in re.findall(r"[A-Za-z]{2,}", MATH.sub("", text))
        if word not in NAMES
    ]


def test_every_diagram_has_its_words_in_every_language():
    for language in LANGUAGES:
        assert set(WORDS[language]) == set(diagrams.DIAGRAMS), language
    for name in diagrams.DIAGRAMS:
        assert set(WORDS["ko"][name]) == set(WORDS["en"][name]), name


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_diagram_draws_every_word_of_its_table(name):
    asked = []

    class Recording(dict):
        def __getitem__(self, key):
            asked.append(key)
            return super().__getitem__(key)

    diagrams.plt.close(diagrams.DIAGRAMS[name](Recording(WORDS["en"][name])))
    assert set(asked) == set(WORDS["en"][name])


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_the_korean_words_translate_the_english_words_of_now(name):
    assert words.KO_TRANSLATES[name] == words.english_digest(name), (
        f"the English words of {name} changed after its Korean was written: update WORDS['ko'][{name!r}] "
        f"(tools/diagramlib/words.py), then KO_TRANSLATES[{name!r}] = {words.english_digest(name)!r}"
    )


def test_a_changed_english_word_marks_the_korean_out_of_date(monkeypatch):
    before = words.english_digest("dot-product")
    monkeypatch.setitem(words.EN, "dot-product", {**words.EN["dot-product"], "keys": "the keys"})
    assert words.english_digest("dot-product") != before


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_label_keeps_the_maths_of_its_english(name):
    for key, english in WORDS["en"][name].items():
        korean = WORDS["ko"][name][key]
        assert Counter(MATH.findall(korean)) == Counter(MATH.findall(english)), (name, key)
        assert sorted(PLACEHOLDER.findall(korean)) == sorted(PLACEHOLDER.findall(english)), (name, key)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_label_follows_the_glossary(name):
    assert i18n.lint("주의 가중치"), "positive control: the glossary's lint finds 주의 for attention"
    problems = {key: i18n.lint(text) for key, text in WORDS["ko"][name].items()}
    assert not {key: found for key, found in problems.items() if found}


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_diagram_shows_the_maths_of_the_english_one(name):
    def maths(language):
        return Counter(m for text in _texts(_svg(name, language)) for m in MATH.findall(text))

    assert maths("en"), "positive control: the English diagram has maths"
    assert maths("ko") == maths("en")


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_diagram_shows_its_korean_words(name):
    texts = _texts(_svg(name, "ko"))  # a text of several lines: one per line
    for key, korean in WORDS["ko"][name].items():
        for part in re.split(r"\{\w+\}|\n", korean):
            assert not part.strip() or any(part.strip() in text for text in texts), (key, part, texts)


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_diagram_has_no_english_words(name):
    assert _english_words(_texts(_svg(name, "en"))), "positive control: the English diagram has English words"
    assert _english_words(_texts(_svg(name, "ko"))) == []


@pytest.mark.parametrize("name", diagrams.DIAGRAMS)
def test_a_korean_diagram_sets_its_hangul_in_nanumgothic(name):
    assert b'id="NanumGothic-' in _svg(name, "ko")
    assert b'id="NanumGothic-' not in _svg(name, "en")


def test_the_korean_font_is_the_pinned_file(monkeypatch):
    assert canvas.korean_font().name == "NanumGothic.ttf"
    monkeypatch.setattr(canvas, "KOREAN_FONT_SHA256", "0" * 64)
    with pytest.raises(RuntimeError, match="is not the pinned NanumGothic"):
        canvas.korean_font()


def test_another_nanumgothic_does_not_stand_in_for_the_pinned_one(monkeypatch):
    fonts = matplotlib.font_manager.fontManager
    other = next(f for f in fonts.ttflist if f.fname.endswith("/DejaVuSans.ttf"))  # regular, like NanumGothic
    impostor = dataclasses.replace(other, name="NanumGothic")  # as a system NanumGothic would be listed
    monkeypatch.setattr(fonts, "ttflist", [impostor, *(f for f in fonts.ttflist if f.name != "NanumGothic")])
    fonts.addfont(other.fname)  # (it also empties matplotlib's cache of the fonts it found)
    assert matplotlib.font_manager.findfont("NanumGothic") == other.fname  # the control
    path = canvas.korean_font()
    assert matplotlib.font_manager.findfont("NanumGothic") == str(path)


def test_a_missing_korean_font_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr(canvas, "KOREAN_FONT", ("no-such-font-package", "fonts/NanumGothic.ttf"))
    with pytest.raises(RuntimeError, match="PyPI package no-such-font-package.*tools/setup.sh"):
        canvas.korean_font()


def test_an_unknown_language_is_refused():
    with pytest.raises(ValueError, match="language must be 'en' or 'ko', not 'fr'"):
        canvas.style("fr")


@pytest.mark.parametrize(("chapter", "names"), CHAPTERS.items())
def test_a_korean_chapter_finds_the_korean_diagram_at_the_english_link(chapter, names):
    # tools/i18n.py keeps every link of a page: ko/chapters/<chapter>.ipynb links
    # ../figures/diagrams/<name>.svg, which is ko/figures/diagrams/<name>.svg (its Colab edition: the PNG)
    for name in names:
        for suffix in (".svg", ".png"):
            target = (ROOT / "ko" / "chapters" / ".." / "figures" / "diagrams" / f"{name}{suffix}").resolve()
            assert target == diagrams.OUT["ko"] / f"{name}{suffix}"
            assert target.is_file()


# ---------------------------------------------------------------------------------------------------------
# Every word inside a box fits in it, in every language
# ---------------------------------------------------------------------------------------------------------
ROOM = 1.0  # points: the least space between a text inside a box and the box's edge
# an English label that touches its box; the English files stay byte-identical to those the chapters show
TIGHT = {("en", "transformer"): "'causal self-attention (multi-head)' is 0.43 pt wider than its box"}


def _room_in_boxes(name: str, language: str) -> list[tuple[float, str]]:
    """(room, text) for every text centred inside a filled box: the least distance, in points, from the text's
    extent to the edge of the smallest such box (negative: the text crosses the edge)."""
    with matplotlib.rc_context(canvas.style(language)):
        fig = diagrams.DIAGRAMS[name](WORDS[language][name])
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        ax = fig.axes[0]
        boxes = [
            p.get_window_extent(renderer)
            for p in ax.patches
            if isinstance(p, FancyBboxPatch) and p.get_facecolor()[3] > 0
        ]
        rooms = []
        for text in ax.texts:
            e = text.get_window_extent(renderer)
            x, y = (e.x0 + e.x1) / 2, (e.y0 + e.y1) / 2
            around = [b for b in boxes if b.x0 <= x <= b.x1 and b.y0 <= y <= b.y1]
            if around:
                b = min(around, key=lambda b: b.width * b.height)
                room = min(e.x0 - b.x0, b.x1 - e.x1, e.y0 - b.y0, b.y1 - e.y1) * 72 / fig.dpi
                rooms.append((room, text.get_text()))
        diagrams.plt.close(fig)
    return rooms


@pytest.mark.parametrize(
    ("name", "language"),
    [
        pytest.param(name, language, marks=[pytest.mark.xfail(strict=True, reason=TIGHT[language, name])])
        if (language, name) in TIGHT
        else (name, language)
        for language in LANGUAGES
        for name in diagrams.DIAGRAMS
    ],
)
def test_the_words_in_a_box_fit_in_it(name, language):
    rooms = _room_in_boxes(name, language)
    assert rooms, "positive control: the diagram has texts inside boxes"
    assert not [(round(room, 2), text) for room, text in rooms if room < ROOM]


def test_a_text_wider_than_its_box_is_found(monkeypatch):
    wider = {**WORDS["ko"]["dot-product"], "context": "3. 컨텍스트 벡터 컨텍스트 벡터"}
    monkeypatch.setitem(WORDS["ko"], "dot-product", wider)
    assert min(_room_in_boxes("dot-product", "ko"))[1] == "3. 컨텍스트 벡터 컨텍스트 벡터"
    assert min(_room_in_boxes("dot-product", "ko"))[0] < 0
