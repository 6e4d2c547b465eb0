"""Build the graded exercise sets from their instructor sources, deterministically.

    python tools/exercises.py build            # every set in exercises/source/
    python tools/exercises.py build 03_dot_product_attention
    python tools/exercises.py check            # exit 1 if building would change a committed file (the learner
                                               # notebook's cells; nbval compares its stored outputs)
    python tools/exercises.py bundle           # only exercises/dist (the teacher's bundles): runs no
                                               # notebook, so the grader's own environment makes them

For each master ``exercises/source/NN_slug.ipynb`` (solutions, public and hidden tests; format in
exercises/teachers.md) it writes
    exercises/NN_slug.ipynb                     the learner notebook (committed), executed untouched
    attnlib/grading/public/NN_slug.json         the public tests, shipped in attnlib (grader.check in Colab)
    exercises/dist/NN_slug/autograder.zip       set.json, test files, solutions: for tools/grade.py (ignored)
    exercises/dist/NN_slug/solutions.ipynb      the learner notebook with the solutions (ignored)
    exercises/dist/NN_slug/gradescope.zip       the bundle as a Gradescope autograder (tools/gradescope.py)
"""

from __future__ import annotations

import ast
import io
import json
import re
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import gradescope
import nbformat
import numeric_env
import yaml
from nbclient import NotebookClient
from notebooks import ROOT, SETUP_TAGS, joined_streams, setup_cell_source

SOURCE_DIR = ROOT / "exercises" / "source"
LEARNER_DIR = ROOT / "exercises"
PUBLIC_DIR = ROOT / "attnlib" / "grading" / "public"
DIST_DIR = ROOT / "exercises" / "dist"
OTTER_VERSION = "7.0.0"
ANSWER_PROMPT = "_Type your answer here, replacing this text._"
# Every test file starts with these imports, so a master's test cells need not repeat them per question
# (ruff, which reads a notebook as one module, would remove the repeats).
TEST_PREAMBLE = """import torch
from otter.test_files import test_case

import attnlib
from attnlib.grading import checks"""
SOLUTION_LINE = re.compile(r"^(\s*)# (BEGIN|END) SOLUTION\s*$")
# A find-the-bug question: a GIVEN block right after a solution block holds the buggy code, commented out in
# the master; learners get it (uncommented) instead of `...`, the solutions notebook does not.
GIVEN_LINE = re.compile(r"^(\s*)# (BEGIN|END) GIVEN\s*$")
# A master cell with this tag is a predict-then-run cell: the learner writes a prediction, then runs it.
PREDICT_TAG = "predict-then-run"
# Learner cells whose outputs are not stored (the learner has not done the exercise yet, so what they print
# would be the answer): the check cell of a find-the-bug question, which runs the public tests on the buggy
# code as given, and every predict-then-run cell. nbval runs them and does not compare their outputs.
WITHHELD = {"find_the_bug": "the check of a find-the-bug question", "predict": "a predict-then-run cell"}


# What grader.check needs of otter-grader in Colab: otter without its dependencies (they would replace Colab's
# ipywidgets 7.7 by 8 and add about 40 packages, Sphinx and a headless browser among them, for the teacher's
# tools), the three small packages its checking code imports, and four common ones Colab already has (pip
# installs them only where missing). Measured: this alone runs otter.Notebook.check (tests/colab).
OTTER_CHECK_PACKAGES = [
    f"otter-grader=={OTTER_VERSION}",
    "fica==0.4.1",
    "ipylab==1.1.0",
    "python-frontmatter==1.3.0",
]
OTTER_CHECK_COMMON = ["dill", "pandas", "pyyaml", "wrapt>=1.16,<2"]
# What `pip check` then reports missing, on purpose (the Colab stand-in's test compares the two): the
# teacher's tools of otter-grader and fica, and otter's ipywidgets 8 (Colab keeps 7.7 for its front end).
OTTER_LEFT_OUT = {"click", "docutils", "jupytext", "python-on-whales", "sphinx", "ipywidgets"}


