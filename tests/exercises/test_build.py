"""The build command: deterministic, leak-free learner notebooks that start with the standard cells."""

import json
import re

import nbformat
import pytest
from exercise_helpers import ROOT, SETS, exercises
from notebooks import setup_cell_in_sync


@pytest.mark.slow  # builds every file of the set again (3 s a set)
@pytest.mark.parametrize("name", SETS)
def test_rebuilding_changes_no_committed_file(name):
    assert exercises.build(exercises.SOURCE_DIR / f"{name}.ipynb", check=True) == []


@pytest.mark.parametrize("name", SETS)
def test_learner_notebook_has_no_solution_or_hidden_test_text(name):
    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    learner = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4)
    public = json.loads((ROOT / "attnlib" / "grading" / "public" / f"{name}.json").read_text())["tests"]
    shipped = "\n".join([c.source for c in learner.cells] + list(public.values()))
    shipped_lines = {line.strip() for line in shipped.split("\n")}
    master = nbformat.read(exercises.SOURCE_DIR / f"{name}.ipynb", 4)
    secret_lines, public_lines = [], set()
    for cell in master.cells:  # every line between solution markers that occurs nowhere else in the master
        inside = given = False
        for line in cell.source.split("\n"):
            if exercises.SOLUTION_LINE.match(line):
                inside = "BEGIN" in line
            elif exercises.GIVEN_LINE.match(line):  # a find-the-bug question's buggy code, shown to learners
                given = "BEGIN" in line
            elif given:
                public_lines.add(exercises._uncomment(line).strip())
            elif line.strip():
                (secret_lines.append if inside else public_lines.add)(line.strip())
    secret_lines = [line for line in secret_lines if line not in public_lines]
    whole = [
        c.source
        for c in exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb").solutions.cells
        if c.cell_type == "markdown" and c.source.startswith("*Answer.*")
    ]
    open_tests = {
        line.strip() for q in ex.questions for cell in q.header + q.public for line in cell.split("\n")
    }
    hidden = [
        line.strip()
        for q in ex.questions
        for case in q.hidden
        for line in case.split("\n")
        if line.strip() and line.strip() not in open_tests
    ]
    hidden_names = [m for q in ex.questions for case in q.hidden for m in re.findall(r"def (\w+)", case)]
    assert secret_lines and hidden and hidden_names
    leaks = [line for line in secret_lines + hidden if line in shipped_lines]
    leaks += [text for text in whole + hidden_names if text in shipped]
    assert not leaks, f"solution or hidden test text in the learner notebook or public tests: {leaks[:5]}"
    assert "hidden=True" not in shipped


@pytest.mark.parametrize("name", SETS)
def test_learner_notebook_starts_with_setup_then_grading_cell(name):
    nb = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4)
    assert setup_cell_in_sync(nb)
    assert nb.cells[1].source == exercises.grading_cell_source(name)
    assert len(nb.cells[1].source.split("\n")) <= 14  # short: the light otter install takes two pip lines


@pytest.mark.parametrize("name", SETS)
def test_every_question_has_a_check_cell_and_hidden_tests(name):
    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    sources = [c.source for c in nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4).cells]
    auto = [q for q in ex.questions if not q.manual]
    # at most 7: set 9's six (five auto-graded, one written) and its learner-written test (issue 27)
    assert 3 <= len(ex.questions) <= 7 and any(q.manual for q in ex.questions)
    for q in auto:
        assert f'grader.check("{q.name}")' in sources
        assert q.public and q.hidden, f"{q.name} needs public and hidden tests"


