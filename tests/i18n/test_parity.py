"""Parity: every page of the Korean edition is the English page with only its prose translated (issue 30).

The pages are those in ko/ now (tools/i18n.py generate writes the complete translations); each check has a
control on a scratch copy of chapter 3 whose 'translation' is its English, damaged in one place.
"""

import json
import re

import colab_edition
import pytest
from i18n_scratch import scratch_course, translated_as_english

import i18n

EDITION = [page for page in i18n.PAGES if (i18n.OUT / page).exists()]  # what generate wrote (checked current)
NOTEBOOKS = [page for page in EDITION if page.endswith(".ipynb")]
CHAPTER_3 = "chapters/03_dot_product_attention.ipynb"
SCRATCH_PAGES = [CHAPTER_3, "exercises/03_dot_product_attention.ipynb", "notation.md"]


@pytest.mark.parametrize("page", EDITION)
def test_a_korean_page_has_the_english_cells_code_and_outputs(page):
    assert i18n.parity(page) == []


@pytest.mark.parametrize("page", EDITION)
def test_a_korean_page_keeps_every_markdown_invariant_of_the_english(page):
    assert i18n.problems(page) == []


@pytest.mark.parametrize("page", NOTEBOOKS)
def test_a_korean_colab_edition_has_the_english_editions_code_and_outputs(page):
    """The Korean Colab edition is proven equal to the English one's code and outputs without running it."""
    english = json.loads(colab_edition.edition_path(i18n.ROOT / page).read_text())
    korean = json.loads(colab_edition.edition_path(i18n.OUT / page).read_text())
    assert [c.get("id") for c in korean["cells"]] == [c.get("id") for c in english["cells"]]
    assert _code(korean) == _code(english)


# as tests/tooling/test_colab_edition.py checks the English editions
RAW_MYST = re.compile(r"\{(glue(:\w+)?|numref|doc|ref|eq)\}`|^(```|:::)\{", re.M)


@pytest.mark.parametrize("page", NOTEBOOKS)
def test_a_korean_colab_edition_shows_no_raw_myst(page):
    korean = json.loads(colab_edition.edition_path(i18n.OUT / page).read_text())
    raw = ["".join(c["source"])[:200] for c in korean["cells"] if c["cell_type"] == "markdown"]
    assert [text for text in raw if RAW_MYST.search(text)] == []


def test_control_the_korean_colab_editions_raw_myst_check_sees_a_role():
    assert RAW_MYST.search("가중치는 {glue:text}`w:.2f`입니다.")


def _code(nb):
    return [(c["source"], c.get("outputs"), c["metadata"]) for c in nb["cells"] if c["cell_type"] == "code"]


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    """Chapter 3 and the pages it links to, 'translated' as their English, and generated."""
    korean = {page: translated_as_english(page) for page in SCRATCH_PAGES}
    scratch_course(monkeypatch, tmp_path, SCRATCH_PAGES, korean)
    assert i18n.generate() != []
    return tmp_path


def test_control_the_scratch_page_passes_parity(scratch):
    assert sorted(i18n.complete_pages()) == sorted(SCRATCH_PAGES)
    assert i18n.parity(CHAPTER_3) == []


def _damage(scratch, change):
    path = scratch / "ko" / CHAPTER_3
    nb = json.loads(path.read_text())
    change(nb)
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return i18n.parity(CHAPTER_3)


def _first_output(nb):
    return next(c for c in nb["cells"] if c["cell_type"] == "code" and c["outputs"])


def test_control_a_changed_output_is_caught(scratch):
    def change(nb):
        output = _first_output(nb)["outputs"][0]
        output.setdefault("text", []).append("x")

    assert any("code cell or its outputs" in p for p in _damage(scratch, change))


def test_control_a_changed_code_cell_is_caught(scratch):
    def change(nb):
        _first_output(nb)["source"][0] += " "

    assert any("code cell or its outputs" in p for p in _damage(scratch, change))


def test_control_cells_in_another_order_are_caught(scratch):
    def change(nb):
        nb["cells"][1], nb["cells"][2] = nb["cells"][2], nb["cells"][1]

    assert any("ids and types" in p for p in _damage(scratch, change))


@pytest.mark.parametrize("damage", ["math", "roles"])
def test_control_a_translation_that_drops_math_or_a_glued_value_is_caught(scratch, damage):
    entries = i18n.load(CHAPTER_3)
    target = next(e for e in entries if "$" in e["ko"] and "{glue:text}" in e["ko"])
    if damage == "math":
        target["ko"] = target["ko"].replace("$", "", 2)
    else:  # a glued number typed by hand
        target["ko"] = re.sub(r"\{glue:text\}`[^`]+`", "3", target["ko"], count=1)
    i18n.translation_path(CHAPTER_3).write_text(i18n.dump(CHAPTER_3, entries))
    assert any(damage in p for p in i18n.problems(CHAPTER_3))