def grading_cell_source(set_name: str) -> str:
    otter, common = json.dumps(OTTER_CHECK_PACKAGES), ", ".join(json.dumps(p) for p in OTTER_CHECK_COMMON)
    left_out = ", ".join(sorted(OTTER_LEFT_OUT - {"ipywidgets"}))
    return f'''# grader.check("q1") runs the public tests of q1 (otter-grader; installed here in Colab).
import subprocess
import sys

if "google.colab" in sys.modules:  # otter-grader's checking part only: Colab keeps its own widgets
    pip = [sys.executable, "-m", "pip", "install", "-q", "--no-warn-conflicts"]
    otter = {otter}
    subprocess.run([*pip, "--no-deps", *otter], check=True)
    subprocess.run([*pip, {common}], check=True)  # installs only what is missing
    # `pip check` now lists, on purpose: {left_out} (teacher's tools), ipywidgets 8 (Colab keeps 7.7)

from attnlib import grading

grader = grading.notebook("{set_name}")'''


@dataclass
class Question:
    name: str
    points: float
    manual: bool = False
    rubric: dict | None = None  # a written answer's: ideas [[points, text]], misconceptions, alternatives
    header: list[str] = field(default_factory=list)  # test cells without a test case (imports, helpers)
    public: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    # reference helper -> JSON table of its public calls (record_references); public files carry only these
    recorded: dict[str, str] = field(default_factory=dict)
    # a find-the-bug question's ``find_the_bug: {names: [...]}``: the words that name its bug, which no
    # message of its tests may show for the code as given (tests/exercises/test_find_the_bug.py); else None
    find_the_bug: dict | None = None
    has_given: bool = False  # the learner gets buggy code (a GIVEN block), not `...`

    def test_file(
        self, set_name: str, with_hidden: bool, exempt: dict | None = None, real_references: bool = False
    ) -> str:
        parts = [
            f'"""Tests of {self.name}, exercise set {set_name} (generated by tools/exercises.py)."""',
            TEST_PREAMBLE,
            f'OK_FORMAT = False\n\nname = "{self.name}"\npoints = None',
        ]
        if exempt:  # the set's exemptions from checks.contract, for checks.call in the learner's notebook
            parts.append(f"checks.CONTRACT_EXEMPT.update({json.dumps(exempt, sort_keys=True)})")
        header = (
            self.header
            if with_hidden or real_references
            else [_replace_references(c, self.recorded) for c in self.header]
        )
        parts += header + self.public + (self.hidden if with_hidden else [])
        return "\n\n".join(p.strip() for p in parts) + "\n"

    def references(self) -> list[str]:
        return [name for cell in self.header for name, _, _ in _reference_defs(cell)]


@dataclass
class ExerciseSet:
    config: dict
    learner: nbformat.NotebookNode
    solutions: nbformat.NotebookNode
    questions: list[Question]

    @property
    def name(self) -> str:
        return self.config["name"]


def _raw_marker(cell) -> tuple[str, dict]:
    """('BEGIN QUESTION', {config}) for a RAW marker cell, ('', {}) for any other cell."""
    if cell.cell_type != "raw":
        return "", {}
    first, _, rest = cell.source.strip().partition("\n")
    return first.lstrip("# ").strip(), (yaml.safe_load(rest) or {}) if rest.strip() else {}


