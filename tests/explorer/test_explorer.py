"""attnlib.explorer: one drawing, a widget in a live kernel and precomputed frames for the static page."""

import base64
import json
import re
import subprocess
import sys
from pathlib import Path

import matplotlib
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from attnlib.explorer import Choice, Explorer, Range, nearest  # noqa: E402


def draw(a: float, kind: str):
    fig, ax = plt.subplots(figsize=(3, 2))
    xs = [i / 10 for i in range(60)]
    ax.plot(xs, [a * x if kind == "line" else a * x * x for x in xs])
    ax.set_title(f"a = {a}, {kind}")
    return fig


def toy(**options) -> Explorer:
    return Explorer(
        draw, a=Range(0.5, 1.5, 0.05, value=1.0, frame_step=0.25), kind=["line", "square"], **options
    )


def test_nearest_snaps_to_the_closest_frame_and_the_first_of_a_tie():
    assert nearest([0.5, 0.75, 1.0], 0.8) == 0.75
    assert nearest([0.5, 0.75, 1.0], 0.625) == 0.5
    assert nearest([0.5, 0.75, 1.0], 7) == 1.0
    assert nearest(["line", "square"], "square") == "square"


def test_nearest_does_not_snap_a_word():
    with pytest.raises(ValueError, match="'cube' is not one of"):
        nearest(["line", "square"], "cube")


def test_a_range_has_frames_every_frame_step_on_exact_decimals():
    (a, kind) = toy().controls
    assert a.frames == (0.5, 0.75, 1.0, 1.25, 1.5)
    assert Explorer(draw, a=Range(0.5, 1.5, 0.05), kind=["line"]).controls[0].frames[12] == 1.1
    assert kind.frames == ("line", "square") and kind.value == "line"


def test_a_python_range_is_an_integer_slider():
    (n,) = Explorer(lambda n: None, n=range(2, 11, 2)).controls
    assert (n.kind, n.low, n.high, n.step, n.frames, n.value) == ("range", 2, 10, 2, (2, 4, 6, 8, 10), 2)


def test_the_frame_grid_runs_over_every_control_the_last_fastest():
    grid = toy().grid()
    assert len(grid) == 10
    assert grid[:3] == [{"a": 0.5, "kind": "line"}, {"a": 0.5, "kind": "square"}, {"a": 0.75, "kind": "line"}]


@pytest.mark.parametrize(
    ("controls", "message"),
    [
        ({"a": Range(1.0, 0.5, 0.1)}, "control 'a': need low <= high"),
        ({"a": Range(0.0, 1.0, 0.3)}, "control 'a': high - low = 1 is not a multiple of step 0.3"),
        ({"a": Range(0.0, 1.0, 0.1, frame_step=0.25)}, "control 'a': frame_step 0.25 is not a multiple"),
        ({"a": Range(0.0, 3.0, 0.1, value=1.118)}, r"control 'a': value 1.118 is not on its grid"),
        ({"a": Range(0.0, 1.0, 0.1, value=2.0)}, r"control 'a': value 2.0 is outside \[0.0, 1.0\]"),
        ({"kind": Choice(["line"], value="cube")}, "control 'kind': value 'cube' is not one of"),
        ({"kind": []}, "control 'kind' has no options"),
        ({"kind": ["1", 1]}, "control 'kind': options must differ in how they print"),
        ({}, "explore needs at least one control"),
    ],
)
def test_bad_controls_get_an_error_naming_the_control(controls, message):
    with pytest.raises(ValueError, match=message):
        Explorer(draw, **controls)


def test_a_control_of_an_unknown_kind_is_named():
    with pytest.raises(TypeError, match="control 'a' must be a Range, a Choice, a list of values or a range"):
        Explorer(draw, a=1.1)


def test_draw_must_be_a_function_returning_a_figure():
    with pytest.raises(TypeError, match="draw must be a function"):
        Explorer("draw", a=[1])
    with pytest.raises(TypeError, match="draw must return a matplotlib Figure, got NoneType"):
        Explorer(lambda a: None, a=[1]).frame(a=1)


def test_too_many_frames_are_refused_with_the_grid_named():
    with pytest.raises(ValueError, match=r"21 frames \(a 21\), over max_frames=20"):
        Explorer(draw, a=Range(0.5, 1.5, 0.05), max_frames=20)


def test_frames_are_deterministic_png_bytes_without_a_software_stamp():
    explorer = toy()
    open_before = plt.get_fignums()  # figures another test of this process left open are not this one's
    first, again = explorer.frame(a=1.0, kind="line"), explorer.frame(a=1.0, kind="line")
    assert first == again and first.startswith(b"\x89PNG\r\n\x1a\n")
    assert b"Software" not in first and b"matplotlib" not in first.lower()
    assert explorer.frame(a=1.25, kind="line") != first
    assert plt.get_fignums() == open_before  # every figure the explorer drew is closed


