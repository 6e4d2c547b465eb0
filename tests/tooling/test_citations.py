"""Every numbered citation of a paper is audited (tools/citations.py, tests/tooling/citations.yml).

The table records, for each place the course cites an equation, section, figure, table, footnote, appendix or
algorithm of a paper, which paper, and, per paper, what that number is and which version was checked. These
tests cannot read the papers; they keep the table complete and honest, so that a new citation is checked
before it is published, and the Korean edition cites the numbers its English cites. Positive controls: a
planted citation, a stale entry, a number the paper does not have and a Korean entry citing another equation
are each caught.
"""

import citations
import pytest
import yaml

TABLE = citations.load()
CITED = citations.found(citations.sources())


def test_every_numbered_citation_in_the_course_is_recorded_in_the_audit_table():
    assert citations.problems(TABLE, CITED) == []


def test_the_sources_are_the_course_and_not_nothing():
    files = {file for file, _, _ in CITED}
    assert {"chapters/05_luong_attention.ipynb", "attnlib/scores.py", "notation.md"} <= files
    assert any(file.startswith("exercises/source/") for file in files)


def test_each_paper_names_the_version_whose_numbering_was_checked():
    for key, paper in TABLE["papers"].items():
        assert paper["version"].strip() and paper["checked"].strip(), key


def test_luongs_eq_8_is_the_location_score_and_the_content_scores_are_unnumbered():
    # issue 24: the course once called the content scores "their eq. 8"; Luong et al.'s eq. 8 is the location
    # function, and no entry may give a number to a content score
    numbers = TABLE["papers"]["luong2015"]["numbers"]
    assert "location" in numbers["eq. 8"]
    assert not any(name in numbers[n] for n in numbers if n.startswith("eq.") for name in ("dot", "general"))


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("Luong et al.'s eq. (5)", ["eq. 5"]),
        ("their footnote 14", ["footnote 14"]),
        ("Bahdanau et al.'s Fig. 2", ["Fig. 2"]),
        ("Table 1 of Vaswani et al.", ["Table 1"]),
        ("(Vaswani et al. 2017, §3.2.1, eq. 1)", ["§3.2.1", "eq. 1"]),
        ("their tables 4 and 6", ["Table 4", "Table 6"]),
        ("local-p (eqs. 9-10; see attnlib.local)", ["eq. 9", "eq. 10"]),
        ("(Bahdanau et al., appendix A.2.2)", ["appendix A.2.2"]),
        ("Section 5.3 and Algorithm 1", ["§5.3", "Algorithm 1"]),
    ],
)
def test_the_extractor_finds_every_way_the_course_writes_a_number(text, cited):
    found = citations.found([("f", "c", text)])
    assert sorted(n for _, _, c in found for n in citations.numbers(c)) == sorted(cited)


def test_prose_without_a_number_is_not_a_citation():
    text = "the equations above, the footnote's reading, a figure of the chapter, table = pd.DataFrame(rows)"
    assert citations.found([("f", "c", text)]) == set()


# Positive controls: each kind of gap in the audit is caught
def test_a_new_unrecorded_citation_is_caught():
    planted = CITED | {("chapters/05_luong_attention.ipynb", "acc72e52", "eq. 11")}
    assert citations.problems(TABLE, planted) == [
        "not audited: chapters/05_luong_attention.ipynb acc72e52 'eq. 11'"
    ]


def test_a_citation_no_source_makes_any_more_is_caught_as_stale():
    file, cell, citation = sorted(CITED)[0]
    assert citations.problems(TABLE, CITED - {(file, cell, citation)}) == [
        f"stale (no source cites it any more): {file} {cell} {citation!r}"
    ]


def test_a_number_the_papers_entry_does_not_list_is_caught():
    table = {**TABLE, "citations": [*TABLE["citations"], ["notation.md", "-", "eq. 11", "luong2015"]]}
    cited = CITED | {("notation.md", "-", "eq. 11")}
    assert citations.problems(table, cited) == [
        "notation.md - 'eq. 11': luong2015 has no 'eq. 11' in its entry"
    ]


def test_every_korean_entry_cites_the_numbers_of_the_english_it_translates():
    assert citations.translation_problems() == []


def test_the_korean_labels_are_read_as_the_english_ones():
    korean = "식 5와 6, 식 9~10, 각주 14, 그림 2, 표 4, 부록 A.2.2, Algorithm 1, §3.2.1"
    english = "eqs. 5 and 6, eqs. 9-10, footnote 14, Fig. 2, Table 4, appendix A.2.2, Algorithm 1, §3.2.1"
    assert citations.cited_numbers(korean, korean=True) == citations.cited_numbers(english)


def test_a_korean_entry_that_cites_another_equation_is_caught(tmp_path):
    entry = {"id": "cell-1", "en": "their eq. 8, the location score", "ko": "그들의 식 7, 위치 점수"}
    (tmp_path / "i18n" / "ko").mkdir(parents=True)
    (tmp_path / "i18n" / "ko" / "page.yml").write_text(yaml.safe_dump({"cells": [entry]}), encoding="utf-8")
    assert citations.translation_problems(tmp_path) == [
        "i18n/ko/page.yml cell-1: English cites ['eq. 8'], Korean ['eq. 7']"
    ]