def _case_hidden(source: str) -> bool | None:
    """hidden=... of the @test_case in a test cell; None if the cell defines no test case."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and getattr(dec.func, "id", "") == "test_case":
                    kw = {k.arg: k.value for k in dec.keywords}
                    if "points" not in kw:
                        raise ValueError(f"test case {node.name} must give points=")
                    hidden = kw.get("hidden")
                    return bool(hidden.value) if isinstance(hidden, ast.Constant) else False
    return None


def _name_cases(source: str) -> str:
    """Give ``@test_case(...)`` the name of its function, so that reports say what failed, not "q1 - 3"."""
    names = [n.name for n in ast.walk(ast.parse(source)) if isinstance(n, ast.FunctionDef)]
    named = any(
        isinstance(n, ast.Call)
        and getattr(n.func, "id", "") == "test_case"
        and any(k.arg == "name" for k in n.keywords)
        for n in ast.walk(ast.parse(source))
    )  # a name= elsewhere in the cell (a message's field) does not name the case
    if not names or named:
        return source
    return source.replace("@test_case(", f'@test_case(name="{names[0]}", ', 1)


def _case_points(source: str) -> float:
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "test_case":
            return float(next(k.value.value for k in node.keywords if k.arg == "points"))
    return 0.0


def _uncomment(line: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    rest = line.lstrip()
    if not rest.startswith("#"):
        raise ValueError(f"a line of a GIVEN block must be commented out in the master: {line!r}")
    return indent + rest[2:] if rest.startswith("# ") else indent + rest[1:]


def _given_blocks(source: str, keep: bool) -> str:
    """Each ``# BEGIN GIVEN`` ... ``# END GIVEN`` block uncommented (``keep``, the learner's version) or left
    out (the solutions)."""
    out, inside = [], False
    for line in source.split("\n"):
        match = GIVEN_LINE.match(line)
        if match:
            if (match.group(2) == "BEGIN") == inside:
                raise ValueError("unbalanced # BEGIN GIVEN / # END GIVEN")
            inside = match.group(2) == "BEGIN"
        elif not inside:
            out.append(line)
        elif keep:
            out.append(_uncomment(line))
    if inside:
        raise ValueError("# BEGIN GIVEN without # END GIVEN")
    return "\n".join(out)


def _strip_solution(source: str) -> tuple[str, bool]:
    """Replace every ``# BEGIN SOLUTION`` ... ``# END SOLUTION`` block by ``...`` at the block's indent, or by
    the GIVEN block that follows it (a find-the-bug question: the learner gets the buggy code to fix); returns
    the learner's code and whether it had a solution block."""
    lines, out, indent, found = source.split("\n"), [], None, False
    for i, line in enumerate(lines):
        match = SOLUTION_LINE.match(line)
        if match and match.group(2) == "BEGIN":
            if indent is not None:
                raise ValueError("nested # BEGIN SOLUTION")
            indent, found = match.group(1), True
        elif match:
            if indent is None:
                raise ValueError("# END SOLUTION without # BEGIN SOLUTION")
            given = GIVEN_LINE.match(lines[i + 1]) if i + 1 < len(lines) else None
            if not (given and given.group(2) == "BEGIN"):  # else the given code stands for the answer
                out.append(f"{indent}...")
            indent = None
        elif indent is None:
            out.append(line)
    if indent is not None:
        raise ValueError("# BEGIN SOLUTION without # END SOLUTION")
    return _given_blocks("\n".join(out), keep=True), found


def _reference_defs(source: str) -> list[tuple[str, int, int]]:
    """(name, first line, last line) of every top-level function marked ``@checks.reference``."""
    found = []
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef):
            marks = [d for d in node.decorator_list if ast.unparse(d) in ("checks.reference", "reference")]
            if marks:
                found.append((node.name, min(d.lineno for d in node.decorator_list), node.end_lineno))
    return found


def _replace_references(source: str, recorded: dict[str, str]) -> str:
    """A public test cell with each reference helper replaced by its recorded table (``checks.recorded``)."""
    lines = source.split("\n")
    for name, first, last in sorted(_reference_defs(source), key=lambda d: -d[1]):
        if name not in recorded:
            raise ValueError(f"reference {name} was not recorded: run tools/exercises.py build")
        lines[first - 1 : last] = [f"{name} = checks.recorded({name!r}, {recorded[name]!r})"]
    return "\n".join(lines)


