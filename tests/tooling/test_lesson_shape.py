"""The shape of a lesson (tools/lesson_shape.py, style.md): the lesson in view, its evidence folded beside it.

Every chapter and its Colab edition: glue and claims only in folded cells, no code cell in view over 30 lines,
no dead names, glued values numbers only, no function defined in two chapters. Each rule has a positive
control: a notebook that breaks it is caught.
"""

from pathlib import Path

import lesson_shape
import nbformat
import pytest
from colab_edition import edition_path
from notebooks import ROOT

CHAPTERS = sorted((ROOT / "chapters").glob("*.ipynb"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_each_chapter_keeps_the_lesson_in_view_and_its_evidence_folded(path):
    assert lesson_shape.problems(path, edition_path(path)) == []


def test_no_function_is_defined_in_two_chapters():
    assert lesson_shape.shared_functions(CHAPTERS) == []


# Positive controls: a notebook that breaks each rule is caught
def notebook(*cells, tmp_path: Path, name: str = "99_control") -> Path:
    nb = nbformat.v4.new_notebook(cells=list(cells))
    path = tmp_path / f"{name}.ipynb"
    nbformat.write(nb, path)
    return path


def code(source: str, tags=(), **metadata):
    return nbformat.v4.new_code_cell(source, metadata={"tags": list(tags), **metadata})


def test_a_claim_in_view_is_caught_and_one_in_an_evidence_cell_is_not(tmp_path):
    path = notebook(code("x = 1\nclaim(x > 0, 'x is positive')"), tmp_path=tmp_path)
    assert any("claim( in a cell in view" in p for p in lesson_shape.problems(path))
    evidence = code("#@title How we know\nclaim(x > 0, 'x')", ["evidence"])
    path = notebook(code("x = 1"), evidence, tmp_path=tmp_path, name="98_evidence")
    assert lesson_shape.problems(path) == []


def test_a_long_cell_in_view_is_caught_on_the_site_and_in_colab(tmp_path):
    long = "\n".join(f"x{i} = {i}\nprint(x{i})" for i in range(16))  # 32 lines
    path = notebook(code(long), tmp_path=tmp_path)
    assert any("32 lines in view" in p for p in lesson_shape.problems(path))
    folded_on_site = notebook(code(long, ["hide-input"]), tmp_path=tmp_path, name="98_folded")
    assert lesson_shape.problems(folded_on_site) == []
    assert any("Colab edition" in p for p in lesson_shape.problems(folded_on_site, path))  # not a form there


def test_a_name_assigned_and_never_read_is_caught(tmp_path):
    path = notebook(code("ratio = 2 / 3\nshown = 1\nprint(shown)"), tmp_path=tmp_path)
    assert lesson_shape.problems(path) == ["cell 0: ratio is assigned and never read"]


def test_a_glued_word_is_caught_and_a_glued_number_is_not(tmp_path):
    def glued(name, text):
        return {
            "output_type": "display_data",
            "data": {"application/papermill.record/text/plain": text},
            "metadata": {"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}},
        }

    cell = code("#@title How we know\nglue('x', 1)", ["evidence"])
    cell.outputs = [
        nbformat.from_dict(glued("speed", "0.953")),
        nbformat.from_dict(glued("verdict", "'slower'")),
    ]
    path = notebook(cell, tmp_path=tmp_path)
    assert lesson_shape.problems(path) == ["cell 0: glued 'verdict' is not a number: \"'slower'\""]


def test_a_function_defined_in_two_chapters_is_caught_by_name_or_by_body(tmp_path):
    first = notebook(
        code("def mean_sd_range(v):\n    return sum(v) / len(v)"), tmp_path=tmp_path, name="01_a"
    )
    second = notebook(code("def spread(v):\n    return sum(v) / len(v)"), tmp_path=tmp_path, name="02_b")
    third = notebook(code("def mean_sd_range(x):\n    return max(x)"), tmp_path=tmp_path, name="03_c")
    assert lesson_shape.shared_functions([first, third]) == ["mean_sd_range is defined in ['01_a', '03_c']"]
    assert any("same function body" in p for p in lesson_shape.shared_functions([first, second]))
