"""_ext/hide_bookkeeping.py: the website shows a cell's code without the book's glue() and claim() calls."""

import json
import sys

from notebooks import ROOT

sys.path.insert(0, str(ROOT / "_ext"))
from hide_bookkeeping import strip_bookkeeping, strip_notebook  # noqa: E402


def test_glue_and_claim_statements_are_removed_and_the_maths_kept():
    source = 'ratio = a / b\nglue("ratio", ratio, display=False)\nclaim(ratio > 1, "a beats b")\nprint(ratio)'
    assert strip_bookkeeping(source) == "ratio = a / b\nprint(ratio)"


def test_a_call_over_several_lines_goes_whole():
    source = 'x = 1\nnotebook.claim_ranked(\n    results,\n    ["dot", "general"],\n    "dot wins",\n)\ny = 2'
    assert strip_bookkeeping(source) == "x = 1\ny = 2"


def test_a_loop_of_nothing_but_glue_goes_and_a_mixed_loop_stays():
    source = "for k, v in d.items():\n    glue(k, v)\nfor k in d:\n    print(k)\n    glue(k, 1)"
    assert strip_bookkeeping(source) == "for k in d:\n    print(k)"


def test_asserts_stay_they_are_the_lessons_checks():
    source = "assert torch.allclose(c, H.T @ alpha)\nglue('c', c)"
    assert strip_bookkeeping(source) == "assert torch.allclose(c, H.T @ alpha)"


def test_an_nbval_comment_block_goes():
    source = "# Tagged nbval-ignore-output: timings differ.\n# More of the why.\nx = 1  # a real comment"
    assert strip_bookkeeping(source) == "x = 1  # a real comment"


def test_source_that_does_not_parse_is_shown_as_written():
    assert strip_bookkeeping("%timeit f()\nglue('x', 1)") == "%timeit f()\nglue('x', 1)"


def _notebook(*sources: str) -> str:
    cells = [{"cell_type": "code", "source": s, "metadata": {}, "outputs": []} for s in sources]
    return json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_a_helper_that_only_glues_goes_with_its_calls_in_later_cells():
    helper = (
        'def glue_scores(name, e):\n    """Glue them."""\n'
        '    for s in range(len(e)):\n        glue(f"{name}_{s}", e[s])'
    )
    nb = json.loads(strip_notebook(_notebook(helper, "e = q @ K.T\nglue_scores('dot', e)")))
    assert [c["source"] for c in nb["cells"]] == ["", "e = q @ K.T"]


def test_a_cell_left_empty_hides_its_input_and_keeps_its_outputs():
    nb = json.loads(strip_notebook(_notebook("glue('fig', fig, display=False)")))
    assert nb["cells"][0]["metadata"]["tags"] == ["remove-input"]
    assert nb["cells"][0]["outputs"] == []
