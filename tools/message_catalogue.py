"""The message catalogue of the exercise checks: every message a learner can see, and its Korean entry.

    python tools/message_catalogue.py missing [SET ...]   # JSON {English: ""} of the messages without Korean
    python tools/message_catalogue.py check [SET ...]     # exit 1: an entry missing, a message escaping

A message is an English template (``attnlib.grading.messages``). They are found by reading the code (``ast``)
of ``attnlib/grading/*.py``, of the grader's ``grader/attnlib_grader/*.py`` and of every test cell of the
masters ``exercises/source/NN_*.ipynb``:
- the template of every ``say(...)`` / ``checks.say(...)`` (a literal, or a name bound to one; a literal
  chosen by ``a if c else b``), and the literal text of its fields (a label such as "the function");
- the ``what=``, ``hint=`` and ``bug=`` arguments of a call of a ``checks`` function (by its signature, so the
  third positional argument of ``checks.close`` counts) or of a helper the test cells define (its parameters
  so named), which the checks translate by exact lookup: a
  literal, a name bound to a literal in the question's test cells, or either branch of ``a if c else b``;
- the keys of the ``sizes`` of ``checks.no_python_loops`` and of ``tracing.LOOPED`` (what a loop ran over).
What escapes the catalogue (``escapes``): an f-string, a ``%`` or a ``+`` of literals anywhere in a test cell,
a literal given to ``AssertionError`` or to ``assert``, and a helper's ``return`` of a literal sentence, in
a test cell or in ``attnlib/grading``: such text reaches the learner untranslated. Write ``checks.say(
"... {x} ...", x=x)`` instead.
In the grader (``grader/attnlib_grader``) every sentence written in the code reaches a learner's
``feedback/<name>.md`` or ``results.json`` (a time limit used up, a sandbox that died, a malformed reply, a
refusal) unless it is for the teacher or is code: so any literal or f-string there with two words in a row,
outside ``say``/``tr``, a docstring, a ``print`` or an argparse ``help``, escapes, except in the functions and
constants ``GRADER_NOT_FOR_LEARNERS`` names (``grader_escapes``).
"""

from __future__ import annotations

import ast
import inspect
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GRADING = ROOT / "attnlib" / "grading"
GRADER = ROOT / "grader" / "attnlib_grader"  # the teacher's grader: its feedback's own lines
SOURCE_DIR = ROOT / "exercises" / "source"
CATALOGUE = GRADING / "messages_ko.json"
MESSAGE_PARAMS = ("what", "hint", "bug")
PROSE = re.compile(r"[A-Za-z]{2,}")
WORDS = re.compile(r"\b[A-Za-z]{2,}'?[a-z]* +[A-Za-z]{2,}\b")  # two words in a row: a sentence's text
# The grader's text that no learner reads, per module: functions and constants whose sentences are the
# teacher's (a warning, the self-check, a broken bundle or configuration, the gradebook's columns) or code.
GRADER_NOT_FOR_LEARNERS = {
    "grade.py": ("NO_ISOLATION_WARNING", "NO_CGROUP_WARNING", "self_check", "main"),
    "child.py": ("_switch_off",),  # the process dies before any cell: the grader reports that in its words
    "gradebooks.py": ("*",),  # the gradebooks' column names
    "gradescope.py": ("FALLBACK",),  # extra_data.isolation, for the teacher
    "isolation.py": ("bwrap_command",),  # a shell command
    "report.py": ("rubric_lines", "add"),  # the teacher's rubric template; a feedback file not written
    "submissions.py": ("find_submissions",),  # the entries skipped, in skipped.txt and on stderr
    "switching.py": ("resolve_equations", "_off_function", "blank_sources"),  # a set's config; code
    "zygote.py": ("_ZYGOTE_START", "_drop_privileges", "_become", "_enter"),  # code; the zygote's own errors
}


def _prose(text: str) -> bool:
    """Text that reads as words (not an identifier, a dotted name or a separator)."""
    return bool(PROSE.search(text)) and not re.fullmatch(r"[\w.]+", text)


def test_cells(master: Path) -> list[tuple[str, str]]:
    """(question, source) of every code cell between BEGIN TESTS and END TESTS of a master."""
    nb = json.loads(master.read_text())
    cells, question, in_tests = [], "?", False
    for cell in nb["cells"]:
        source = "".join(cell["source"])
        if cell["cell_type"] == "raw":
            first = source.strip().splitlines()[0] if source.strip() else ""
            if first == "# BEGIN QUESTION":
                question = re.search(r"^name:\s*(\S+)", source, re.M).group(1)
            in_tests = first == "# BEGIN TESTS" or (in_tests and first != "# END TESTS")
        elif in_tests and cell["cell_type"] == "code":
            cells.append((question, source))
    return cells


def _signatures() -> dict[str, inspect.Signature]:
    sys.path.insert(0, str(ROOT))
    from attnlib.grading import checks

    found = {}
    for name in dir(checks):
        fn = getattr(checks, name)
        if callable(fn) and not isinstance(fn, type):
            try:
                found[name] = inspect.signature(fn)
            except (TypeError, ValueError):
                pass
    return found


