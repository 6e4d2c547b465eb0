"""No code in what a test shows the learner (issue 18): messages describe the problem in words and maths.

The learner sees a failing test's message, its `hint=`, the text a diagnose helper returns and the
label of the call, never the test's code. Those texts must not hand over the answer as code:
`torch.softmax(e, dim=-1)`, `X @ W.T` or `e[:, 0]` are spoilers, while maths (W s_{t-1}, softmax over
the source positions), shapes ((B, T, S)), words (the last dimension) and the names of the learner's
own functions and arguments (`scores_from_projections(s_prev, UH, W, v)`) are allowed. Code belongs only
in a question's last hint tier, in the learner's Markdown, at most two lines of it (test_hints.py).

Which string literals count (read with `ast` from every test cell of every master: shared helper cells, public
and hidden cases): EVERY string constant, and every f-string (its literal parts joined, each replacement field
read as `{}`), and `+` of them, except
1. docstrings (of the cell, a function or a class): the teacher reads them, no learner does;
2. the value of a `what=` keyword argument: the label of a call, which names the learner's function and its
   arguments (a positional label, e.g. the third argument of `checks.close`, DOES count);
3. names of switched-off functions: the arguments of `checks.switched_off(...)` and the strings of an
   assignment to a name spelled OFF or OFF_<something> (they are `attnlib.x.y` / `torch.x.y` paths);
4. test data, never shown as such: dict keys, subscripts (`uses["1"]`), operands of a comparison
   (`regime == "vanishing"`), arguments of calls of `torch.*` and `attnlib.*` (not `attnlib.grading`) and of
   `getattr`, `hasattr`, `setattr` and `type`;
5. format specifications inside f-strings (`:.4f`).
Everything else is treated as something a learner may read; a false alarm is cheap (the failure names the
string, rewrite it in words), a missed spoiler is not.

What counts as code (CODE_PATTERNS below): `torch.`, ` @ `, `.T` as an attribute, `dim=`/`ord=`/`dtype=`,
`keepdim`, a method call or attribute (`.sum(`, `.softmax(`, `.reshape`), an empty call (`tril()`), torch's
tensor functions called by name (`transpose(`, `cat(`, ...), `masked_fill`, slicing (`[:, `, `[..., i]`,
`[-k]`), and infinity written as code (`float(`, `-inf`).

EXERCISE_SETS limits the sets, as for the other exercise tests; `-k 05_luong` selects one set.
"""

from __future__ import annotations

import ast
import json
import re

import pytest
from exercise_helpers import SETS, _load_tool, exercises

# (pattern, what it is): a message matching one of these shows code.
CODE_PATTERNS = [
    (r"\btorch\.\w", "a torch name (torch.)"),
    (r" @ ", "the matrix product operator ( @ )"),
    (r"(?<=[\w)\]])\.T\b", "a transpose attribute (.T)"),
    (r"\b(dim|ord|dtype|keepdim)\s*=", "a keyword argument (dim=, ord=, dtype=, keepdim=)"),
    (r"keepdim", "keepdim"),
    (r"masked_fill", "masked_fill"),
    (r"(?<![\w.])\.[A-Za-z_]\w*", "a method or attribute written as code (.sum(, .reshape)"),
    (r"\w\.[A-Za-z_]\w*\(", "a method call (x.sum(...))"),
    (r"\b[A-Za-z_]\w*\(\)", "an empty call (tril())"),
    (
        r"\b(transpose|tril|triu|reshape|view|unsqueeze|squeeze|matmul|bmm|einsum|argsort|argmax|arange|zeros|"
        r"ones|eye|gather|scatter|clamp|matrix_norm|eigvals|allclose|isclose|cat|stack|repeat|expand|permute|"
        r"flip|cumsum|logsumexp|where|item|linalg|chunk|split|narrow|index_select|diag_embed)\(",
        "a torch function called by name (transpose(...), cat(...))",
    ),
    (r"\[[^\]\n]*:[^\]\n]*\]|\[\s*\.\.\.\s*,", "slicing ([:, i], [..., perm, :])"),
    (r"\w\[-\w*\]", "negative indexing ([-k])"),
    (r"\bfloat\(", "a float(...) literal"),
    (r"(?<![\w])-inf\b", "minus infinity written as code (-inf)"),
]
_COMPILED = [(re.compile(p), label) for p, label in CODE_PATTERNS]

