"""Sphinx extension: an empty header cell of a notebook's table is written as a data cell.

pandas writes the corner above a DataFrame's index as an empty ``<th></th>`` (and, under a named index, one
beside each column): a header that names nothing, which a screen reader announces as a blank column header
(axe-core's rule empty-table-header). A cell that heads nothing is a ``<td>``. The notebooks' stored outputs
stay as pandas wrote them; only the page changes (tests/site/test_site.py).
"""

from __future__ import annotations

import re

from docutils import nodes

EMPTY_HEADER = re.compile(r"<th(\s[^>]*)?>\s*(?:&nbsp;)?\s*</th>")


def empty_headers_to_cells(html: str) -> str:
    """``html`` with every empty ``<th>`` written as a ``<td>`` with the same attributes."""
    return EMPTY_HEADER.sub(lambda m: f"<td{m.group(1) or ''}></td>", html)


def _tables(app, doctree, docname) -> None:
    for node in list(doctree.findall(nodes.raw)):
        if "html" in node.get("format", "").split() and 'class="dataframe' in node.astext():
            node[0] = nodes.Text(empty_headers_to_cells(node.astext()))


def setup(app):
    app.connect("doctree-resolved", _tables)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
