"""Hints in tiers (issue 18): every auto-graded question helps a stuck learner one step at a time.

A question's hints are the `<details>` blocks of its Markdown cells, in order. The tiers are numbered
("Hint 1: the concept", "Hint 2: the shapes" or "where to look", ...) and the last one, and only the last,
says "spoiler" in its summary: only that tier may show code (a fenced block, or an inline span that
`test_messages.code_in` reads as code; a bare dotted name such as `attnlib.local.local_p` is a reference,
not code). A learner who opens Hint 1 learns the idea and still writes the code.
"""

from __future__ import annotations

import re

import nbformat
import pytest
from exercise_helpers import SETS, exercises
from test_messages import code_in

DETAILS = re.compile(r"<details>\s*<summary>(.*?)</summary>(.*?)</details>", re.S)
INLINE = re.compile(r"(?<!`)`([^`\n]+)`(?!`)")
DOTTED_NAME = re.compile(r"^[A-Za-z_][\w.]*$")


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
        spoilers = [i for i, s in enumerate(summaries) if "spoiler" in s.lower()]
        if spoilers != [len(tiers) - 1]:
            found.append(f"{question}: only the last hint is the spoiler: {summaries}")
        for summary, body in tiers[:-1]:
            if shows_code(body):
                found.append(f"{question}: {summary!r} shows code before the spoiler: {shows_code(body)}")
    return found


@pytest.mark.parametrize("name", SETS)
def test_every_graded_question_has_hints_in_tiers(name):
    assert problems(exercises.SOURCE_DIR / f"{name}.ipynb") == []


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
    _tier("Hint 3 (spoiler): the code", "```python\nalpha = torch.softmax(e, dim=-1)\n```"),
]


def test_three_tiers_with_code_only_in_the_spoiler_pass(tmp_path):
    assert problems(_master(tmp_path, GOOD)) == []
    assert list(question_hints(_master(tmp_path, GOOD))) == ["q1"]  # written answers have no hint tiers


@pytest.mark.parametrize(
    ("cells", "complaint"),
    [
        (GOOD[:2], "at least 3 tiers"),
        ([GOOD[1], GOOD[0], GOOD[2]], "numbered"),
        ([GOOD[0], _tier("Hint 2 (spoiler)", "x"), GOOD[2]], "only the last hint"),
        ([GOOD[0], _tier("Hint 2: the shapes", "Use `e.masked_fill(~mask, 0)`."), GOOD[2]], "shows code"),
        ([_tier("Hint 1: the concept", "```python\nx\n```"), *GOOD[1:]], "fenced code block"),
    ],
)
def test_missing_tiers_or_early_code_are_found(tmp_path, cells, complaint):
    assert any(complaint in p for p in problems(_master(tmp_path, cells)))