DATA_CALL_ROOTS = ("torch", "attnlib")
DATA_BUILTINS = {"getattr", "hasattr", "setattr", "type"}


def code_in(text: str) -> list[str]:
    """The kinds of code `text` shows (empty when it is words and maths only)."""
    return [label for pattern, label in _COMPILED if pattern.search(text)]


def _dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        return ".".join([node.id, *reversed(parts)])
    return None


def _is_data_call(call: ast.Call) -> bool:
    name = _dotted(call.func)
    if name is None:
        return False
    if name in DATA_BUILTINS:
        return True
    root = name.split(".")[0]
    return root in DATA_CALL_ROOTS and not name.startswith("attnlib.grading")


def _is_switched_off(call: ast.Call) -> bool:
    name = _dotted(call.func) or ""
    return name.endswith("switched_off")


def _text(node: ast.AST) -> str | None:
    """The literal text of a string constant, f-string or + of them (replacement fields read `{}`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is not None or right is not None:
            return (left if left is not None else "{}") + (right if right is not None else "{}")
    return None


class _Collector(ast.NodeVisitor):
    """The shown strings of one cell: (enclosing function, line, text)."""

    def __init__(self) -> None:
        self.found: list[tuple[str, int, str]] = []
        self.scope: list[str] = []

    def _skip_docstring(self, body: list[ast.stmt]) -> list[ast.stmt]:
        if body and isinstance(body[0], ast.Expr) and _text(body[0].value) is not None:
            return body[1:]
        return body

    def visit_Module(self, node: ast.Module) -> None:
        for stmt in self._skip_docstring(node.body):
            self.visit(stmt)

    def _visit_def(self, node) -> None:
        self.scope.append(node.name)
        for child in node.decorator_list:
            self.visit(child)
        if not isinstance(node, ast.ClassDef):
            self.visit(node.args)
        for stmt in self._skip_docstring(node.body):
            self.visit(stmt)
        self.scope.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _visit_def

    def visit_Assign(self, node: ast.Assign) -> None:
        names = [t.id for t in node.targets if isinstance(t, ast.Name)]
        if names and all(re.fullmatch(r"OFF(_\w+)?", n) for n in names):
            return  # rule 3: names of switched-off functions
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        for value in node.values:  # rule 4: the keys are data
            self.visit(value)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        self.visit(node.value)  # rule 4: the index is data

    def visit_Compare(self, node: ast.Compare) -> None:
        return  # rule 4: compared with, not shown

    def visit_Call(self, node: ast.Call) -> None:
        if _is_data_call(node) or _is_switched_off(node):  # rules 3, 4
            self.visit(node.func)
            return
        self.visit(node.func)
        for arg in node.args:
            self.visit(arg)
        for keyword in node.keywords:
            if keyword.arg != "what":  # rule 2
                self.visit(keyword.value)

    def visit_BinOp(self, node: ast.BinOp) -> None:
        text = _text(node)
        if text is not None and isinstance(node.op, ast.Add):
            self._add(node, text)
            for part in (node.left, node.right):  # the fields inside the parts, not the parts again
                if _text(part) is None:
                    self.visit(part)
                elif isinstance(part, ast.JoinedStr):
                    self._fields(part)
            return
        self.generic_visit(node)

    def visit_JoinedStr(self, node: ast.JoinedStr) -> None:
        self._add(node, _text(node))
        self._fields(node)

    def _fields(self, node: ast.JoinedStr) -> None:
        for value in node.values:
            if isinstance(value, ast.FormattedValue):
                self.visit(value.value)  # rule 5: not the format spec

    def visit_Constant(self, node: ast.Constant) -> None:
        if isinstance(node.value, str):
            self._add(node, node.value)

    def _add(self, node: ast.AST, text: str) -> None:
        self.found.append((".".join(self.scope) or "<cell>", getattr(node, "lineno", 0), text))


def shown_strings(source: str) -> list[tuple[str, int, str]]:
    """The strings of a test cell that a learner may read: (function, line, text)."""
    collector = _Collector()
    collector.visit(ast.parse(source))
    return collector.found


def master_test_cells(master) -> list[tuple[str, str]]:
    """(question, source) of every code cell between BEGIN TESTS and END TESTS of a master (read as the
    message catalogue reads them, tools/message_catalogue.py)."""
    return _load_tool("message_catalogue").test_cells(master)


def coded_messages(master) -> list[str]:
    """One line per shown string of a master's tests that contains code."""
    problems = []
    for question, source in master_test_cells(master):
        for function, line, text in shown_strings(source):
            kinds = code_in(text)
            if kinds:
                problems.append(
                    f"{master.stem} {question} {function} (cell line {line}): {text!r} shows "
                    + "; ".join(kinds)
                )
    return problems


