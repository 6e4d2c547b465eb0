"""Hints in tiers (issues 18 and 27): every auto-graded question helps a stuck learner one step at a time,
and no tier hands over the answer.

A question's hints are the `<details>` blocks of its Markdown cells, in order. The tiers are numbered
("Hint 1: the concept", "Hint 2: the shapes" or "where to look", "Hint 3: the key step"). Only the last
tier may show code (a fenced block, or an inline span that `test_messages.code_in` reads as code; a bare
dotted name such as `attnlib.local.local_p` is a reference, not code), only it may say "spoiler", and its
summary does not promise "the code", "the fix", "the solution" or "the answer". A learner who opens Hint 1
learns the idea and still writes the code; one who opens the last learns the step they missed and still
writes the rest:
- no hint holds more than two lines of code (each non-blank line of a fenced block that is not a comment, each
  inline code span, one more for every `;`);
- no hint's code reproduces a solution of its question: the hint's code (here every inline span but a bare
  name) and each `# BEGIN SOLUTION` block of the question are normalised (`code_runs.normalised`: renaming the
  variables hides nothing), and a hint whose longest common run with a block covers at least half of the
  block's tokens, and at least 6 of them (about half a line), reproduces it; so does a hint that holds the
  whole of a block shorter than that (set 3 q1's `return H @ s`, four tokens: a one-line answer is not given
  even in part by code).
The controls are the last tiers that were the complete solutions before issue 27, kept verbatim in
fixtures/spoiler_hints/ (set 3's four), each caught.
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from code_runs import longest_common_run, normalised, solution_blocks
from exercise_helpers import FIXTURES, SETS, exercises
from test_messages import code_in

DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
FENCED = re.compile(r"```[^\n]*\n(.*?)```", re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
DOTTED_NAME = re.compile(r"^[A-Za-z_][\w.]*$")
PROMISES_THE_ANSWER = re.compile(r"\bthe (code|fix|solution|answer)\b", re.I)
MAX_CODE_LINES = 2
MIN_RUN = 6  # tokens: about half a line of code
MIN_SHARE = 0.5  # of a solution block's tokens
OLD_SPOILERS = FIXTURES / "spoiler_hints"


def question_hints(master) -> dict[str, list[tuple[str, str]]]:
    """{question: [(summary, body), ...]} for every auto-graded question of a master, in reading order."""
    hints: dict[str, list[tuple[str, str]]] = {}
    question, manual, in_tests = None, False, False
    for cell in nbformat.read(master, as_version=4).cells:
        text = cell.source.strip()
        if cell.cell_type == "raw":
            if text.startswith("# BEGIN QUESTION"):
                options = dict(line.split(":", 1) for line in text.splitlines()[1:] if ":" in line)
                question = options["name"].strip()
                manual = options.get("manual", "").strip() == "true"
                if not manual:
                    hints[question] = []
            elif text.startswith("# END QUESTION"):
                question = None
            elif text.startswith(("# BEGIN TESTS", "# END TESTS")):
                in_tests = text.startswith("# BEGIN")
        elif cell.cell_type == "markdown" and question and not manual and not in_tests:
            hints[question] += [(s.strip(), body) for s, body in DETAILS.findall(cell.source)]
    return hints


def shows_code(body: str) -> list[str]:
    fenced = ["a fenced code block"] if "```" in body else []
    spans = [span for span in INLINE.findall(body) if not DOTTED_NAME.match(span) and code_in(span)]
    return fenced + spans


def code_pieces(body: str, every_span: bool = False) -> list[str]:
    """The code a hint shows: its fenced blocks, then its inline spans that read as code (with `every_span`,
    every inline span but a bare name: what is compared with the solutions, where a span that `code_in` does
    not read as code, `return softmax(e)`, still counts)."""
    spans = [span for span in INLINE.findall(FENCED.sub("", body)) if not DOTTED_NAME.match(span)]
    return FENCED.findall(body) + [span for span in spans if every_span or code_in(span)]


def code_lines(body: str) -> int:
    """Lines of code in a hint: non-blank, non-comment lines of its code, one more for every `;`."""
    lines = [line for piece in code_pieces(body) for line in piece.splitlines()]
    return sum(1 + line.count(";") for line in lines if line.strip() and not line.strip().startswith("#"))


def reproduces(hint: list[str], block: list[str]) -> bool:
    """Whether normalised hint code reproduces a normalised solution block (see the module's docstring)."""
    run = longest_common_run(hint, block)
    return bool(block) and (run == len(block) or (run >= MIN_RUN and run >= MIN_SHARE * len(block)))


def reproduced_blocks(body: str, blocks: list[str]) -> list[str]:
    """'block i: run of n tokens' for every solution block the hint's code reproduces."""
    hint = normalised("\n".join(code_pieces(body, every_span=True)))
    found = []
    for i, block in enumerate(normalised(b) for b in blocks):
        if reproduces(hint, block):
            found.append(f"block {i}: a run of {longest_common_run(hint, block)} of its {len(block)} tokens")
    return found


def problems(master) -> list[str]:
    found = []
    for question, tiers in question_hints(master).items():
        summaries = [summary for summary, _ in tiers]
        if len(tiers) < 3:
            found.append(
                f"{question}: {len(tiers)} hint(s) {summaries}; at least 3 tiers (concept, shapes, spoiler)"
            )
            continue
        numbered = [re.match(rf"Hint {i}\b", s) is not None for i, s in enumerate(summaries, 1)]
        if not all(numbered):
            found.append(f"{question}: the hints must be numbered Hint 1, Hint 2, ... in order: {summaries}")
        if any("spoiler" in s.lower() for s in summaries[:-1]):
            found.append(f"{question}: only the last hint may be a spoiler: {summaries}")
        if PROMISES_THE_ANSWER.search(summaries[-1]):
            found.append(f"{question}: the last hint gives the key step, not the answer: {summaries[-1]!r}")
        for summary, body in tiers[:-1]:
            if shows_code(body):
                found.append(f"{question}: {summary!r} shows code before the last tier: {shows_code(body)}")
    return found


def too_much_code(master) -> list[str]:
    return [
        f"{question}: {summary!r} holds {code_lines(body)} lines of code (at most {MAX_CODE_LINES})"
        for question, tiers in question_hints(master).items()
        for summary, body in tiers
        if code_lines(body) > MAX_CODE_LINES
    ]


def copied_solutions(master) -> list[str]:
    blocks = solution_blocks(master)
    return [
        f"{question}: {summary!r} reproduces {found}"
        for question, tiers in question_hints(master).items()
        for summary, body in tiers
        if (found := reproduced_blocks(body, blocks.get(question, [])))
    ]


@pytest.mark.parametrize("name", SETS)
def test_every_graded_question_has_hints_in_tiers(name):
    assert problems(exercises.SOURCE_DIR / f"{name}.ipynb") == []


@pytest.mark.parametrize("name", SETS)
def test_no_hint_holds_more_than_two_lines_of_code(name):
    assert too_much_code(exercises.SOURCE_DIR / f"{name}.ipynb") == []


@pytest.mark.parametrize("name", SETS)
def test_no_hint_reproduces_a_solution_of_its_question(name):
    master = exercises.SOURCE_DIR / f"{name}.ipynb"
    assert solution_blocks(master), f"{name}: no solution block found (the parser no longer reads the master)"
    assert copied_solutions(master) == []


def _old_spoilers() -> list[tuple[str, str, str]]:
    """(set, question, body) of every last tier kept from before issue 27."""
    return [
        (path.stem, question, tier["body"])
        for path in sorted(OLD_SPOILERS.glob("*.json"))
        for question, tier in json.loads(path.read_text()).items()
    ]


@pytest.mark.parametrize(("name", "question", "body"), _old_spoilers(), ids=lambda x: str(x)[:24])
def test_control_the_old_complete_solutions_are_caught(name, question, body):
    blocks = solution_blocks(exercises.SOURCE_DIR / f"{name}.ipynb")[question]
    assert code_lines(body) > MAX_CODE_LINES or reproduced_blocks(body, blocks)


def test_control_a_one_line_answer_is_caught_by_its_tokens():
    # set 3 q1's old last tier, `return H @ s`: one line, so only rule (b) can catch it
    body = json.loads((OLD_SPOILERS / "03_dot_product_attention.json").read_text())["q1"]["body"]
    assert code_lines(body) == 1
    blocks = solution_blocks(exercises.SOURCE_DIR / "03_dot_product_attention.ipynb")["q1"]
    assert reproduced_blocks(body, blocks)


def test_control_renaming_hides_no_copy_and_a_different_line_is_not_one():
    block = (
        "scores = queries @ H.transpose(-2, -1)\nweights = masked_softmax(scores, mask)\nreturn weights @ H"
    )
    renamed = "`e = q @ K.transpose(-2, -1)`, then `a = masked_softmax(e, m)` and `return a @ K`"
    assert reproduced_blocks(renamed, [block])
    assert not reproduced_blocks("`scores.transpose(-2, -1)` swaps the last two dims", [block])


def test_control_a_span_that_does_not_read_as_code_is_still_compared():
    assert code_lines("`return softmax(e)`") == 0  # not code to `code_in`: no torch name, method or operator
    assert reproduced_blocks("`return softmax(e)`", ["return softmax(scores)"])


def _master(tmp_path, hint_cells: list[str]):
    cells = [
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q1\npoints: 1"),
        *(nbformat.v4.new_markdown_cell(c) for c in hint_cells),
        nbformat.v4.new_raw_cell("# BEGIN TESTS"),
        nbformat.v4.new_markdown_cell("<details><summary>Hint 9 (spoiler)</summary>a test cell</details>"),
        nbformat.v4.new_raw_cell("# END TESTS"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
        nbformat.v4.new_raw_cell("# BEGIN QUESTION\nname: q2\npoints: 1\nmanual: true"),
        nbformat.v4.new_raw_cell("# END QUESTION"),
    ]
    path = tmp_path / "master.ipynb"
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)
    return path


def _tier(summary: str, body: str) -> str:
    return f"<details><summary>{summary}</summary>\n\n{body}\n</details>"


GOOD = [
    _tier(
        "Hint 1: the concept", "The weights are a softmax over the source positions; see `attnlib.attend`."
    ),
    _tier("Hint 2: the shapes", "Scores (B, T, S), mask (B, S): broadcast the mask over T."),
    _tier(
        "Hint 3: the key step",
        "Normalise over the last axis: ```python\nalpha = torch.softmax(e, dim=-1)\n```",
    ),
]


def test_three_tiers_with_code_only_in_the_last_pass(tmp_path):
    assert problems(_master(tmp_path, GOOD)) == []
    assert too_much_code(_master(tmp_path, GOOD)) == []
    assert list(question_hints(_master(tmp_path, GOOD))) == ["q1"]  # written answers have no hint tiers


@pytest.mark.parametrize(
    ("cells", "complaint"),
    [
        (GOOD[:2], "at least 3 tiers"),
        ([GOOD[1], GOOD[0], GOOD[2]], "numbered"),
        ([GOOD[0], _tier("Hint 2 (spoiler)", "x"), GOOD[2]], "only the last hint"),
        ([*GOOD[:2], _tier("Hint 3 (spoiler): the code", "x")], "not the answer"),
        ([GOOD[0], _tier("Hint 2: the shapes", "Use `e.masked_fill(~mask, 0)`."), GOOD[2]], "shows code"),
        ([_tier("Hint 1: the concept", "```python\nx\n```"), *GOOD[1:]], "fenced code block"),
    ],
)
def test_missing_tiers_or_early_code_are_found(tmp_path, cells, complaint):
    assert any(complaint in p for p in problems(_master(tmp_path, cells)))


@pytest.mark.parametrize(
    ("body", "lines"),
    [
        ("```python\na = 1\n\n# a comment\nb = 2\n```", 2),
        ("```python\na = 1\nb = 2\nc = 3\n```", 3),
        ("`a = x @ y`, then `b = a.sum()` and `c = b.T`", 3),
        ("`a = x.sum(); b = a.T; c = a @ b`", 3),
        ("shapes `(B, T, S)` and a name `attnlib.masked_softmax` are no code", 0),
    ],
)
def test_lines_of_code_are_counted_in_blocks_spans_and_statements(body, lines):
    assert code_lines(body) == lines


def test_a_last_tier_of_three_lines_of_code_is_too_much(tmp_path):
    long = _tier("Hint 3: the key step", "```python\na = 1\nb = 2\nc = 3\n```")
    assert too_much_code(_master(tmp_path, [*GOOD[:2], long]))
