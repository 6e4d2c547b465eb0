"""Sphinx extension: the website's Colab buttons open the Colab edition of a notebook, not its book source.

Colab shows a notebook's Markdown as written, so the book's source notebooks (chapters/, exercises/)
would show raw MyST there: ``{glue:text}`` where a number belongs, figure directives, dead
cross-references. Their Colab editions (colab/chapters/, colab/exercises/, written by
tools/colab_edition.py) have the values, figures and links in plain Markdown. sphinx-book-theme builds the
Colab link from the page's path in the repository (``.../blob/<branch>/chapters/NN.ipynb``); this extension
runs after it and inserts ``colab/`` into that path.
"""

from __future__ import annotations

EDITION_DIR = "colab"


def _rewrite(buttons, marker: str) -> None:
    for button in buttons or []:
        if isinstance(button, dict):
            url = button.get("url", "")
            if url.startswith("https://colab.research.google.com/github/") and marker in url:
                head, _, tail = url.partition(marker)
                if not tail.startswith(f"{EDITION_DIR}/"):
                    button["url"] = f"{head}{marker}{EDITION_DIR}/{tail}"
            _rewrite(button.get("buttons"), marker)


def _on_page(app, pagename, templatename, context, doctree):
    branch = (app.config.html_theme_options.get("repository_branch") or "main").strip("/")
    _rewrite(context.get("header_buttons"), f"/blob/{branch}/")


def setup(app):
    app.connect("html-page-context", _on_page, priority=502)  # after the theme's launch buttons (501)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