@pytest.mark.parametrize("name", SETS)
def test_no_code_in_test_messages(name):
    problems = coded_messages(exercises.SOURCE_DIR / f"{name}.ipynb")
    assert not problems, (
        f"{len(problems)} test message(s) of {name} show code; say it in words and maths "
        "(code only in the last hint tier of the question's Markdown):\n" + "\n".join(problems)
    )


def test_every_set_has_test_cells():
    for name in SETS:
        assert master_test_cells(exercises.SOURCE_DIR / f"{name}.ipynb"), f"{name}: no test cell found"


CODE = [
    "torch.softmax(e, dim=-1)",
    "use torch.linalg.matrix_norm(J, ord=2)",
    "Q = X @ W_q.T",
    "W_o applies as W_o x: multiply by W_o.T",
    "e.masked_fill(~mask, float('-inf'))",
    "scores of -inf give NaN",
    "keep the axis with keepdim",
    "the weights sum to 1: weights.sum(-1)",
    "take context[:, 0]",
    "shuffle the outputs too, f(X)[..., perm, :]",
    "the factor for k uses pre[-k]",
    "merge with .reshape, not .view",
    "tril(), not tril(-1)",
    "reshape to (..., T, h, d/h), then transpose(-3, -2)",
    "gather the tensors with cat(grads)",
    "softmax(e, dim=1) is over the wrong axis",
    "fill the even columns [:, 0::2]",
    "J = J @ step_jacobian(W_h, pre[-k])",
    "the tensor's .abs().max().item()",
]
WORDS_AND_MATHS = [
    "W s_{t-1}",
    "(B, T, S)",
    "softmax over the last dimension",
    "diag(tanh'(z)) W_h scales row a by tanh'(z_a)",
    "scores_from_projections(s_prev, UH, W, v)",
    "step_jacobian(W_h, z): the factor has the shape of W_h, (d_h, d_h)",
    "e.g. the mean over the batch, i.e. one number",
    "divide by sqrt(d_k), the size of one query",
    "x_1, ..., x_n and the positions 0 ... S-1",
    "‖g‖ = sqrt(3² + 4²) = 5 over ALL the tensors",
    "Vaswani et al. (2017, §3.5)",
    "entries in (0, 1] and the interval [0, 1]",
    "mask[t, s] must be True exactly where s <= t",
    "a masked score becomes minus infinity (−∞), weight 0",
    "Wᵀ for W: the transpose of W",
    "the slope is log ρ(W_h) = -0.12 per step",
    "the last axis, dimension -1",
    "the heads concatenated, [head_1; ...; head_h] W_oᵀ",
]


@pytest.mark.parametrize("text", CODE)
def test_detector_flags_code(text):
    assert code_in(text), f"the detector misses the code in {text!r}"


@pytest.mark.parametrize("text", WORDS_AND_MATHS)
def test_detector_passes_words_and_maths(text):
    assert not code_in(text), f"the detector calls {text!r} code: {code_in(text)}"