def test_the_learner_package_holds_no_grader():
    """attnlib ships what grader.check needs (public tests, checks); the sandbox and the grading command are
    the teacher's own package, grader/attnlib_grader."""
    package = ROOT / "attnlib"
    assert sorted(p.name for p in (package / "grading").glob("*.py")) == [
        "__init__.py",
        "checks.py",  # the assertions, and the re-exports of the modules below
        "compare.py",  # the one comparison of every numeric check
        "contract.py",
        "implementations.py",  # the table of each equation's implementations, which sets switch off
        "learner_tests.py",  # running a test the learner wrote against an implementation it can only call
        "loop_probes.py",  # set 5 q6: short runs of the learner's loop whose right result the grader knows
        "maps.py",  # properties of attention maps that answers are read off
        "messages.py",  # the messages in the learner's language (catalogue messages_ko.json)
        "recorded.py",
        "results.py",  # otter's lines around the messages, in the learner's language
        "stepwise.py",  # set 5 q4: the decoder around the learner's step, its task, budget and thresholds
        "tracing.py",
        "training_loop.py",  # set 5 q6: the model and data the learner's train_loop runs on, what it did
    ]
    sources = [p.read_text() for p in package.rglob("*.py")]
    assert not [s for s in sources if re.search(r"^\s*(from|import) attnlib_grader", s, re.M)]
    assert not [s for s in sources if "bwrap" in s or "setns" in s]
    assert (ROOT / "grader" / "attnlib_grader" / "isolation.py").is_file()


@pytest.mark.parametrize("name", SETS)
def test_every_set_switches_off_equations_of_the_table(name):
    """A set names equations (attnlib.grading.implementations), never dotted paths: a misspelt name would
    switch nothing off, silently."""
    from attnlib.grading.implementations import EQUATIONS

    switch_off = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb").config.get("switch_off", [])
    assert switch_off and not [e for e in switch_off if e not in EQUATIONS]


def test_every_implementation_in_the_table_resolves_to_a_function_or_class():
    """A moved or misspelt path, or an operator this torch does not have, would switch nothing off."""
    import inspect

    import torch
    from attnlib_grader.switching import resolve

    from attnlib.grading.implementations import EQUATIONS

    ops = {
        n.split("::")[1].split(".")[0]
        for n in torch._C._dispatch_get_all_op_names()
        if n.startswith("aten::")
    }
    paths = {d for e in EQUATIONS.values() for d in e.implementations}
    unresolved = sorted(d for d in paths if not callable(resolve(d)) or inspect.ismodule(resolve(d)))
    unknown = sorted({op for e in EQUATIONS.values() for op in e.operators} - ops)
    assert not unresolved and not unknown, (unresolved, unknown)


def test_switched_off_lists_hold_every_road_to_attention_in_attnlib():
    """The sets whose questions attention machinery would answer switch off the newer fast paths too
    (attnlib.chunked_additive forms additive weights and, from them, scores; shifted_causal_mask(T, 0) is
    causal_mask(T); cross_attention and MultiHeadAttention are self-attention given X twice)."""
    from attnlib_grader.switching import resolve_equations

    configs = {p.stem[:2]: exercises.parse(p).config for p in exercises.masters([])}
    fast_path = [
        "attnlib.chunked_additive.additive_attend",
        "attnlib.chunked_additive.additive_attend_from_projections",
        "attnlib.chunked_additive._AdditiveAttention",
        "attnlib.chunked_additive._hidden",
    ]
    for number in ("03", "04", "05", "06", "07", "09"):
        dotted = resolve_equations(configs[number]["switch_off"])[0]
        assert not [d for d in fast_path if d not in dotted], number
    transformer = [
        "attnlib.transformer.shifted_causal_mask",
        "attnlib.transformer.cross_attention",
        "attnlib.transformer.MultiHeadAttention",
        "torch.nn.functional.scaled_dot_product_attention",
        "torch.nn.attention.flex_attention.flex_attention",
    ]
    dotted, operators = resolve_equations(configs["09"]["switch_off"])
    assert not [d for d in transformer if d not in dotted]
    assert "_scaled_dot_product_flash_attention_for_cpu" in operators


