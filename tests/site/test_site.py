"""The built website: every page exists, math is typeset and launch links work with no network."""

import json
import re
import sys
from html import escape, unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]

CHAPTER_3 = "chapters/03_dot_product_attention"


def test_every_page_in_the_toc_is_built(site):
    missing = [page for page in _both_sites() if not (site / f"{page}.html").exists()]
    assert missing == []
    assert (site / "index.html").exists()
    assert (site / "ko" / "index.html").exists()


def _colab_prefix() -> str:
    config = yaml.safe_load((ROOT / "_config.yml").read_text())
    owner_repo = config["repository"]["url"].removeprefix("https://github.com/").rstrip("/")
    branch = config["repository"]["branch"]
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/"


def test_chapter_3_links_to_the_colab_edition_of_its_notebook(site):
    html = (site / f"{CHAPTER_3}.html").read_text()
    assert f"{_colab_prefix()}colab/{CHAPTER_3}.ipynb" in html


def test_every_colab_link_opens_an_existing_edition_in_the_configured_repository(site):
    """_config.yml is the one place that holds the repository: no page may point anywhere else."""
    prefix, seen = _colab_prefix(), 0
    for page in site.rglob("*.html"):
        for url in re.findall(r"https://colab\.research\.google\.com[^\"'<> ]*", unescape(page.read_text())):
            assert url.startswith(prefix + "colab/"), f"{page.name} links to {url}"
            assert (ROOT / url.removeprefix(prefix)).exists(), f"{page.name}: no edition at {url}"
            seen += 1
    assert seen >= 18  # every chapter and every exercise set


def test_the_colab_editions_number_figures_as_the_website_does(site):
    sys.path.insert(0, str(ROOT / "tools"))
    from colab_edition import figure_labels

    for label, (number, page) in figure_labels().items():
        html = (site / f"{page}.html").read_text()
        found = re.search(rf'id="{re.escape(label)}".*?caption-number">Fig\. (\d+)', html, re.S)
        assert found, f"{label} not found on {page}.html"
        assert int(found[1]) == number, f"{label}: website Fig. {found[1]}, Colab edition Fig. {number}"


def test_no_page_loads_assets_from_a_cdn(site):
    for page in site.rglob("*.html"):
        html = page.read_text()
        for tag in re.findall(r"<script[^>]*src=\"([^\"]+)\"", html):
            assert not tag.startswith(("http://", "https://", "//")), f"{page.name} loads {tag}"


@pytest.fixture(scope="module")
def chapter_3_offline(site, browser):
    return browser(site / f"{CHAPTER_3}.html")


def test_chapter_3_math_is_typeset_offline(chapter_3_offline):
    dom, _ = chapter_3_offline
    assert dom.count("<mjx-container") >= 10
    # MathJax removes the TeX delimiters of what it typesets: none may be left in the text.
    text = re.sub(r"<(script|style)[^>]*>.*?</\1>", "", dom, flags=re.S)
    assert "\\(" not in text and "$$" not in text


def test_chapter_3_explorer_draws_its_controls_offline(chapter_3_offline):
    """The explorer's script ran: its sliders exist and its figure is shown (test_explorers.py moves them)."""
    dom, _ = chapter_3_offline
    controls = re.search(r'<div class="attnlib-explorer-controls">(.*?)</div>', dom, re.S)
    assert controls and controls[1].count('type="range"') == 2
    assert 'class="attnlib-explorer-frame"' in dom


def _toc_pages(book: str = "") -> list[str]:
    """The pages of the English book (``book`` ""), or of the Korean book ("ko/": its pages under ko/)."""
    toc = yaml.safe_load((ROOT / book / "_toc.yml").read_text())
    pages = [toc["root"]]
    for part in toc.get("parts", []):
        for chapter in part["chapters"]:
            pages += [chapter["file"]] + [section["file"] for section in chapter.get("sections", [])]
    return [book + page for page in pages]


def _both_sites() -> list[str]:
    """Every page of both sites: the site tests that read every page run on the Korean pages too."""
    return _toc_pages() + (_toc_pages("ko/") if (ROOT / "ko" / "_toc.yml").exists() else [])


def _javascript_errors(console: str) -> list[str]:
    return [line for line in console.splitlines() if "CONSOLE" in line and "Uncaught" in line]


@pytest.mark.parametrize("page", _both_sites())
def test_page_has_no_javascript_errors_offline(site, browser, page):
    _, console = browser(site / f"{page}.html")
    assert _javascript_errors(console) == []


def test_a_javascript_error_on_a_page_is_caught(site, browser):
    """Positive control: chapter 3's page with one deliberate error, loaded the same way, fails the check."""
    page = site / "chapters" / "_positive_control_js_error.html"
    html = (site / f"{CHAPTER_3}.html").read_text()
    page.write_text(html.replace("</body>", "<script>null.deliberate();</script></body>", 1))
    try:
        _, console = browser(page)
    finally:
        page.unlink()
    assert any("deliberate" in line for line in _javascript_errors(console)), console[-2000:]


ICON = re.compile(r'<link rel="icon" href="([^"]+)"')