def test_collector_reads_what_a_learner_sees():
    source = '''
OFF = ("torch.nn.functional.softmax", "attnlib.attend")


def helper(got, what):
    """A docstring may say torch.softmax(x, dim=-1): only the teacher reads it."""
    table = {"torch.key": 1}
    if got == "torch.data":
        return f"{what}: use torch.softmax({got}, dim=-1)"
    values = attnlib.something(got, "torch.data_argument")
    checks.close(got, values, "a label", what="step(x[:, 0])", hint="transpose with " + "W.T")
    with checks.switched_off("torch.off"):
        pass
    assert got, f"sum the weights {got:.4f}"
    raise AssertionError("use x @ W")
'''
    shown = [text for _, _, text in shown_strings(source)]
    assert shown == [
        "{}: use torch.softmax({}, dim=-1)",
        "a label",
        "transpose with W.T",
        "sum the weights {}",
        "use x @ W",
    ], shown
    flagged = [text for text in shown if code_in(text)]
    assert flagged == ["{}: use torch.softmax({}, dim=-1)", "transpose with W.T", "use x @ W"]


# ------------------------------------------------------------------------------------------------ issue 26
# Hidden messages diagnose in words: no expected value. One graded attempt must not tell a resubmission the
# answers (hole 11). The names a test gives its expected values: a message formatting one of them, in a hidden
# case or in a helper that hidden cases call, shows an answer, unless it sits under a test of
# checks.in_hidden_case() (what public cases may show). checks.close shows no number in hidden cases either.
EXPECTED_NAME = re.compile(
    r"^(expected|exp|want|wanted|ref|refs|reference|right|gold|truth|correct|answer|predicted|gaps)(_\w+)?$"
    r"|_(ref|reference|expected|right|gold)$"
)


def _hidden_only(node: ast.AST, parents: dict) -> bool:
    """Whether ``node`` is guarded by a test of checks.in_hidden_case() (shown in public cases only)."""
    while node in parents:
        parent = parents[node]
        if isinstance(parent, (ast.IfExp, ast.If)) and "in_hidden_case" in ast.unparse(parent.test):
            return True
        node = parent
    return False


def shown_expected_values(source: str) -> list[str]:
    """The fields of a test cell's messages (f-strings, and ``checks.say`` templates, whose Korean has the
    same fields) that format an expected value where a hidden case may show it."""
    tree = ast.parse(source)
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for fn in tree.body:
        if not isinstance(fn, ast.FunctionDef):
            continue
        flags = [k.value for d in fn.decorator_list if isinstance(d, ast.Call) for k in d.keywords]
        if any(isinstance(v, ast.Constant) and v.value is False for v in flags):
            continue  # a public case: its examples are public
        for node in ast.walk(fn):
            if _hidden_only(node, parents):
                continue
            if isinstance(node, ast.JoinedStr):
                fields = [v.value for v in node.values if isinstance(v, ast.FormattedValue)]
            elif isinstance(node, ast.Call) and ast.unparse(node.func) in ("checks.say", "say"):
                fields = [*node.args[1:], *(k.value for k in node.keywords)]  # a catalogue template's fields
            else:
                continue
            for value in fields:
                names = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
                calls = [ast.unparse(n.func) for n in ast.walk(value) if isinstance(n, ast.Call)]
                if any(EXPECTED_NAME.search(n) for n in names) or any(
                    c.startswith("attnlib.") for c in calls
                ):
                    found.append(f"{fn.name} (line {node.lineno}): {{{ast.unparse(value)}}}")
    return found


def findings(name: str, scan) -> list[str]:
    """What ``scan`` finds in each test cell of a set's master, with the question."""
    cells = master_test_cells(exercises.SOURCE_DIR / f"{name}.ipynb")
    return [f"{question} {problem}" for question, source in cells for problem in scan(source)]


@pytest.mark.parametrize("name", SETS)
def test_hidden_messages_show_no_expected_value(name):
    problems = findings(name, shown_expected_values)
    assert not problems, "hidden messages that show an expected value:\n" + "\n".join(problems)


