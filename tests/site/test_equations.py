"""Display equations on the built pages, at a desktop's and a phone's width: one wider than the text column
can be scrolled sideways and shows a cue that it scrolls, instead of being cut at the right edge."""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# both sites: the Korean pages (ko/chapters, the complete translations) have the same equations
CHAPTERS = sorted(
    f"{book}chapters/{p.stem}" for book in ("", "ko/") for p in (ROOT / book / "chapters").glob("*.ipynb")
)
WIDTHS = {"desktop": (1280, 900), "phone": (390, 844)}
MEASURE = """<script>
window.addEventListener("load", () => {
  const measure = () => {
    const rows = [...document.querySelectorAll('mjx-container[display="true"]')].map((m) => {
      const style = getComputedStyle(m);
      const cue = style.backgroundImage.includes("gradient");
      const text = m.textContent.slice(0, 40);
      return {wide: m.scrollWidth > m.clientWidth + 1, overflow: style.overflowX, cue, text};
    });
    const out = document.createElement("div");
    out.id = "equations";
    out.textContent = JSON.stringify(rows);
    document.body.appendChild(out);
  };
  (window.MathJax && MathJax.startup ? MathJax.startup.promise : Promise.resolve()).then(measure, measure);
});
</script>"""


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("page", CHAPTERS)
def test_a_wide_equation_scrolls_and_says_so(site, run_in_page, page, width):
    html = (site / f"{page}.html").read_text()
    copy = site / f"{page}_equations_test.html"
    rows = run_in_page(copy, html, MEASURE, "equations", window=WIDTHS[width])
    wide = [row for row in rows if row["wide"]]
    cut = [row["text"] for row in wide if row["overflow"] not in ("auto", "scroll") or not row["cue"]]
    assert cut == [], f"{len(cut)} of {len(rows)} display equations are cut on a {width}: {cut}"


def test_the_measure_finds_wide_equations_on_a_phone(site, run_in_page):
    """The control: on a phone some equation is wider than its column, so the test above can fail."""
    rows = run_in_page(
        site / "chapters/01_equations_control.html",
        (site / "chapters/01_rnn_gradients.html").read_text(),
        MEASURE,
        "equations",
        window=WIDTHS["phone"],
    )
    assert rows and any(row["wide"] for row in rows)