@pytest.mark.parametrize("page", _both_sites())
def test_page_names_an_icon_that_the_site_holds(site, page):
    """Without an icon link, a browser asks the server for /favicon.ico and logs a 404 on the first visit."""
    html = (site / f"{page}.html").read_text()
    found = ICON.search(html)
    assert found, f"{page}: no <link rel=icon>"
    icon = (site / f"{page}.html").parent / found[1]
    assert icon.resolve().is_file(), f"{page}: {found[1]} is missing"


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_an_exercise_pages_check_results_are_readable_in_light_and_dark_mode(site, run_in_page, theme):
    """The heading of each check's results, red in otter's own markup, reaches WCAG AA (4.5:1) on the output's
    background; the control is that heading in otter's pure red, beside it on the same background."""
    page = site / "exercises" / "03_dot_product_attention.html"
    contrast = (Path(__file__).parent / "contrast.js").read_text()
    script = f"""<script>{contrast}
window.addEventListener("load", () => {{
  document.documentElement.dataset.theme = "{theme}";
  const headings = [...document.querySelectorAll('.cell_output strong[style*="color: red"]')];
  const control = headings[0].cloneNode(true);
  control.setAttribute("style", "color: red !important");
  headings[0].parentElement.appendChild(control);
  const out = document.createElement("div");
  out.id = "contrast-result";
  out.textContent = JSON.stringify({{headings: headings.map(contrast), control: contrast(control)}});
  document.body.appendChild(out);
}});
</script>"""
    copy = page.with_name("check_contrast_test.html")
    result = run_in_page(copy, page.read_text(), script, "contrast-result")
    assert len(result["headings"]) >= 5, result  # every question's check ran on the stored notebook
    assert min(result["headings"]) >= 4.5, result
    if theme == "light":
        assert result["control"] < 4.5, result  # the measure sees otter's red fail on the same grey


class _EmptyHeaders(HTMLParser):
    """Counts the <th> elements of a page whose text is empty (axe-core's empty-table-header)."""

    def __init__(self):
        super().__init__()
        self.inside, self.text, self.empty = False, "", 0

    def handle_starttag(self, tag, attrs):
        if tag == "th":
            self.inside, self.text = True, ""

    def handle_data(self, data):
        if self.inside:
            self.text += data

    def handle_endtag(self, tag):
        if tag == "th":
            self.inside = False
            self.empty += not self.text.strip()


def empty_headers(html: str) -> int:
    parser = _EmptyHeaders()
    parser.feed(html)
    return parser.empty


@pytest.mark.parametrize("page", _both_sites())
def test_no_table_on_a_page_has_an_empty_header_cell(site, page):
    """A header that names nothing is announced as a blank column header (the tables' markup is static)."""
    assert empty_headers((site / f"{page}.html").read_text()) == 0


def test_control_the_notebooks_tables_as_pandas_wrote_them_have_empty_header_cells():
    """The measure sees the corner cell pandas writes; the site's build (_ext/table_headers.py) fixes it."""
    stored = "".join(
        "".join(output.get("data", {}).get("text/html", ""))
        for cell in json.loads((ROOT / "chapters" / "08_translation.ipynb").read_text())["cells"]
        for output in cell.get("outputs", [])
    )
    assert empty_headers(stored) > 0


class _Images(HTMLParser):
    """The (alt, src) of every <img> of a page; alt is None where the attribute is missing."""

    def __init__(self):
        super().__init__()
        self.images: list[tuple[str | None, str]] = []

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            attributes = dict(attrs)
            self.images.append((attributes.get("alt"), attributes.get("src") or ""))


def images(html: str) -> list[tuple[str | None, str]]:
    parser = _Images()
    parser.feed(html)
    return parser.images


IMAGE_FILE = re.compile(r"\S+\.(png|jpe?g|gif|svg|webp)", re.I)


def alt_text_problems(html: str) -> list[str]:
    """What a screen reader would get wrong about the page's images: no alt text, an empty one, a file name
    or path (Sphinx writes the image's path when a figure has no alt), or one alt for two different images."""
    problems, seen = [], {}
    for alt, src in images(html):
        where = src if len(src) < 80 else src[:60] + "..."
        text, file = (alt or "").strip(), src.rsplit("/", 1)[-1]
        if not text:
            problems.append(f"{where}: no alt text")
        elif IMAGE_FILE.fullmatch(text) or text == src or (file and text.endswith(file)):
            problems.append(f"{where}: the alt text is a file name, {text!r}")
        elif seen.setdefault(text, src) != src:
            problems.append(f"{where}: the same alt text as {seen[text][:60]}, {text[:60]!r}")
    return problems


@pytest.mark.parametrize("page", _both_sites())
def test_every_image_on_a_page_has_its_own_alt_text(site, page):
    """A reader who cannot see a figure hears its alt text: it must say something, and not the file's name."""
    assert alt_text_problems((site / f"{page}.html").read_text()) == []


def _attribute(text: str) -> str:
    """``text`` as docutils writes an attribute value (it leaves apostrophes as they are)."""
    return escape(text, quote=False).replace('"', "&quot;")


@pytest.mark.parametrize("damage", ["file name", "empty", "missing", "shared"])
def test_control_a_figure_whose_alt_text_is_damaged_is_caught(site, damage):
    """Positive control: chapter 3's page with one glued figure's alt set back to its file name (as the site
    was built before the figures had alt texts), emptied, removed, or copied from another figure."""
    html = (site / f"{CHAPTER_3}.html").read_text()
    figures = [image for image in images(html) if re.fullmatch(r"\.\./_images/\w+\.png", image[1])]  # glued
    assert len(figures) >= 2, figures  # the page's glued figures are there to damage
    (alt, src), (other, _) = figures[:2]
    written = f'alt="{_attribute(alt)}"'
    assert html.count(written) == 1, written
    damaged = {"file name": src, "empty": "", "missing": None, "shared": other}[damage]
    html = html.replace(written, "" if damaged is None else f'alt="{_attribute(damaged)}"', 1)
    problems = alt_text_problems(html)
    assert len(problems) == 1 and src[:60] in problems[0], problems
