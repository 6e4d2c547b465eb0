"""Sphinx extension: what a reader downloads for a page, and nothing it does not use (issue 28, page weight).

- The explorers' frames become files (``attnlib.explorer_page.frames_as_files``, under ``_images/explorer/``):
  a frame is fetched when the reader moves to it, not all of them, base64, with the page.
- The theme's ``fontawesome.js`` (1.5 MB; 0.5 MB compressed) is not loaded: the theme's style sheet already
  draws every standard icon from the Font Awesome webfonts, and the script exists only for custom icons
  (``FontAwesome.library.add``), which no page of the course defines. A page that did keeps it.
- Those webfonts (300 KB, for about 2,000 icons) hold only the icons the book uses: every ``fa-NAME`` that a
  page or a script of the book names, looked up in the theme's style sheet, subset from the theme's own fonts
  (fontTools; the woff2 format needs brotli).
- Sphinx's search index (and the two scripts that read it) is loaded only by the search page: the theme loads
  it on every page for search-as-you-type, which the course leaves off (the search box opens the search page).
- The ipywidgets state that myst-nb writes into a page is dropped when no widget manager is configured to read
  it (``nb_ipywidgets_js: {}`` in _config.yml: the course's pages are interactive through their own scripts).

tests/site/test_page_weight.py measures what a page then weighs, compressed, after every explorer and demo
on it was used once.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from fontTools import subset

from attnlib.explorer_page import frames_as_files  # the course's package, installed in the book's environment

WIDGET_STATE = "application/vnd.jupyter.widget-state+json"
FONTAWESOME = re.compile(
    r"\s*<!-- So that users can add custom icons -->\s*"
    r'<script defer src="[^"]*_static/scripts/fontawesome\.js[^"]*"></script>'
)
CUSTOM_ICONS = ("fa-custom", "FontAwesome.library")
SEARCH_SCRIPTS = re.compile(
    r'\s*<script src="[^"]*_static/searchtools\.js"></script>\s*<script src="[^"]*_static/language_data\.js">'
    r'</script>\s*<script src="[^"]*searchindex\.js"></script>'
)


def _drop_widget_state(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if scripts and not app.config.nb_ipywidgets_js:
        scripts[:] = [s for s in scripts if getattr(s, "attributes", {}).get("type") != WIDGET_STATE]


def lighten(page: str, path: Path, frames: Path, search_as_you_type: bool) -> str:
    """The HTML of the page written at ``path``, lightened as the module says (frames saved in ``frames``)."""

    def save(png: bytes) -> str:
        file = frames / f"{hashlib.sha256(png).hexdigest()[:20]}.png"
        if not file.exists():
            file.parent.mkdir(parents=True, exist_ok=True)
            file.write_bytes(png)
        return Path(os.path.relpath(file, path.parent)).as_posix()

    page = frames_as_files(page, save)
    if not any(marker in page for marker in CUSTOM_ICONS):
        page = FONTAWESOME.sub("", page, count=1)
    if path.name != "search.html" and not search_as_you_type:
        page = SEARCH_SCRIPTS.sub("", page, count=1)
    return page


ICON_NAME = re.compile(r"\bfa-[a-z0-9-]+")
ICON_RULE = re.compile(r"((?:\.fa-[a-z0-9-]+:(?:before|after),?)+)\{content:\"\\([0-9a-f]+)\"\}")
WEBFONTS = "vendor/fontawesome/webfonts"


def icon_codepoints(css: str) -> dict[str, int]:
    """``fa-NAME`` -> its code point, from the theme's style sheet (``.fa-NAME:before{content:"\\f09b"}``)."""
    found = {}
    for selectors, code in ICON_RULE.findall(css):
        for name in re.findall(r"\.(fa-[a-z0-9-]+):", selectors):
            found[name] = int(code, 16)
    return found


def subset_icon_fonts(out: Path, texts: list[str]) -> set[int]:
    """Write the book's Font Awesome woff2 files with only the icons ``texts`` (its pages and scripts) name;
    return their code points. Each is cut from the theme's original file: an icon added later comes back."""
    import pydata_sphinx_theme

    original = (
        Path(pydata_sphinx_theme.__file__).parent / "theme" / "pydata_sphinx_theme" / "static" / WEBFONTS
    )
    codes = icon_codepoints((out / "_static" / "styles" / "pydata-sphinx-theme.css").read_text())
    used = {codes[name] for text in texts for name in ICON_NAME.findall(text) if name in codes}
    for font in sorted(original.glob("*.woff2")):
        options = subset.Options()
        options.flavor = "woff2"
        options.layout_features = ["*"]
        face = subset.load_font(str(font), options)
        cutter = subset.Subsetter(options)
        cutter.populate(unicodes=sorted(used | {0x20}))
        cutter.subset(face)
        subset.save_font(face, str(out / "_static" / WEBFONTS / font.name), options)
    return used


def _lighten_pages(app, exception) -> None:
    if exception is not None or app.builder.format != "html":
        return
    out = Path(app.outdir)
    # not the theme's templates copied into _static, nor a book built into a subfolder (the Korean ko/)
    skipped = [out / "_static", *(p.parent for p in out.glob("*/_static"))]
    options = app.builder.theme.get_options(app.builder.theme_options)
    as_you_type = str(options.get("search_as_you_type")).lower() == "true"
    texts = []
    for path in out.rglob("*.html"):
        if any(folder in path.parents for folder in skipped):
            continue
        text = path.read_text(encoding="utf-8")
        lighter = lighten(text, path, out / "_images" / "explorer", as_you_type)
        if lighter != text:
            path.write_text(lighter, encoding="utf-8")
        texts.append(lighter)
    scripts = [
        p for p in (out / "_static").rglob("*.js") if "mathjax" not in p.parts and p.name != "fontawesome.js"
    ]
    subset_icon_fonts(out, texts + [p.read_text(encoding="utf-8", errors="replace") for p in scripts])


def setup(app):
    app.connect("html-page-context", _drop_widget_state)
    app.connect("build-finished", _lighten_pages)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
