"""Sphinx extension: write each inline <script> body once per page.

sphinx-thebe and sphinx-togglebutton register their inline configuration scripts at `env-before-read-docs`,
after the HTML builder has already copied the registry's scripts, so Jupyter Book 1 writes them twice.
`const THEBE_JS_URL = ...` declared twice is a JavaScript SyntaxError on every page
("Identifier 'THEBE_JS_URL' has already been declared"). Keeping the first copy of each inline body fixes it
without touching the extensions.
"""

from __future__ import annotations


def _dedupe(app, pagename, templatename, context, doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen: set[str] = set()
    kept = []
    for script in scripts:
        inline = not getattr(script, "filename", "x")  # inline scripts have filename None or ""
        body = script.attributes.get("body") if inline else None
        if body:
            if body in seen:
                continue
            seen.add(body)
        kept.append(script)
    scripts[:] = kept  # in place: later handlers append to this same list


def setup(app):
    # Early: `html-page-context` is emitted with emit_firstresult, so a late handler may never be called.
    app.connect("html-page-context", _dedupe, priority=100)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
