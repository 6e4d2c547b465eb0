"""What a reader downloads for each chapter page: the page, and every file it loads in a real browser once
every explorer and demo on it was used (issue 28: at most 1.5 MB, compressed as a web server sends it).

Headless Chromium opens a copy of each chapter page of both sites (English, and Korean under ko/) with no
network, runs its scripts, then a script of this test that moves every explorer's controls to their last
values and types into every in-page demo, as a reader trying each once. The DOM it ends with names every
script (MathJax's on-demand parts included), style sheet, image and frame the page loaded; each style sheet
names its fonts (all counted, in the woff2 format browsers take: an upper bound, since a browser fetches only
the fonts a page uses); the test's script lists every explorer frame the page showed (on the website each is
a file, fetched when a control reaches it: _ext/page_weight.py). Text files count gzip-compressed (level 6, as
web servers send them), images and fonts as they are. A file under ``_static/`` is shared by every page (the
browser caches it after the first page); the rest belongs to the page; the bar holds for a first visit, both
together. The sizes are written to ``_build/page-weights.txt``.
"""

import gzip
import json
import re
import sys
from html import unescape
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 1.5 * 2**20  # compressed bytes, the page and everything it loads
COMPRESSED_AS_THEY_ARE = {".png", ".jpg", ".jpeg", ".gif", ".webp", ".woff2", ".woff"}
USE_EVERYTHING_ONCE = """<script>window.addEventListener("load", function () {
  var shown = [];
  document.querySelectorAll(".attnlib-explorer").forEach(function (root) {
    root.querySelectorAll(".attnlib-explorer-controls select, .attnlib-explorer-controls input").forEach(
      function (control) {
        if (control.tagName === "SELECT") control.selectedIndex = control.options.length - 1;
        else control.value = control.max;
        control.dispatchEvent(new Event("input"));
        shown.push(root.querySelector(".attnlib-explorer-frame").src);
      });
  });
  var typed = 0;
  document.querySelectorAll(".attnlib-inpage").forEach(function (box) {
    var field = box.querySelector("input:not([type=file])");
    field.value = field.value + " ";
    field.dispatchEvent(new Event("input"));
    typed += 1;
  });
  var out = document.createElement("div");
  out.id = "weight-check";
  out.textContent = JSON.stringify({shown: shown, typed: typed});
  document.body.appendChild(out);
});</script>"""
CHAPTERS = sorted(p.stem for p in (ROOT / "chapters").glob("*.ipynb"))
PAGES = [f"{site}chapters/{chapter}" for site in ("", "ko/") for chapter in CHAPTERS]  # both sites
LINKED = re.compile(
    r'<(?:script|img|iframe|source)\b[^>]*?\ssrc="([^"]+)"'
    r'|<link\b(?=[^>]*\srel="(?:stylesheet|preload|modulepreload|icon)")[^>]*?\shref="([^"]+)"'
)
FALLBACK_FONTS = (
    ".ttf",
    ".woff",
    ".eot",
    ".otf",
)  # a style sheet lists them after woff2, which browsers take
CSS_URL = re.compile(r"""url\(\s*['"]?([^'")]+)['"]?\s*\)|@import\s+['"]([^'"]+)['"]""")


def _local(base: str, ref: str) -> Path | None:
    url = urljoin(base, ref.strip())
    return Path(unquote(urlparse(url).path)) if url.startswith("file://") else None


def _loaded_files(page: Path, dom: str) -> set[Path]:
    """The local files the rendered page links, and the files its style sheets link, recursively."""
    files = {_local(page.as_uri(), a or b) for a, b in LINKED.findall(dom)} - {None}
    sheets = [f for f in files if f.suffix == ".css"]
    while sheets:
        sheet = sheets.pop()
        if not sheet.is_file():
            continue
        for a, b in CSS_URL.findall(sheet.read_text(errors="replace")):
            found = _local(sheet.as_uri(), a or b)
            if found is not None and found not in files:
                files.add(found)
                sheets += [found] if found.suffix == ".css" else []
    woff2 = {f.with_suffix("") for f in files if f.suffix == ".woff2"}
    return {
        f for f in files if f.is_file() and not (f.suffix in FALLBACK_FONTS and f.with_suffix("") in woff2)
    }


def compressed(path: Path) -> int:
    """The bytes a web server sends for ``path``: text gzip-compressed (level 6), images and fonts as is."""
    data = path.read_bytes()
    if path.suffix.lower() in COMPRESSED_AS_THEY_ARE:
        return len(data)
    return len(gzip.compress(data, 6, mtime=0))


