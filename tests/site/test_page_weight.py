"""What a reader downloads for each chapter page: the page, and every file it loads in a real browser.

Headless Chromium opens each chapter page of both sites (English, and Korean under ko/) with no network and
runs its scripts; the DOM it ends with names every script (MathJax's on-demand parts included), style sheet,
image and frame the page loaded, and each style sheet names its fonts (all counted, in the woff2 format
browsers take: an upper bound, since a browser fetches only the fonts a page uses). A file under ``_static/``
is shared by every page (the browser caches it after the first page); the rest belongs to the page. The
sizes are written to ``_build/page-weights.txt``; each page must stay under 8 MB in all.
"""

import re
from pathlib import Path
from urllib.parse import unquote, urljoin, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 8 * 2**20
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


def _weights(site: Path, browser, name: str) -> tuple[int, int, list[str]]:
    """(bytes of the page itself and of what only it loads, bytes of shared files it loads, the files)."""
    page = site / f"{name}.html"
    dom, _ = browser(page)
    files = sorted(_loaded_files(page, dom))
    own = page.stat().st_size + sum(f.stat().st_size for f in files if "_static" not in f.parts)
    shared = sum(f.stat().st_size for f in files if "_static" in f.parts)
    return own, shared, [str(f.relative_to(site)) for f in files]


@pytest.fixture(scope="module")
def report(site):
    lines = ["page                                            own (MB)  shared, cached (MB)  total (MB)"]
    yield lines
    (site.parent / "page-weights.txt").write_text("\n".join(lines) + "\n")
    print("\n" + "\n".join(lines))


@pytest.mark.parametrize("page", PAGES)
def test_each_chapter_page_weighs_under_8_mb_with_everything_it_loads(site, browser, report, page):
    own, shared, files = _weights(site, browser, page)
    assert any(f.endswith(".js") for f in files)  # the browser did load the page's scripts: the list is real
    report.append(f"{page:46s} {own / 2**20:8.2f}  {shared / 2**20:19.2f}  {(own + shared) / 2**20:10.2f}")
    assert own + shared < LIMIT, f"{page}: {(own + shared) / 2**20:.1f} MB"