def _payload(page: str) -> dict:
    found = re.search(r'<script type="application/json" class="attnlib-explorer-data">(.*?)</script>', page)
    return json.loads(found[1])


def test_the_static_html_carries_one_frame_per_grid_point_and_shows_the_initial_values():
    explorer = toy()
    page = explorer.static_html()
    data = _payload(page)
    assert [c["name"] for c in data["controls"]] == ["a", "kind"]
    assert len(data["frames"]) == len(explorer.grid()) == 10
    initial = explorer.grid().index({"a": 1.0, "kind": "line"})
    assert f'src="data:image/png;base64,{data["frames"][initial]}"' in page
    assert "10 precomputed figures" in page
    assert page == toy().static_html()  # same explorer, same bytes, same element id


GENERIC_ALT = "the figure for the values of the controls"  # what every frame said before (issue 28)


def test_each_frames_alt_text_names_its_controls_values_and_what_its_figure_writes():
    explorer = toy()
    data = _payload(explorer.static_html())
    for lang, opening in (
        ("en", "Figure for a = {a:.2f}, kind = {kind}: "),
        ("ko", "a = {a:.2f}, kind = {kind}일 때의 그림: "),
    ):
        assert len(data["alts"][lang]) == len(data["frames"])
        for point, alt in zip(explorer.grid(), data["alts"][lang], strict=True):
            assert alt.startswith(opening.format(**point)), alt
            assert f"“a = {point['a']}, {point['kind']}”" in alt  # the figure's own title
    assert data["alts"]["en"][0].endswith("plot “a = 0.5, line”, — against —.")
    assert data["alts"]["ko"][0].endswith("그래프 “a = 0.5, line”, 가로축: —, 세로축: —.")


def test_the_first_frames_image_says_what_it_shows_before_any_script_runs():
    page = toy().static_html()
    initial = toy().grid().index({"a": 1.0, "kind": "line"})
    assert f'alt="{_payload(page)["alts"]["en"][initial]}"' in page
    assert GENERIC_ALT not in page


def test_an_alt_text_reads_mathtext_as_plain_symbols():
    from attnlib.explorer_alt import plain

    assert plain(r"$\|s_t\|$ = 2.8, $c_t = H^T \alpha_t$") == "‖s_t‖ = 2.8, c_t = H^T α_t"


def test_alt_texts_missing_a_language_or_a_frame_are_refused():
    from attnlib.explorer_page import html

    controls = [{"name": "a", "label": "a", "kind": "choice", "frames": ["x", "y"], "value": "x"}]
    frames = [b"png-x", b"png-y"]
    for alts in ({"en": ["x", "y"]}, {"en": ["x", "y"], "ko": ["x"]}):
        with pytest.raises(ValueError, match="one alt text per frame in English"):
            html(controls, frames, 0, alts)


def test_an_alt_text_reads_maps_legends_colour_bars_and_the_figures_own_text():
    from attnlib.explorer_alt import alt_text, figure_words

    fig, (plot, image) = plt.subplots(1, 2)
    plot.plot([0, 1], label="tanh")
    plot.legend()
    plot.set(xlabel="k", ylabel="norm", title="gradients")
    fig.colorbar(image.imshow([[0.0, 1.0]]), ax=image, label="weight α")
    image.set(xlabel="source", ylabel="output")
    fig.text(0, 1, "source:  1 2\ntarget:  2 1")
    words = figure_words(fig)
    plt.close(fig)
    assert alt_text("d = 4", words, "en") == (
        "Figure for d = 4: source: 1 2; target: 2 1. plot “gradients”, norm against k. legend: tanh. "
        "map, rows: output, columns: source. colour scale: weight α."
    )
    assert alt_text("d = 4", words, "ko") == (
        "d = 4일 때의 그림: source: 1 2; target: 2 1. 그래프 “gradients”, 가로축: k, 세로축: norm. "
        "범례: tanh. 맵, 행: output, 열: source. 색 막대: weight α."
    )