def _weights(site: Path, browser, name: str) -> tuple[int, int, list[str], dict]:
    """(compressed bytes of the page itself and of what only it loads, of the shared files it loads, the
    files, what the test's script did), with every explorer and demo on the page used once."""
    page = site / f"{name}.html"
    copy = page.with_name(f"_weight_check_{page.name}")  # beside the page: its relative links resolve
    copy.write_text(page.read_text().replace("</body>", USE_EVERYTHING_ONCE + "</body>", 1))
    try:
        dom, console = browser(copy)
    finally:
        copy.unlink()
    found = re.search(r'<div id="weight-check">(.*?)</div>', dom, re.S)
    assert found, f"the test's script did not run on {name}:\n{console[-2000:]}"
    used = json.loads(unescape(found[1]))
    shown = {_local(copy.as_uri(), src) for src in used["shown"]} - {None}
    files = sorted((_loaded_files(copy, dom) | shown) - {copy})
    own = compressed(page) + sum(compressed(f) for f in files if "_static" not in f.parts)
    shared = sum(compressed(f) for f in files if "_static" in f.parts)
    return own, shared, [str(f.relative_to(site)) for f in files], used


@pytest.fixture(scope="module")
def report(site):
    lines = ["page (compressed, every explorer and demo used)  own (MB)  shared, cached (MB)  total (MB)"]
    yield lines
    (site.parent / "page-weights.txt").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))


@pytest.mark.parametrize("page", PAGES)
def test_each_chapter_page_with_everything_it_loads_weighs_under_1_5_mb_compressed(
    site, browser, report, page
):
    own, shared, files, used = _weights(site, browser, page)
    assert any(f.endswith(".js") for f in files)  # the browser did load the page's scripts: the list is real
    html = (site / f"{page}.html").read_text()
    # every explorer and demo on the page was used: the list holds what they fetch
    assert len(used["shown"]) >= html.count('class="attnlib-explorer-controls"')
    assert used["typed"] == html.count('class="attnlib-inpage')
    report.append(f"{page:48s} {own / 2**20:8.2f}  {shared / 2**20:19.2f}  {(own + shared) / 2**20:10.2f}")
    assert own + shared <= LIMIT, f"{page}: {(own + shared) / 2**20:.2f} MB compressed"


def _book_pages(site: Path) -> list[Path]:
    """Every page of both books (not the theme's templates that Sphinx copies into _static)."""
    return sorted(p for p in site.rglob("*.html") if "_static" not in p.relative_to(site).parts)


def test_no_page_loads_what_it_does_not_use(site):
    """_ext/page_weight.py: no fontawesome.js (1.5 MB, for custom icons, which no page defines), the search
    index only on the search page (search-as-you-type is off), no ipywidgets state that nothing reads, and
    no explorer frame as base64 in a page."""
    pages = [p for p in _book_pages(site) if not p.name.startswith("_")]
    assert len(pages) > 40
    for page in pages:
        html = page.read_text()
        assert "fontawesome.js" not in html, page
        assert ("searchindex.js" in html) == (page.name == "search.html"), page
        assert "application/vnd.jupyter.widget-state+json" not in html, page
        for payload in re.findall(r'class="attnlib-explorer-data">(.*?)</script>', html, re.S):
            assert all(frame.endswith(".png") for frame in json.loads(payload)["frames"]), page
        assert not re.search(r'<img class="attnlib-explorer-frame"[^>]*src="data:', html), page
    for book in (site, site / "ko"):
        frames = sorted((book / "_images" / "explorer").glob("*.png"))
        assert frames and all(f.read_bytes().startswith(b"\x89PNG") for f in frames)


@pytest.mark.parametrize("book", ["", "ko/"])
def test_every_icon_a_page_shows_is_in_the_subset_icon_fonts(site, book):
    """The Font Awesome webfonts hold only the icons the book names (_ext/page_weight.py): every icon class on
    every page has its glyph in the font its style selects; an icon no page names is gone (positive control:
    the fonts were cut)."""
    from fontTools.ttLib import TTFont

    sys.path.insert(0, str(ROOT / "_ext"))
    from page_weight import WEBFONTS, icon_codepoints

    root = site / book
    codes = icon_codepoints((root / "_static" / "styles" / "pydata-sphinx-theme.css").read_text())
    fonts = {f.stem: set(TTFont(f).getBestCmap()) for f in (root / "_static" / WEBFONTS).glob("*.woff2")}
    style = {"fab": "fa-brands-400", "fa-brands": "fa-brands-400", "far": "fa-regular-400"}
    style["fa-regular"] = "fa-regular-400"
    icons = set()
    for page in root.glob("**/*.html"):
        if book == "" and "ko" in page.relative_to(site).parts:
            continue
        for classes in re.findall(r'<i class="([^"]*\bfa-[^"]*)"', page.read_text()):
            names = [c for c in classes.split() if c in codes]
            assert len(names) == 1, (page, classes)
            fonts_named = [style[c] for c in classes.split() if c in style]
            icons.add((names[0], fonts_named[0] if fonts_named else "fa-solid-900"))
    assert len(icons) > 10
    for name, font in icons:
        assert codes[name] in fonts[font], f"{name} is not in {font}"
    assert codes["fa-rocketchat"] not in fonts["fa-brands-400"]  # icons no page names are cut
    assert codes["fa-ghost"] not in fonts["fa-solid-900"]