def record_references(name: str) -> dict[str, dict[str, str]]:
    """{question: {reference: table}}: what each ``@checks.reference`` helper gives for the calls the public
    tests make when run on the solutions. Run in a fresh process under the pinned numeric environment (the
    tables are part of a committed file), which also checks that the public tests, with the tables in place of
    the helpers, pass on the solutions."""
    import subprocess

    if not any(q.references() for q in parse(SOURCE_DIR / f"{name}.ipynb").questions):
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "recorded.json"
        code = (
            f"import sys; sys.path.insert(0, {str(ROOT / 'tools')!r}); import numeric_env; "
            f"numeric_env.apply(); import exercises; exercises._record({name!r}, {str(out)!r})"
        )
        run = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp, env=_record_env()
        )
        if run.returncode != 0:
            raise RuntimeError(f"recording the references of {name} failed:\n{run.stderr[-3000:]}")
        return json.loads(out.read_text())


def _record_env() -> dict[str, str]:
    import os

    return {**os.environ, "MPLBACKEND": "Agg"}


def _public_cases(source: str, path: str) -> tuple[dict, list]:
    from otter.test_files.exception_test import test_case

    space: dict = {"__name__": path}
    exec(compile(source, path, "exec"), space)
    return space, [v for v in space.values() if isinstance(v, test_case)]


def _record(name: str, out: str) -> None:
    import contextlib
    import os

    from attnlib.grading import checks

    ex = parse(SOURCE_DIR / f"{name}.ipynb")
    solutions: dict = {"__name__": "__main__"}
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
        for cell in ex.solutions.cells:
            if cell.cell_type == "code" and not cell.source.startswith("grader.check"):
                exec(compile(cell.source, "<solution cell>", "exec"), solutions)
        result = {}
        for q in ex.questions:
            if q.manual or not q.references():
                continue
            public = q.test_file(
                name, with_hidden=False, exempt=ex.config.get("contract_exempt"), real_references=True
            )
            space, cases = _public_cases(public, f"{q.name}.py")
            tables: dict[str, list] = {ref: [] for ref in q.references()}

            def recorder(ref, real, tables=tables):
                def record(*args, **kwargs):
                    entry = {
                        "args": [checks.to_data(a) for a in args],
                        "kwargs": {k: checks.to_data(v) for k, v in kwargs.items()},
                    }
                    value = real(*args, **kwargs)
                    entry["value"] = checks.to_data(value)
                    if entry not in tables[ref]:
                        tables[ref].append(entry)
                    return value

                return record

            for ref in tables:
                space[ref] = recorder(ref, space[ref])
            for case in cases:
                case.test_func(*[solutions.get(p) for p in case._get_func_params()])
            q.recorded = {ref: json.dumps(calls, sort_keys=True) for ref, calls in tables.items()}
            result[q.name] = q.recorded
            # the public file as it ships: the tables alone must let the solutions pass
            shipped = q.test_file(name, with_hidden=False, exempt=ex.config.get("contract_exempt"))
            _, shipped = _public_cases(shipped, f"{q.name}.py")
            for case in shipped:
                case.test_func(*[solutions.get(p) for p in case._get_func_params()])
    Path(out).write_text(json.dumps(result))


def _keep_solution(source: str) -> str:
    source = _given_blocks(source, keep=False)
    return "\n".join(line for line in source.split("\n") if not SOLUTION_LINE.match(line))


