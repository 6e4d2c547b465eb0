"""The shape of a lesson notebook: the lesson in view, its evidence folded beside it (style.md).

    python tools/lesson_shape.py [NOTEBOOK ...]   # list what breaks the rules (default: every chapter)

Rules, checked by tests/tooling/test_lesson_shape.py on every chapter and its Colab edition:

- ``glue(`` and ``claim*(`` appear only in folded cells: evidence cells (tag ``evidence``) or cells whose
  input the website folds (``hide-input``/``hide-cell``: a figure's ``glue("fig-...", fig)``);
- a code cell in view (not folded on the website; in the Colab edition, not a form cell) has at most
  ``MAX_VISIBLE_LINES`` lines;
- no name is assigned at the top level of a notebook and never read (dead code);
- every glued value is a number, a text of numbers or a figure (no words, no example sentences);
- no function is defined in two chapters, under one name or with one body (``shared_functions``): a helper two
  chapters need lives in attnlib.
"""

from __future__ import annotations

import ast
import re
import sys
from collections import defaultdict
from pathlib import Path

import nbformat
from notebooks import EVIDENCE_TAG, ROOT

MAX_VISIBLE_LINES = 30
FOLDED_TAGS = {EVIDENCE_TAG, "hide-input", "hide-cell", "remove-input", "remove-cell", "setup"}
BOOKKEEPING = re.compile(r"\b(glue|claim|claim_ranked|claim_tied)\(")
NEUTRAL_TEXT = re.compile(r"'?[-+0-9.,;:%()\[\]/×−–\s]*'?|'?[-+]?(\d+\.?\d*|\.\d+)[eE][-+]?\d+'?")


def folded(cell, colab: bool = False) -> bool:
    """Whether the reader sees the cell's code only on request: on the website, by its tags; in Colab, when it
    is a form cell."""
    if colab:
        return cell.get("metadata", {}).get("cellView") == "form"
    return bool(FOLDED_TAGS & set(cell.get("metadata", {}).get("tags", [])))


def _code_cells(nb):
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            yield index, cell


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except SyntaxError:  # IPython magics
        return None


def bookkeeping_in_view(nb) -> list[str]:
    return [
        f"cell {i}: {BOOKKEEPING.search(c.source)[0]} in a cell in view"
        for i, c in _code_cells(nb)
        if not folded(c) and BOOKKEEPING.search(c.source)
    ]


def long_cells_in_view(nb, colab: bool = False) -> list[str]:
    out = []
    for i, cell in _code_cells(nb):
        lines = len(cell.source.rstrip("\n").split("\n"))
        if not folded(cell, colab) and lines > MAX_VISIBLE_LINES:
            out.append(f"cell {i}: {lines} lines in view (at most {MAX_VISIBLE_LINES})")
    return out


def _assigned(node: ast.AST):
    """Names bound by an assignment target (tuples unpacked)."""
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, (ast.Tuple, ast.List)):
        for element in node.elts:
            yield from _assigned(element)
    elif isinstance(node, ast.Starred):
        yield from _assigned(node.value)


def dead_names(nb) -> list[str]:
    """Top-level assignments whose name is never read anywhere in the notebook."""
    assigned: dict[str, int] = {}
    read: set[str] = set()
    for i, cell in _code_cells(nb):
        tree = _parse(cell.source)
        if tree is None:
            continue
        for stmt in tree.body:
            targets = []
            if isinstance(stmt, ast.Assign):
                targets = stmt.targets
            elif isinstance(stmt, (ast.AnnAssign, ast.AugAssign)):
                targets = [stmt.target]
            for target in targets:
                for name in _assigned(target):
                    assigned.setdefault(name, i)
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                read.add(node.id)
            elif isinstance(node, ast.Global):
                read.update(node.names)
        last = tree.body[-1] if tree.body else None  # a cell's last bare name is displayed: read
        if isinstance(last, ast.Expr) and isinstance(last.value, ast.Name):
            read.add(last.value.id)
    return [
        f"cell {i}: {name} is assigned and never read"
        for name, i in sorted(assigned.items(), key=lambda item: item[1])
        if name not in read and not name.startswith("_")
    ]


def glued_words(nb) -> list[str]:
    out = []
    for i, cell in _code_cells(nb):
        for output in cell.get("outputs", []):
            scrap = output.get("metadata", {}).get("scrapbook", {})
            if "name" not in scrap:
                continue
            prefix = scrap.get("mime_prefix", "")
            data = {k.removeprefix(prefix): v for k, v in output.get("data", {}).items()}
            if "image/png" in data or "image/svg+xml" in data:
                continue
            text = "".join(data.get("text/plain", ""))
            if not NEUTRAL_TEXT.fullmatch(text.strip()):
                out.append(f"cell {i}: glued {scrap['name']!r} is not a number: {text[:60]!r}")
    return out


def problems(path: Path, colab_edition: Path | None = None) -> list[str]:
    nb = nbformat.read(path, as_version=4)
    found = bookkeeping_in_view(nb) + long_cells_in_view(nb) + dead_names(nb) + glued_words(nb)
    if colab_edition is not None:
        colab = nbformat.read(colab_edition, as_version=4)
        found += [f"Colab edition, {p}" for p in long_cells_in_view(colab, colab=True)]
    return found


def _normalised_body(function: ast.FunctionDef) -> str:
    """The function's body with its own name and docstring left out, so that copies compare equal."""
    body = function.body[1:] if ast.get_docstring(function) else function.body
    return ast.dump(ast.Module(body=body, type_ignores=[]), annotate_fields=False)


def shared_functions(paths: list[Path]) -> list[str]:
    """Functions defined in more than one notebook, by name or by body."""
    by_name, by_body = defaultdict(set), defaultdict(set)
    for path in paths:
        for _, cell in _code_cells(nbformat.read(path, as_version=4)):
            tree = _parse(cell.source)
            for node in tree.body if tree else []:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    by_name[node.name].add(path.stem)
                    if not isinstance(node, ast.ClassDef):
                        by_body[_normalised_body(node)].add((path.stem, node.name))
    out = [f"{name} is defined in {sorted(where)}" for name, where in by_name.items() if len(where) > 1]
    for where in by_body.values():
        if len({stem for stem, _ in where}) > 1:
            out.append(f"the same function body is defined as {sorted(where)}")
    return out


def main(argv: list[str]) -> int:
    from colab_edition import edition_path

    paths = [Path(a).resolve() for a in argv] or sorted((ROOT / "chapters").glob("*.ipynb"))
    found = 0
    for path in paths:
        for problem in problems(path, edition_path(path)):
            print(f"{path.relative_to(ROOT)}: {problem}")
            found += 1
    for problem in shared_functions(sorted((ROOT / "chapters").glob("*.ipynb"))):
        print(f"chapters: {problem}")
        found += 1
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