@pytest.mark.parametrize("name", SETS)
def test_every_written_answer_has_a_rubric_in_the_solutions_and_the_bundle(name):
    """Points per idea that add up to the question's points, shown to the teacher in solutions.ipynb and kept
    in the bundle (grade.py writes it into each feedback file); never in the learner's notebook."""
    from attnlib_grader.report import inert

    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    manual = [q for q in ex.questions if q.manual]
    assert manual
    solutions = "\n".join(c.source for c in ex.solutions.cells)
    learner = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4)
    for q in manual:
        ideas = q.rubric["ideas"]
        assert len(ideas) >= 2 and sum(float(p) for p, _ in ideas) == pytest.approx(q.points)
        assert q.rubric.get("misconceptions") and q.rubric.get("alternatives")
        assert f"**Rubric of {q.name}**" in solutions
        assert all(inert(idea, "  ") in solutions for _, idea in ideas)
        assert not any(idea in c.source for _, idea in ideas for c in learner.cells)
        assert next(c for c in ex.config["questions"] if c["name"] == q.name)["rubric"] == q.rubric


@pytest.mark.parametrize("name", SETS)
def test_every_auto_graded_question_has_a_rubric_of_its_own_tests_in_the_solutions_and_the_bundle(name):
    """Issue 27: for each auto-graded question, which tests carry which points, and why: every test that
    carries points, with the points it declares (they add up to the question's), in solutions.ipynb and in
    the bundle (each feedback file shows it), rendered by the grader's one renderer; not in the learner's
    notebook."""
    from attnlib_grader.report import rubric_lines

    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    solutions = [c.source for c in ex.solutions.cells if c.cell_type == "markdown"]
    learner = "\n".join(c.source for c in nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4).cells)
    for q in [q for q in ex.questions if not q.manual]:
        tests = q.rubric["tests"]
        assert sum(points for _, points, _ in tests) == pytest.approx(q.points)
        assert all(points > 0 and len(why) > 10 for _, points, why in tests)
        cell = next(s for s in solutions if s.startswith(f"**Rubric of {q.name}**"))
        assert cell.split("\n", 2)[2] == "\n".join(rubric_lines(q.rubric, q.points)).rstrip()
        assert not any(why in learner for _, _, why in tests if len(why) > 40)
        assert next(c for c in ex.config["questions"] if c["name"] == q.name)["rubric"] == q.rubric


def _master_with_rubric(tmp_path, rubric_yaml: str):
    source = exercises.SOURCE_DIR / "03_dot_product_attention.ipynb"
    nb = nbformat.read(source, 4)
    cell = next(c for c in nb.cells if c.cell_type == "raw" and "BEGIN QUESTION" in c.source)
    cell.source = cell.source.split("\n# rubric")[0] + "\n" + rubric_yaml
    path = tmp_path / source.name
    nbformat.write(nb, path)
    return path


@pytest.mark.parametrize(
    "rubric, named",
    [
        ("", "missing ['hidden_random_shapes', 'hidden_keeps_float64', 'hidden_one_feature']"),
        (
            "rubric:\n  tests:\n    hidden_random_shapes: the scores\n    hidden_keeps_float64: float64 kept",
            "missing ['hidden_one_feature']",
        ),
        (
            "rubric:\n  tests:\n    hidden_random_shapes: a\n    hidden_keeps_float64: b\n"
            "    hidden_one_feature: c\n    hidden_no_such_test: d",
            "unknown ['hidden_no_such_test']",
        ),
    ],
)
def test_a_master_whose_rubric_misses_or_invents_a_test_is_refused(tmp_path, rubric, named):
    with pytest.raises(ValueError, match="q1's rubric must say why") as refused:
        exercises.parse(_master_with_rubric(tmp_path, rubric))
    assert named in str(refused.value)