def parse(master_path: Path) -> ExerciseSet:
    master = nbformat.read(master_path, as_version=4)
    config: dict | None = None
    learner_cells, solution_cells, questions = [], [], []
    question: Question | None = None
    state = "text"  # text | tests | solution
    for cell in master.cells:
        marker, options = _raw_marker(cell)
        if marker == "EXERCISE SET":
            config = options
        elif marker == "BEGIN QUESTION":
            question = Question(str(options["name"]), float(options["points"]), bool(options.get("manual")))
            question.rubric = options.get("rubric")
            question.find_the_bug = options.get("find_the_bug")
            questions.append(question)
        elif marker == "END QUESTION":
            _check_find_the_bug(question, master_path.name)
            if question is not None and question.manual:
                solution_cells.append(_new_cell("markdown", rubric_markdown(question, master_path.name)))
            question = None
        elif marker == "BEGIN TESTS":
            state = "tests"
        elif marker == "END TESTS":
            state = "text"
            check = nbformat.v4.new_code_cell(f'grader.check("{question.name}")')
            solution_cells.append(nbformat.v4.new_code_cell(check.source))
            learner_cells.append(_withhold(check, "find_the_bug") if question.find_the_bug else check)
        elif marker == "BEGIN SOLUTION":
            state = "solution"
        elif marker == "END SOLUTION":
            state = "text"
        elif cell.cell_type == "raw":
            raise ValueError(f"{master_path.name}: unknown RAW marker {cell.source[:40]!r}")
        elif state == "tests":
            hidden = _case_hidden(cell.source)
            target = question.header if hidden is None else question.hidden if hidden else question.public
            target.append(_name_cases(cell.source))
        elif state == "solution":  # a whole solution cell: learners get an empty answer cell of the same kind
            solution_cells.append(_new_cell(cell.cell_type, cell.source))
            prompt = ANSWER_PROMPT if cell.cell_type == "markdown" else "..."
            learner_cells.append(
                _new_cell(cell.cell_type, prompt, answer=question.name if question else None)
            )
        else:
            stripped, had_solution = (
                _strip_solution(cell.source) if cell.cell_type == "code" else (cell.source, False)
            )
            answer = question.name if (question and had_solution) else None
            if (
                question
                and cell.cell_type == "code"
                and any(GIVEN_LINE.match(x) for x in cell.source.split("\n"))
            ):
                question.has_given = True
            render = cell.metadata.get("mystnb")  # how the website shows its outputs (a figure's alt text)
            learner = _new_cell(cell.cell_type, stripped, answer=answer, render=render)
            if PREDICT_TAG in cell.metadata.get("tags", []):
                if cell.cell_type != "code":
                    raise ValueError(
                        f"{master_path.name}: the {PREDICT_TAG} tag belongs on the code cell to run"
                    )
                learner = _withhold(learner, "predict")
            learner_cells.append(learner)
            solution = _keep_solution(cell.source)
            solution_cells.append(_new_cell(cell.cell_type, solution, answer=answer, render=render))
    if config is None:
        raise ValueError(f"{master_path.name}: no '# EXERCISE SET' RAW cell")
    if config["name"] != master_path.stem:
        raise ValueError(f"{master_path.name}: set name {config['name']!r} must be the file name")
    for q in questions:
        if not q.manual:
            total = sum(_case_points(c) for c in q.public + q.hidden)
            if abs(total - q.points) > 1e-9:
                raise ValueError(f"{q.name}: its test cases give {total} points, the question {q.points}")
    for name, rules in (config.get("contract_exempt") or {}).items():
        if name not in config.get("names", []) or not set(rules) <= {"mutation", "repeat", "dtype"}:
            raise ValueError(f"contract_exempt: {name}: {rules} (rules: mutation, repeat, dtype)")
    config["questions"] = [
        {"name": q.name, "points": q.points, "manual": q.manual, **({"rubric": q.rubric} if q.manual else {})}
        for q in questions
    ]
    return ExerciseSet(
        config, _notebook(config["name"], learner_cells), _notebook(config["name"], solution_cells), questions
    )


def _check_find_the_bug(q: Question | None, master: str) -> None:
    """A question that gives buggy code declares ``find_the_bug`` with the words that name its bug, and only
    such a question does: the learner notebook withholds its check's output, and the tests read the words."""
    if q is None or bool(q.find_the_bug) == q.has_given:
        if q is not None and q.find_the_bug and not (q.find_the_bug.get("names") or []):
            raise ValueError(f"{master}: {q.name}: find_the_bug needs names: [the words that name the bug]")
        return
    if q.has_given:
        raise ValueError(
            f"{master}: {q.name} gives buggy code (# BEGIN GIVEN): declare find_the_bug: {{names: [...]}}"
        )
    raise ValueError(f"{master}: {q.name} declares find_the_bug but gives no buggy code (# BEGIN GIVEN)")


def _withhold(cell, why: str):
    """Mark a learner cell whose outputs the committed notebook does not store (``WITHHELD``)."""
    cell.metadata.setdefault("exercise", {})["withheld"] = why
    cell.metadata["tags"] = ["nbval-ignore-output"]  # nbval runs it but compares no stored output
    return cell


