"""Sphinx extension: the website shows a chapter's ideas, not the book's bookkeeping.

Every number in the prose is computed in a cell and handed to the text with ``glue(...)``, and every claim the
prose makes about a trained model is checked with ``claim(...)`` (attnlib.notebook). Those calls must run and
be tested, and a learner in Colab or Jupyter sees and runs them, but on the website they are noise: chapter 1
had 36 such lines in 312 lines of code. When the book is built, this extension removes from each code cell's
*displayed* source

- every statement that is a call of ``glue``, ``claim``, ``claim_ranked`` or ``claim_tied`` (at any depth; a
  loop or ``if`` left with nothing else in it goes too, and so does a helper function of the notebook that
  does nothing else, with its calls),
- every comment block that explains a tag for nbval (a comment line naming nbval, and the comment lines
  right after it),

and hides the input of a cell that had nothing else. The notebooks themselves are not changed: the stored
outputs (which hold the glued values) and the code that Colab shows are the same files.
"""

from __future__ import annotations

import ast
import json

BOOKKEEPING_CALLS = {"glue", "claim", "claim_ranked", "claim_tied"}
HIDDEN_TAG = "remove-input"


def _called_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        if isinstance(func, ast.Name):
            return func.id
        if isinstance(func, ast.Attribute):
            return func.attr
    return None


def _is_docstring(stmt: ast.stmt) -> bool:
    value = stmt.value if isinstance(stmt, ast.Expr) else None
    return isinstance(value, ast.Constant) and isinstance(value.value, str)


def _bookkeeping_lines(tree: ast.Module, names: set[str]) -> set[int]:
    """1-based line numbers of the bookkeeping statements, and of blocks that contain nothing else.

    A function of the notebook whose body is only bookkeeping (``def glue_scores(...)``: a docstring and a
    loop of ``glue`` calls) is bookkeeping too, and so are its calls: its name is added to ``names``.
    """
    lines: set[int] = set()

    def visit(body: list[ast.stmt]) -> bool:
        """Mark the bookkeeping in ``body``; True if every statement of it is bookkeeping."""
        all_marked = True
        for stmt in body:
            if _called_name(stmt) in names:
                marked = True
            elif isinstance(stmt, ast.FunctionDef):
                inner = [s for s in stmt.body if not _is_docstring(s)]
                marked = bool(inner) and visit(inner)
                if marked:
                    names.add(stmt.name)
            else:
                blocks = [getattr(stmt, f) for f in ("body", "orelse", "finalbody") if getattr(stmt, f, None)]
                blocks = blocks if isinstance(stmt, (ast.For, ast.While, ast.If, ast.With, ast.Try)) else []
                marked = bool(blocks) and all([visit(b) for b in blocks])
            if marked:
                lines.update(range(stmt.lineno, stmt.end_lineno + 1))
            all_marked &= marked
        return all_marked

    while True:  # until no new bookkeeping function is found
        known = set(names)
        lines.clear()
        visit(tree.body)
        if names == known:
            return lines


def _nbval_comment_lines(source_lines: list[str]) -> set[int]:
    lines: set[int] = set()
    in_block = False
    for number, line in enumerate(source_lines, start=1):
        comment = line.lstrip().startswith("#")
        in_block = comment and (in_block or "nbval" in line.lower())
        if in_block:
            lines.add(number)
    return lines


def strip_bookkeeping(source: str, names: set[str] | None = None) -> str:
    """The source as the website shows it (see the module's docstring); unchanged if it does not parse.

    ``names``: the bookkeeping functions known so far (the notebook's earlier cells may define some).
    """
    names = set(BOOKKEEPING_CALLS) if names is None else names
    try:
        tree = ast.parse(source)
    except SyntaxError:  # IPython magics and the like: show the cell as written
        return source
    source_lines = source.split("\n")
    drop = _bookkeeping_lines(tree, names) | _nbval_comment_lines(source_lines)
    kept = [line for number, line in enumerate(source_lines, start=1) if number not in drop]
    text = "\n".join(kept)
    while "\n\n\n" in text:  # a removed statement leaves at most one blank line behind
        text = text.replace("\n\n\n", "\n\n")
    return text.strip("\n")


def strip_notebook(text: str) -> str:
    """The .ipynb JSON with every code cell's source stripped; cells left empty get the remove-input tag."""
    nb = json.loads(text)
    names = set(BOOKKEEPING_CALLS)  # grows as cells define bookkeeping functions, in the notebook's order
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        shown = strip_bookkeeping(source, names)
        if shown == source:
            continue
        cell["source"] = shown
        if not shown.strip():
            tags = cell.setdefault("metadata", {}).setdefault("tags", [])
            if HIDDEN_TAG not in tags:
                tags.append(HIDDEN_TAG)
    return json.dumps(nb)


def _on_source_read(app, docname: str, source: list[str]) -> None:
    if str(app.env.doc2path(docname)).endswith(".ipynb"):
        source[0] = strip_notebook(source[0])


def setup(app):
    app.connect("source-read", _on_source_read)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