@pytest.mark.parametrize(
    "rubric, named",
    [
        (  # the old table's shape: a list of [test, points, why]
            "rubric:\n  tests:\n    - [hidden_random_shapes, 1, the scores]",
            "03_dot_product_attention.ipynb: q1's rubric: tests must map each test to why (test: text), "
            "not a list",
        ),
        (  # points where the why goes: the points are the test case's own
            "rubric:\n  tests:\n    hidden_random_shapes: 0.5\n    hidden_keeps_float64: b\n"
            "    hidden_one_feature: c",
            "q1's rubric: hidden_random_shapes: write why as text (its points are the test case's own: 1), "
            "not 0.5",
        ),
        (
            "rubric:\n  tests:\n    hidden_random_shapes: a\n    hidden_keeps_float64: b\n"
            "    hidden_one_feature: c\n  exmaples: right 2",
            "q1's rubric has ['exmaples']: an auto-graded question's takes ['examples', 'note', 'tests']",
        ),
    ],
)
def test_a_master_whose_rubric_is_not_a_table_of_its_tests_and_why_is_refused(tmp_path, rubric, named):
    """A clear error naming the set, the question and what is wrong, never a TypeError or a key dropped."""
    with pytest.raises(ValueError) as refused:
        exercises.parse(_master_with_rubric(tmp_path, rubric))
    assert named in str(refused.value)


def test_a_given_block_replaces_the_answer_for_learners_only():
    """A find-the-bug question: the learner gets the buggy code (uncommented), the solutions the fix."""
    source = "def f(x):\n    # BEGIN SOLUTION\n    return x + 1\n    # END SOLUTION\n    # BEGIN GIVEN\n"
    source += "    # return x - 1  # the bug\n    # END GIVEN"
    learner, had_solution = exercises._strip_solution(source)
    assert had_solution and learner == "def f(x):\n    return x - 1  # the bug"
    assert exercises._keep_solution(source) == "def f(x):\n    return x + 1"


def test_a_master_cells_rendering_options_reach_the_learner_and_the_solutions():
    """Set 8 shows a figure in a given cell: its alt text (metadata mystnb.image.alt) reaches the website."""
    ex = exercises.parse(exercises.SOURCE_DIR / "08_translation.ipynb")
    master = nbformat.read(exercises.SOURCE_DIR / "08_translation.ipynb", 4)
    shown = [c for c in master.cells if c.metadata.get("mystnb", {}).get("image", {}).get("alt")]
    assert shown  # the figure of a wrong translation
    for cell in shown:
        for built in (ex.learner, ex.solutions):
            (copy,) = [c for c in built.cells if c.source == cell.source]
            assert copy.metadata["mystnb"] == cell.metadata["mystnb"]


FIND_THE_BUG = {"04_bahdanau_attention": "q3", "06_score_functions": "q1", "07_matrix_form": "q2"}


@pytest.mark.parametrize("name", sorted(set(FIND_THE_BUG) & set(SETS)))
def test_find_the_bug_questions_hand_out_code_that_runs(name):
    """At least three sets hand the learner a plausible implementation with a typical mistake: the answer cell
    is code, not `...` (test_hostile checks that it passes no public test; test_grading that it scores 0)."""
    learner = nbformat.read(ROOT / "exercises" / f"{name}.ipynb", 4)
    cells = [c for c in learner.cells if c.metadata.get("exercise", {}).get("answer") == FIND_THE_BUG[name]]
    blank = [line for c in cells for line in c.source.split("\n") if line.strip() == "..."]
    assert cells and all("return" in c.source for c in cells) and not blank
    assert "find the bug" in "\n".join(c.source for c in learner.cells).lower()


def test_a_case_is_named_after_its_function_even_when_a_message_has_a_name_field():
    """A ``name=`` in a message's fields (``checks.say("{name} ...", name=n)``) does not name the case: only
    ``@test_case(name=...)`` does (a case named "q4 - 1" tells the learner nothing)."""
    source = '@test_case(points=1, hidden=False)\ndef a_case(f):\n    checks.say("{name}", name="x")\n'
    assert '@test_case(name="a_case", points=1' in exercises._name_cases(source)
    named = source.replace("@test_case(", '@test_case(name="given", ')
    assert exercises._name_cases(named) == named