def withheld(cell) -> str | None:
    """Why this learner cell stores no outputs (a key of ``WITHHELD``), or None."""
    return cell.get("metadata", {}).get("exercise", {}).get("withheld")


def rubric_markdown(q: Question, master: str) -> str:
    """The rubric of a written answer, for the teacher (solutions.ipynb): points per idea, the common
    misconceptions, what else is accepted. Every written answer has one; its ideas add up to its points."""
    rubric = q.rubric or {}
    ideas = rubric.get("ideas") or []
    if not ideas or abs(sum(float(p) for p, _ in ideas) - q.points) > 1e-9:
        raise ValueError(f"{master}: {q.name} needs a rubric whose ideas add up to its {q.points:g} points")
    lines = [f"**Rubric of {q.name}** (for the teacher; {q.points:g} points)", ""]
    lines += [f"- ({float(p):g}) {idea}" for p, idea in ideas]
    for title, key in (("Common misconceptions", "misconceptions"), ("Also accepted", "alternatives")):
        if rubric.get(key):
            lines += ["", f"*{title}:*", ""] + [f"- {text}" for text in rubric[key]]
    return "\n".join(lines)


def _new_cell(kind: str, source: str, answer: str | None = None, render: dict | None = None):
    cell = {"code": nbformat.v4.new_code_cell, "markdown": nbformat.v4.new_markdown_cell}[kind](source)
    if answer:
        cell.metadata["exercise"] = {"answer": answer}  # lets tests and teachers find the answer cells
    if render:
        cell.metadata["mystnb"] = render  # the master's rendering options, e.g. {"image": {"alt": ...}}
    return cell


def _notebook(set_name: str, cells: list) -> nbformat.NotebookNode:
    setup = nbformat.v4.new_code_cell(setup_cell_source(), metadata={"tags": list(SETUP_TAGS)})
    grading = nbformat.v4.new_code_cell(grading_cell_source(set_name))
    nb = nbformat.v4.new_notebook(cells=[setup, grading, *cells])
    nb.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    nb.cells[0]["id"], nb.cells[1]["id"] = "setup-cell", "grading-cell"
    for i, cell in enumerate(nb.cells[2:], start=1):
        cell["id"] = f"cell-{i:03d}"  # fixed ids: rebuilding an unchanged set changes no byte
    return nb


def execute(nb: nbformat.NotebookNode, name: str) -> nbformat.NotebookNode:
    """Run the (untouched) learner notebook alone in an empty folder, as a learner would."""
    nb = nbformat.from_dict(json.loads(json.dumps(nb)))
    with tempfile.TemporaryDirectory() as tmp:
        numeric_env.apply()  # the kernel inherits it: the stored outputs are made under it
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": tmp}}, record_timing=False
        ).execute()
    for cell in nb.cells:
        cell.get("metadata", {}).pop("execution", None)
        if withheld(cell):  # it ran (an error would stop the build) but what it printed is not stored
            cell.outputs, cell.execution_count = [], None
    nb.metadata["language_info"] = {"name": "python"}  # no interpreter version: the file stays the same
    return joined_streams(nb)


def public_tests_json(ex: ExerciseSet) -> str:
    exempt = ex.config.get("contract_exempt")
    tests = {
        f"{q.name}.py": q.test_file(ex.name, with_hidden=False, exempt=exempt)
        for q in ex.questions
        if not q.manual
    }
    return (
        json.dumps({"set": ex.name, "otter_grader": OTTER_VERSION, "tests": tests}, indent=1, sort_keys=True)
        + "\n"
    )


def autograder_zip(ex: ExerciseSet) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:

        def add(name: str, text: str) -> None:
            info = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, text)

        add("set.json", json.dumps(ex.config, indent=1, sort_keys=True) + "\n")
        for q in ex.questions:
            if not q.manual:
                add(f"tests/{q.name}.py", q.test_file(ex.name, True, ex.config.get("contract_exempt")))
        # the reference solution: the grader's self-check grades it in the sandbox before every run
        add("solutions.ipynb", nbformat.writes(ex.solutions))
    return buffer.getvalue()


