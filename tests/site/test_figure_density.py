"""Figures on the built chapter pages are sharp on a high-density screen (issue 28): each plot and explorer
frame carries at least two image pixels per CSS pixel it is shown at, on a desktop and on a phone.

Headless Chromium lays each chapter page of both sites out at a desktop's and a phone's width; a script then
reads, for every bitmap in the article (glued figures and explorer frames; the diagrams are SVG), the
pixels the file has (``naturalWidth``) and the CSS pixels it is drawn at (``clientWidth``), and checks that
it keeps its shape when a phone narrows it. A figure drawn at
its own pixel size (one image pixel per CSS pixel, as every figure was before: 72-100 dpi PNGs) is blurred by
a screen with two or three device pixels per CSS pixel. ``attnlib.plotting.png`` draws them at
``DENSITY`` = 2 and the page shows them at half their pixel size.
"""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted(
    f"{book}chapters/{p.stem}" for book in ("", "ko/") for p in (ROOT / book / "chapters").glob("*.ipynb")
)
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
DENSITY = 2
MEASURE = """<script>
window.addEventListener("load", () => {
  const rows = [...document.querySelectorAll("article img, main img")]
    .filter((img) => !/\\.svg(\\?|$)/i.test(img.currentSrc || img.src) && img.clientWidth > 0)
    .map((img) => ({
      src: (img.currentSrc || img.src).slice(-60),
      natural: img.naturalWidth,
      shown: img.clientWidth,
      naturalHeight: img.naturalHeight,
      shownHeight: img.clientHeight,
    }));
  const out = document.createElement("div");
  out.id = "density";
  out.textContent = JSON.stringify(rows);
  document.body.appendChild(out);
});
</script>"""


def measure(site: Path, run_in_page, page: str, width: str, html: str | None = None) -> list[dict]:
    html = (site / f"{page}.html").read_text() if html is None else html
    return run_in_page(site / f"{page}_density_test.html", html, MEASURE, "density", window=WIDTHS[width])


def distorted(rows: list[dict]) -> list[str]:
    """Figures drawn with another shape than their own (a width narrowed to a phone's, the height kept)."""
    return [
        f"{row['src']}: {row['natural']}x{row['naturalHeight']} px, shown {row['shown']}x{row['shownHeight']}"
        for row in rows
        if abs(row["shownHeight"] * row["natural"] - row["naturalHeight"] * row["shown"]) > row["natural"] * 2
    ]


def blurred(rows: list[dict]) -> list[str]:
    return [
        f"{row['src']}: {row['natural']} px shown at {row['shown']}"
        for row in rows
        if row["natural"] < DENSITY * row["shown"] - 1  # one pixel for rounding
    ]


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", CHAPTERS)
def test_every_figure_has_two_pixels_per_css_pixel_and_keeps_its_shape(site, run_in_page, page, width):
    rows = measure(site, run_in_page, page, width)
    if "03_dot_product" in page:  # the page the controls below damage shows two glued figures and an explorer
        assert len(rows) == 3, rows
    assert blurred(rows) == [], (
        f"{page} on a {width}: figures drawn at fewer than {DENSITY} pixels per CSS pixel"
    )
    assert distorted(rows) == [], f"{page} on a {width}: figures drawn out of shape"


def _damaged_chapter_3(site: Path) -> tuple[str, str, str]:
    """Chapter 3's page with its explorer frame's width attribute and its second glued figure's style removed:
    both then show one image pixel per CSS pixel, as every figure did before (capped by the column)."""
    html = (site / "chapters/03_dot_product_attention.html").read_text()
    start = html.index('<img class="attnlib-explorer-frame"')
    tag = html[start : html.index(">", start)]
    width = re.search(r'width="\d+" ', tag)[0]
    html = html.replace(tag, tag.replace(width, ""), 1)
    glued = re.findall(r'<img alt="[^"]*" src="\.\./_images/(\w+)\.png" style="[^"]*" />', html)
    assert len(glued) == 2, glued
    figure = re.search(rf'(<img alt="[^"]*" src="\.\./_images/{glued[1]}\.png")( style="[^"]*")', html)
    return html.replace(figure[0], figure[1], 1), "explorer/", glued[1][-20:]


def test_control_figures_shown_at_their_own_pixel_size_are_caught(site, run_in_page):
    html, frame, figure = _damaged_chapter_3(site)
    found = blurred(measure(site, run_in_page, "chapters/03_dot_product_attention", "desktop", html))
    assert len(found) == 2 and frame in found[0] + found[1] and figure in found[0] + found[1], found


def test_control_a_figure_kept_at_its_height_on_a_phone_is_caught(site, run_in_page):
    """Positive control for the shape: a glued figure given its height as well as its width (what myst-nb
    writes when the output's metadata has both) is drawn squashed on a phone."""
    page = "chapters/03_dot_product_attention"
    html = (site / f"{page}.html").read_text()
    styled = re.search(r'(src="\.\./_images/\w+\.png" style="width: (\d+)px;)', html)
    rows = measure(
        site, run_in_page, page, "phone", html.replace(styled[1], styled[1] + " height: 400px;", 1)
    )
    assert len(distorted(rows)) == 1, rows