def test_on_the_website_each_frame_is_a_file_fetched_when_shown():
    """_ext/page_weight.py: the page carries URLs instead of base64 frames, shows the initial frame's file,
    and its script sets the image to a URL; a notebook's own output is untouched (it must work alone)."""
    from attnlib.explorer_page import FRAME_STATEMENT, SCRIPT, SITE_FRAME_STATEMENT, frames_as_files

    assert SCRIPT.count(FRAME_STATEMENT) == 1  # the statement the website replaces is the one the script runs
    explorer = toy()
    page = f"<p>before</p>{explorer.static_html()}<p>after</p>"
    frames = [base64.b64decode(f) for f in _payload(page)["frames"]]
    saved = {}

    def save(png: bytes) -> str:
        saved[f"f{len(saved)}.png"] = png
        return f"../_images/explorer/f{len(saved) - 1}.png"

    site = frames_as_files(page, save)
    data = _payload(site)
    assert list(saved.values()) == frames  # every frame, in the grid's order
    assert data["frames"] == [f"../_images/explorer/f{i}.png" for i in range(len(frames))]
    assert "base64" not in site.split("<script")[0]  # the first frame shown is a file too
    initial = explorer.grid().index({"a": 1.0, "kind": "line"})
    assert f'src="../_images/explorer/f{initial}.png"' in site
    assert FRAME_STATEMENT not in site and SITE_FRAME_STATEMENT in site
    assert site.startswith("<p>before</p>") and site.endswith("<p>after</p>")
    assert frames_as_files(site, save) == site and len(saved) == len(frames)  # converted once only
    assert len(site) < len(page) / 3


def test_the_static_html_needs_no_network():
    page = toy().static_html()
    assert not re.search(r"(src|href)=\"(https?:)?//", page)
    assert "<script src" not in page


def test_a_live_kernel_gets_a_widget_whose_image_is_the_frame_of_its_controls():
    explorer = toy()
    bundle = explorer._repr_mimebundle_()
    view = bundle["application/vnd.jupyter.widget-view+json"]
    assert view["version_major"] == 2
    assert "attnlib-explorer" in bundle["text/html"]
    box = explorer.widget()
    controls, image = box.children
    slider, menu = controls.children
    assert (slider.min, slider.max, slider.step, slider.value, menu.value) == (0.5, 1.5, 0.05, 1.0, "line")
    assert image.value == explorer.frame(a=1.0, kind="line")
    slider.value, menu.value = 0.6, "square"  # between two frames: the live world recomputes exactly
    assert image.value == explorer.frame(a=0.6, kind="square")


def test_numbers_in_a_choice_are_a_slider_over_them():
    explorer = Explorer(
        lambda length: draw(length, "line"), length=Choice([0.5, 1.25**0.5, 2.0], value=1.25**0.5)
    )
    (length,) = explorer.controls
    assert (length.kind, length.digits) == ("options", 3)
    (slider,) = explorer.widget().children[0].children
    assert [label for label, _ in slider.options] == ["0.5", "1.118", "2"]


def test_no_frames_in_colab_or_when_switched_off(monkeypatch):
    monkeypatch.setenv("ATTNLIB_EXPLORER_FRAMES", "0")
    assert "text/html" not in toy()._repr_mimebundle_()
    monkeypatch.delenv("ATTNLIB_EXPLORER_FRAMES")
    monkeypatch.setitem(sys.modules, "google.colab", object())
    assert "text/html" not in toy()._repr_mimebundle_()


def test_importing_attnlib_imports_no_plotting_or_widget_library():
    modules = "{'ipywidgets', 'matplotlib'}"
    code = f"import sys, attnlib, attnlib.explorer; print(sorted({modules} & set(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


CHAPTERS = sorted((Path(__file__).resolve().parents[2] / "chapters").glob("*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_a_chapter_explores_only_through_attnlib_explorer(path):
    """A bare ipywidgets interact is a slider that redraws nothing on the website (issue 15)."""
    cells = json.loads(path.read_text())["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    assert not re.search(r"\binteract(ive)?\(|import ipywidgets|from ipywidgets", code)


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_nbval_compares_every_stored_explorer_with_a_fresh_one(path):
    """The site test trusts the stored frames because nbval re-renders them: no explorer cell may opt out."""
    for cell in json.loads(path.read_text())["cells"]:
        html = "".join("".join(o.get("data", {}).get("text/html", [])) for o in cell.get("outputs", []))
        if 'class="attnlib-explorer"' in html:
            assert "nbval-ignore-output" not in cell["metadata"].get("tags", []), "".join(cell["source"])[:80]


def test_frames_carry_twice_the_pixels_and_the_page_shows_them_at_the_size_of_dpi():
    """High-density screens (issue 28): a 3 x 2 inch figure at the explorer's 72 dpi is 216 CSS pixels wide,
    its frame 432 image pixels; the page's image and the widget say 216."""
    import io

    import PIL.Image

    explorer = toy()
    frame = PIL.Image.open(io.BytesIO(explorer.frame(a=1.0, kind="line")))
    assert frame.size == (432, 288)
    assert '<img class="attnlib-explorer-frame" alt="' in explorer.static_html()
    assert re.search(r'<img class="attnlib-explorer-frame" [^>]*width="216" ', explorer.static_html())
    assert explorer.widget().children[1].width == "216"