def test_the_expected_value_scan_finds_a_leak_and_spares_a_guarded_one():
    """Positive control of the scan above."""
    leak = (
        "@test_case(points=1, hidden=True)\ndef hidden_x(f):\n    expected = 3\n"
        "    assert f() == expected, f'should be {expected}'\n"
    )
    guarded = leak.replace(
        "f'should be {expected}'", "'wrong' if checks.in_hidden_case() else f'should be {expected}'"
    )
    public = leak.replace("hidden=True", "hidden=False")
    said = leak.replace("f'should be {expected}'", "checks.say('should be {x}', x=expected)")
    assert shown_expected_values(said), "a catalogue template's field shows the expected value too"
    assert (
        shown_expected_values(leak)
        and not shown_expected_values(guarded)
        and not shown_expected_values(public)
    )


# One comparison helper for every numeric check (hole 10): ``abs(got - expected) > tol`` passes NaN, and
# torch.allclose calls infinity close to infinity. Test cells compare numbers with checks.close, checks.near
# and checks.between (attnlib.grading.compare), never with these.
def handmade_comparisons(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            name = _dotted(node.func) or ""
            if name.split(".")[-1] in ("allclose", "isclose") and not name.startswith("checks."):
                found.append(f"line {node.lineno}: {name}")
        if isinstance(node, ast.Compare):
            for side in [node.left, *node.comparators]:
                builtin = isinstance(side, ast.Call) and _dotted(side.func) == "abs"
                method = (
                    isinstance(side, ast.Call)
                    and isinstance(side.func, ast.Attribute)
                    and side.func.attr == "abs"
                    and isinstance(side.func.value, ast.BinOp)
                    and isinstance(side.func.value.op, ast.Sub)
                    and any(
                        isinstance(c, ast.Constant) and isinstance(c.value, float) for c in node.comparators
                    )
                )
                if (builtin and side.args and isinstance(side.args[0], ast.BinOp)) or method:
                    found.append(f"line {node.lineno}: {ast.unparse(node)[:80]}")
    return found


@pytest.mark.parametrize("name", SETS)
def test_every_numeric_check_uses_the_one_comparison(name):
    problems = findings(name, handmade_comparisons)
    assert not problems, "numbers compared without checks.close / near / between:\n" + "\n".join(problems)


def test_the_comparison_scan_finds_tolerances_written_by_hand():
    """Positive control of the scan above."""
    assert len(handmade_comparisons("if abs(a - b) > 1e-9:\n    pass\nok = torch.allclose(a, b)\n")) == 2
    assert not handmade_comparisons("ok = checks.near(a, b, atol=1e-9)\nmask = (t - s).abs() <= D\n")


# ------------------------------------------------------------------------------------------------ issue 27
# An unanswered question says so (item 5): every test of a question whose answer cell still holds a bare
# `...` fails, on the untouched learner notebook, with "replace the `...`", in public and hidden cases alike,
# never a raw TypeError or AttributeError from a test that went on with None. Find-the-bug questions hand out
# code that runs (no `...`), so they are not asked.
UNANSWERED = "replace the `...`"


def blank_questions(learner_nb: dict) -> set[str]:
    """The questions of a learner notebook whose answer cells hold a line that is only `...` (or
    `x = ...`)."""
    blank = set()
    for cell in learner_nb["cells"]:
        question = cell.get("metadata", {}).get("exercise", {}).get("answer")
        lines = "".join(cell["source"]).split("\n")
        if question and any(re.fullmatch(r"\s*(\w+\s*=\s*)?\.\.\.\s*", line) for line in lines):
            blank.add(question)
    return blank


def unanswered_messages_that_do_not_say_so(result, blank: set[str]) -> list[str]:
    return [
        f"{q.name} {'hidden' if c.hidden else 'public'} {c.name}: {c.message[:200]!r}"
        for q in result.questions
        if q.name in blank
        for c in q.cases
        if not c.passed and UNANSWERED not in (c.message or "")
    ]


@pytest.mark.parametrize("name", SETS)
def test_an_unanswered_question_says_replace_the_dots(graded, name):
    learner = json.loads((exercises.SOURCE_DIR.parent / f"{name}.ipynb").read_text())
    blank = blank_questions(learner)
    assert blank, f"{name}: no question of the learner notebook is left `...`"
    problems = unanswered_messages_that_do_not_say_so(graded[name]["results"]["untouched"], blank)
    assert not problems, f"tests that do not say {UNANSWERED!r}:\n" + "\n".join(problems)