def _text(node: ast.AST) -> bool:
    """Whether ``node`` is literal text: a string constant or an f-string."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _in_say(node: ast.AST, top: ast.AST) -> bool:
    """Whether ``node`` lies inside a say(...) or tr(...) call within ``top``."""
    for call in ast.walk(top):
        if isinstance(call, ast.Call) and _callee(call) in ("say", "tr") and call is not node:
            if any(inner is node for inner in ast.walk(call)):
                return True
    return False


def _callee(node: ast.Call) -> str:
    func = node.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "checks":
        return func.attr
    if isinstance(func, ast.Name):
        return func.id
    return ""


class Reader:
    """The templates and the escapes of a group of sources (one question's test cells, or one module)."""

    def __init__(self, where: str, sources: list[str], strict: bool) -> None:
        """``strict``: a test cell, where any f-string or + of text escapes; in a module only the text
        given to AssertionError and assert does (its other f-strings are for the teacher: ValueError)."""
        self.where, self.templates, self.escapes, self.strict = where, {}, [], strict
        self.trees = [ast.parse(s) for s in sources]
        self.constants: dict[str, list[ast.expr]] = {}
        for tree in self.trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.Assign):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            self.constants.setdefault(target.id, []).append(node.value)
        self.signatures = _signatures()
        self.local: dict[str, list[str]] = {}  # the cells' own helpers: name -> parameters, in order
        for tree in self.trees:
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef):
                    params = [a.arg for a in [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]]
                    self.local[node.name] = params
        for tree in self.trees:
            self._read(tree)

    def _add(self, text: str, node: ast.AST) -> None:
        self.templates.setdefault(text, f"{self.where}:{getattr(node, 'lineno', 0)}")

    def _escape(self, node: ast.AST, why: str) -> None:
        self.escapes.append(f"{self.where}:{getattr(node, 'lineno', 0)}: {why}: {ast.unparse(node)[:120]}")

    def _literal(self, node: ast.AST, depth: int = 0) -> None:
        """Collect the message text ``node`` stands for: a literal, a name bound to one, a conditional."""
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.strip():
                self._add(node.value, node)
        elif isinstance(node, ast.IfExp):
            self._literal(node.body, depth)
            self._literal(node.orelse, depth)
        elif isinstance(node, ast.Name) and depth < 3:
            for value in self.constants.get(node.id, []):
                if isinstance(value, (ast.Constant, ast.IfExp, ast.Name)):
                    self._literal(value, depth + 1)

    def _read(self, tree: ast.AST) -> None:
        # an error of the test itself (raise ValueError(f"...")) is for the teacher, a key of checks.once is
        # data: neither is a check's message
        own_errors = {
            id(inner)
            for node in ast.walk(tree)
            if (
                isinstance(node, ast.Raise)
                and isinstance(node.exc, ast.Call)
                and _callee(node.exc) not in ("AssertionError", "")
            )
            or (isinstance(node, ast.Call) and _callee(node) == "once")
            for inner in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in own_errors and not (isinstance(node, ast.Call) and _callee(node) in ("say", "tr")):
                continue  # (a message made for such an error still counts)
            if isinstance(node, ast.JoinedStr) and self.strict:
                self._escape(node, "an f-string (use checks.say with {fields})")
            elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)) and self.strict:
                if any(_text(side) for side in (node.left, node.right)):
                    self._escape(node, "text joined by + or % (use checks.say with {fields})")
            elif isinstance(node, ast.Call) and _callee(node) == "AssertionError" and node.args:
                self._message(node.args[0])
            elif isinstance(node, ast.Assert) and node.msg is not None:
                self._message(node.msg)
            elif isinstance(node, ast.Return) and isinstance(node.value, ast.Constant):
                if isinstance(node.value.value, str) and " " in node.value.value.strip():
                    self._escape(node, "a sentence returned as it is (return checks.say(...))")
            elif isinstance(node, ast.Call):
                self._call(node)
            elif isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "LOOPED" for t in node.targets
            ):
                self._keys(node.value)

    def _message(self, node: ast.AST) -> None:
        """The text given to AssertionError or assert: a say(...) or a name or call that makes one."""
        if any(_text(n) for n in ast.walk(node) if not _in_say(n, node)):
            self._escape(node, "a literal message (wrap it in checks.say)")

    def _keys(self, node: ast.AST) -> None:
        if isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    self._add(key.value, key)

    def _call(self, node: ast.Call) -> None:
        name = _callee(node)
        if name == "say":
            if not node.args:
                self._escape(node, "say() without a template")
                return
            self._literal(node.args[0])
            for arg in [*node.args[1:], *(k.value for k in node.keywords)]:
                if isinstance(arg, ast.Name):
                    self._literal(arg)  # a field bound to a literal
                for inner in ast.walk(arg):
                    if (
                        isinstance(inner, ast.Constant)
                        and isinstance(inner.value, str)
                        and _prose(inner.value)
                    ):
                        self._add(inner.value, inner)
            return
        if name == "tr":
            for arg in node.args:
                self._literal(arg)
            return
        if name in self.local and not isinstance(node.func, ast.Attribute):
            params = self.local[name]
            given = dict(zip(params, node.args, strict=False)) | {
                k.arg: k.value for k in node.keywords if k.arg
            }
            for param, value in given.items():
                if param in MESSAGE_PARAMS:
                    self._literal(value)
            return
        signature = self.signatures.get(name)
        if signature is None:
            return
        try:
            bound = signature.bind_partial(*node.args, **{k.arg: k.value for k in node.keywords if k.arg})
        except TypeError:
            return
        for param, value in bound.arguments.items():
            if param in MESSAGE_PARAMS and isinstance(value, ast.AST):
                self._literal(value)
            elif param == "sizes":
                self._keys(value)


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _sentence(node: ast.AST) -> bool:
    """A string literal, or an f-string whose own text (fields left out), holding two words in a row."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(WORDS.search(node.value))
    if isinstance(node, ast.JoinedStr):
        own = "{}".join(v.value for v in node.values if isinstance(v, ast.Constant))
        return bool(WORDS.search(own))
    return False


def grader_escapes(where: str, source: str) -> list[str]:
    """The sentences of a grader module that reach a learner untranslated (see the module's docstring)."""
    tree = ast.parse(source)
    skipped = set(GRADER_NOT_FOR_LEARNERS.get(Path(where).name, ()))
    if "*" in skipped:
        return []
    quiet = _docstrings(tree)
    templates = {  # constants that say or tr is given: their text is collected (``Reader``)
        node.args[0].id
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and _callee(node) in ("say", "tr") and node.args
        if isinstance(node.args[0], ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) in templates for t in node.targets):
            quiet |= {id(n) for n in ast.walk(node.value)}
        translated = isinstance(node, ast.Call) and _callee(node) in ("say", "tr")
        teachers = isinstance(node, ast.Call) and _callee(node) == "print"
        if translated or teachers:  # a say's f-string field still escapes
            quiet |= {id(n) for n in ast.walk(node) if teachers or not isinstance(n, ast.JoinedStr)}
        elif isinstance(node, ast.keyword) and node.arg == "help":
            quiet |= {id(n) for n in ast.walk(node)}
    escapes: list[str] = []

    def visit(node: ast.AST, exempt: bool) -> None:
        for child in ast.iter_child_nodes(node):
            named = getattr(child, "name", None) or next(
                (t.id for t in getattr(child, "targets", []) if isinstance(t, ast.Name)), None
            )
            inside = exempt or named in skipped
            if not inside and id(child) not in quiet and _sentence(child):
                escapes.append(f"{where}:{child.lineno}: text a learner reads: {ast.unparse(child)[:120]}")
            elif not isinstance(child, ast.JoinedStr):
                visit(child, inside)

    visit(tree, False)
    return escapes


def _module_sources() -> list[tuple[str, str]]:
    paths = sorted(GRADING.glob("*.py")) + sorted(GRADER.glob("*.py"))
    return [(str(p.relative_to(ROOT)), p.read_text()) for p in paths]


def read_masters(sets: list[str] | None = None) -> list[Reader]:
    masters = sorted(SOURCE_DIR.glob("[0-9][0-9]_*.ipynb"))
    readers = []
    for master in masters:
        if sets and not any(master.stem.startswith(s) for s in sets):
            continue
        by_question: dict[str, list[str]] = {}
        for question, source in test_cells(master):
            by_question.setdefault(question, []).append(source)
        for question, sources in by_question.items():
            readers.append(Reader(f"{master.stem} {question}", sources, strict=True))
    return readers


def read_modules() -> list[Reader]:
    """The readers of attnlib/grading and the grader; in the grader, what escapes is ``grader_escapes``
    (its own asserts are not for learners)."""
    readers = []
    for name, source in _module_sources():
        reader = Reader(name, [source], strict=False)
        if name.startswith("grader/"):
            reader.escapes = grader_escapes(name, source)
        readers.append(reader)
    return readers


def templates(readers: list[Reader]) -> dict[str, str]:
    """English template -> where it was first found."""
    found: dict[str, str] = {}
    for reader in readers:
        for text, where in reader.templates.items():
            found.setdefault(text, where)
    return found


def load(path: Path = CATALOGUE) -> dict[str, str]:
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def dump(entries: dict[str, str], path: Path = CATALOGUE) -> None:
    path.write_text(
        json.dumps(entries, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8"
    )


def main(argv: list[str]) -> int:
    command, sets = (argv[0] if argv else "check"), argv[1:]
    readers = read_modules() + read_masters(sets or None)
    found, catalogue = templates(readers), load()
    missing = {text: "" for text in found if not catalogue.get(text)}
    if command == "missing":
        print(json.dumps(missing, ensure_ascii=False, indent=1))
        return 0
    escapes = [e for reader in readers for e in reader.escapes]
    for text in missing:
        print(f"no Korean entry ({found[text]}): {text!r}")
    for escape in escapes:
        print(f"escapes the catalogue: {escape}")
    print(f"{len(found)} messages, {len(found) - len(missing)} with a Korean entry, {len(escapes)} escapes")
    return 1 if missing or escapes else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
