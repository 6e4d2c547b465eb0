"""The chapters as the website shows them: the lesson's code in view exactly as the notebook has it, the
evidence (glue, claims, per-seed tables) folded in "How we know" blocks."""

import json
import re
from html import unescape
from html.parser import HTMLParser

import pytest

from .test_site import ROOT

BOOKKEEPING = re.compile(r"\b(glue|claim|claim_ranked|claim_tied)\(")
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
# Both sites: a Korean chapter page has the English code cells (tools/i18n.py), folded the same way.
PAGES = [f"{site}chapters/{chapter}" for site in ("", "ko/") for chapter in CHAPTERS]


class _CodeInView(HTMLParser):
    """The text of each code cell's input, split by whether a <details> (a folded block) holds it."""

    def __init__(self):
        super().__init__()
        self.details = 0
        self.capture: list[int] = []  # div depth at which each open cell_input started
        self.divs = 0
        self.in_view: list[str] = []
        self.folded: list[str] = []
        self.titles: list[str] = []
        self._summary = False

    def handle_starttag(self, tag, attrs):
        classes = dict(attrs).get("class", "") or ""
        if tag == "details":
            self.details += 1
        elif tag == "summary":
            self._summary = True
        elif tag == "div":
            self.divs += 1
            if "cell_input" in classes.split():
                self.capture.append(self.divs)

    def handle_endtag(self, tag):
        if tag == "details":
            self.details -= 1
        elif tag == "summary":
            self._summary = False
        elif tag == "div":
            if self.capture and self.capture[-1] == self.divs:
                self.capture.pop()
            self.divs -= 1

    def handle_data(self, data):
        if self._summary:
            self.titles.append(data.strip())
        if self.capture:
            (self.folded if self.details else self.in_view).append(data)


def code_on_page(html: str) -> _CodeInView:
    parser = _CodeInView()
    parser.feed(html)
    return parser


@pytest.mark.parametrize("page", PAGES)
def test_glue_and_claims_are_only_in_folded_blocks(site, page):
    page = code_on_page((site / f"{page}.html").read_text())
    in_view, folded = unescape("".join(page.in_view)), unescape("".join(page.folded))
    assert "import" in in_view  # the page shows the lesson's code
    assert BOOKKEEPING.search(folded)  # and the evidence is there, folded
    assert not BOOKKEEPING.search(in_view), BOOKKEEPING.search(in_view)


@pytest.mark.parametrize("page", PAGES)
def test_the_evidence_blocks_are_titled_how_we_know(site, page):
    page = code_on_page((site / f"{page}.html").read_text())
    assert any(title.startswith("How we know") for title in page.titles)


@pytest.mark.parametrize("page", PAGES)
def test_the_site_shows_each_cell_as_the_notebook_has_it(site, page):
    """Nothing is cut out of a cell for the website: hiding leaves no dead code behind."""
    cells = json.loads((ROOT / f"{page}.ipynb").read_text())["cells"]
    html = unescape(re.sub(r"<[^>]+>", "", (site / f"{page}.html").read_text()))
    for cell in cells:
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or "remove-input" in cell.get("metadata", {}).get("tags", []):
            continue
        for line in source.splitlines():
            assert line.strip() == "" or line.strip() in html, f"{page}: {line!r} is not on the page"


def test_a_claim_in_view_is_caught():
    """Positive control: a page whose lesson code holds a claim fails the check."""
    html = '<div class="cell_input docutils container"><pre>claim(x &gt; 0, "x")</pre></div>'
    page = code_on_page(html)
    assert BOOKKEEPING.search(unescape("".join(page.in_view)))
    folded = code_on_page(f"<details><summary>How we know: x</summary>{html}</details>")
    assert not folded.in_view and folded.titles == ["How we know: x"]
