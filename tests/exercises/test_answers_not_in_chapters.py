"""No graded answer can be copied from the chapter its set follows (issue 25, item 3).

An answer is a `# BEGIN SOLUTION` ... `# END SOLUTION` block of a master. It and the chapter's code cells are
normalised alike (code_runs.normalised: comments, strings, layout and numbers dropped, local names written
`v`, so that renaming the variables hides no copy). A block is **in the chapter** when the chapter's
normalised code holds an unbroken run of at least a quarter of the block's tokens, and at least 12 of them
(about one line of code: the shortest run that is more than a shared idiom such as `v = v @ v . T`).

The controls show the rule can fail: a chapter cell posed as an answer is caught, and so are the answers that
issue 25 found given away, kept verbatim in fixtures/given_away/ (set 4's batched additive score and its
score from cached projections, set 9's causal self-attention), each against its chapter as it is now.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from code_runs import longest_common_run, normalised, solution_blocks
from exercise_helpers import ROOT, SETS

SOURCE_DIR = ROOT / "exercises" / "source"
GIVEN_AWAY = Path(__file__).resolve().parent / "fixtures" / "given_away"
MIN_RUN = 12  # tokens
MIN_SHARE = 0.25  # of the block's tokens


def copied(block: list[str], chapter: list[str]) -> bool:
    run = longest_common_run(block, chapter)
    return run >= MIN_RUN and run >= MIN_SHARE * len(block)


def chapter_code(name: str) -> list[str]:
    """The normalised code of every code cell of the chapter (IPython magics left out)."""
    nb = nbformat.read(ROOT / "chapters" / f"{name}.ipynb", 4)
    cells = [c.source for c in nb.cells if c.cell_type == "code"]
    return normalised("\n".join(s for s in cells if not s.lstrip().startswith(("%", "!"))))


@pytest.mark.parametrize("name", SETS)
def test_no_answer_is_copied_from_its_chapter(name):
    chapter = chapter_code(name)
    blocks = solution_blocks(SOURCE_DIR / f"{name}.ipynb")
    assert blocks, f"{name}: no solution block found (the parser no longer reads the master)"
    found = [
        f"{question}, block {i}: {longest_common_run(tokens, chapter)} of {len(tokens)} tokens"
        for question, codes in blocks.items()
        for i, tokens in enumerate(normalised(code) for code in codes)
        if copied(tokens, chapter)
    ]
    assert not found, f"{name}: answers whose code the chapter shows (longest common run): {found}"


def test_control_a_chapter_cell_posed_as_an_answer_is_caught():
    nb = nbformat.read(ROOT / "chapters" / "09_self_attention.ipynb", 4)
    cell = next(c.source for c in nb.cells if c.get("id") == "my-encoder-block")
    renamed = cell.replace("self_attn", "attention").replace("x", "inputs")  # renaming hides nothing
    assert copied(normalised(renamed), chapter_code("09_self_attention"))


@pytest.mark.parametrize("path", sorted(GIVEN_AWAY.glob("*.txt")), ids=lambda p: p.stem)
def test_control_the_answers_issue_25_found_given_away_are_caught(path):
    chapter = path.stem.split("__")[0]  # <chapter name>__<question>_block<i>.txt
    assert copied(normalised(path.read_text()), chapter_code(chapter))


def test_control_an_answer_written_differently_is_not_caught():
    # the causal self-attention of set 9, written without the chapter's line of three projections
    answer = """
Q = torch.einsum("...td,kd->...tk", X, W_q)
K = torch.einsum("...td,kd->...tk", X, W_k)
e = Q @ K.transpose(-2, -1) / Q.shape[-1] ** 0.5
alpha = torch.softmax(e.masked_fill(~mask, float("-inf")), dim=-1)
return alpha @ torch.einsum("...td,kd->...tk", X, W_v), alpha
"""
    assert not copied(normalised(answer), chapter_code("09_self_attention"))