def _cells(text: str) -> list[tuple[str, str, dict]]:
    """What a learner notebook says, without what running it printed."""
    return [(c.cell_type, c.source, c.get("metadata", {})) for c in nbformat.reads(text, 4).cells]


def build(master: Path, check: bool = False) -> list[str]:
    """Write (or with check=True, compare) every output of one set; returns the paths that differ."""
    ex = parse(master)
    recorded = record_references(ex.name)
    for q in ex.questions:
        q.recorded = recorded.get(q.name, {})
    outputs = {PUBLIC_DIR / f"{ex.name}.json": public_tests_json(ex)}
    differ = [p for p, text in outputs.items() if not p.is_file() or p.read_text() != text]
    if not check:
        for path, text in outputs.items():
            path.write_text(text)
    learner_path = LEARNER_DIR / f"{ex.name}.ipynb"
    if check:  # the cells only: nbval re-executes the committed notebook and compares its outputs
        built = _cells(nbformat.writes(ex.learner))
        if not learner_path.is_file() or _cells(learner_path.read_text()) != built:
            differ.append(learner_path)
    else:
        learner_text = nbformat.writes(execute(ex.learner, ex.name)) + "\n"
        if not learner_path.is_file() or learner_path.read_text() != learner_text:
            differ.append(learner_path)
            learner_path.write_text(learner_text)
    if not check:
        write_dist(ex)
    return [str(p.relative_to(ROOT)) for p in differ]


def write_dist(ex: ExerciseSet) -> Path:
    """exercises/dist/<set>/: the bundle that tools/grade.py reads, the solutions notebook and the bundle as a
    Gradescope autograder."""
    dist = DIST_DIR / ex.name
    shutil.rmtree(dist, ignore_errors=True)
    dist.mkdir(parents=True)
    bundle = autograder_zip(ex)
    (dist / "autograder.zip").write_bytes(bundle)
    (dist / "gradescope.zip").write_bytes(gradescope.gradescope_zip(bundle))
    nbformat.write(ex.solutions, dist / "solutions.ipynb")
    return dist


def submission(
    set_name: str,
    answers: dict[str, str] | None = None,
    cells_before: list[str] = (),
    cells_after: list[str] = (),
    untouched: bool = False,
) -> nbformat.NotebookNode:
    """A submission for tests and benchmarks: the solutions (or the untouched learner notebook) with some
    answer
    cells replaced, and extra code cells before the first answer and at the end."""
    ex = parse(SOURCE_DIR / f"{set_name}.ipynb")
    nb = ex.learner if untouched else ex.solutions
    first = next(i for i, c in enumerate(nb.cells) if c.metadata.get("exercise"))
    for cell in nb.cells:
        question = cell.metadata.get("exercise", {}).get("answer")
        if cell.cell_type == "code" and question in (answers or {}):
            cell.source = answers[question]
    nb.cells[first:first] = [nbformat.v4.new_code_cell(c) for c in cells_before]
    nb.cells += [nbformat.v4.new_code_cell(c) for c in cells_after]
    return nb


def masters(names: list[str]) -> list[Path]:
    found = sorted(SOURCE_DIR.glob("*.ipynb"))
    if names:
        found = [p for p in found if p.stem in names or p.stem[:2] in names]
    return found


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in ("build", "check", "bundle"):
        print(__doc__)
        return 2
    if argv[0] == "bundle":
        for master in masters(argv[1:]):
            dist = write_dist(parse(master))
            print(f"{master.relative_to(ROOT)}: {(dist / 'autograder.zip').relative_to(ROOT)}", flush=True)
        return 0
    check = argv[0] == "check"
    stale = []
    for master in masters(argv[1:]):
        changed = build(master, check=check)
        stale += changed
        print(
            f"{master.relative_to(ROOT)}: {'up to date' if not changed else ', '.join(changed)}", flush=True
        )
    if check and stale:
        print("out of date: run python tools/exercises.py build")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
