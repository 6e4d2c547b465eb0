"""Completeness: every page of the Korean edition is translated, current and linted; the generated files are
what the tools write now; the pages still being translated are listed, never failed (issue 30).

The controls run on a scratch copy of chapter 3 'translated' as its English (tests/i18n/i18n_scratch.py).
"""

import json
import statistics

import pytest
import yaml
from i18n_scratch import ROOT, scratch_course, translated_as_english

import i18n

CHAPTER_3 = "chapters/03_dot_product_attention.ipynb"
SCRATCH_PAGES = [CHAPTER_3, "exercises/03_dot_product_attention.ipynb", "notation.md"]


def korean_toc_pages() -> list[str]:
    """The pages that ko/_toc.yml lists, as paths with their suffix (the home notice is not a translation)."""
    toc = (ROOT / "ko" / "_toc.yml").read_text()
    files = [f for f in (ROOT / "ko").rglob("*") if f.suffix in (".md", ".ipynb")]
    pages = [str(f.relative_to(ROOT / "ko")) for f in files]
    listed = [p for p in pages if f"file: {p.rsplit('.', 1)[0]}\n" in toc or p == "intro.md"]
    return [p for p in listed if p in i18n.PAGES and (p != "intro.md" or not i18n.problems(p))]


@pytest.mark.parametrize("page", korean_toc_pages())
def test_a_page_of_the_korean_toc_has_no_untranslated_or_out_of_date_entry(page):
    assert i18n.problems(page) == []


def test_the_korean_edition_is_what_generate_writes_now(capsys):
    """ko/ (pages, _toc.yml, _config.yml) is committed: it must be what tools/i18n.py generate writes."""
    assert i18n.main(["generate", "--check"]) == 0, capsys.readouterr().out


def test_status_lists_the_pages_not_yet_in_the_korean_edition_without_failing(capsys):
    assert i18n.main(["status"]) == 0
    out = capsys.readouterr().out
    complete = i18n.complete_pages()  # once: it checks every page
    missing = [page for page in i18n.PAGES if page not in complete]
    assert f"status: not yet in it: {', '.join(missing) or 'none'}" in out
    print(out.splitlines()[-1])  # shown with -s: what the translators have left


# ---------------------------------------------------------------- controls on a scratch copy


@pytest.fixture
def scratch(monkeypatch, tmp_path):
    korean = {page: translated_as_english(page) for page in SCRATCH_PAGES}
    scratch_course(monkeypatch, tmp_path, SCRATCH_PAGES, korean)
    i18n.generate()
    assert i18n.generate(check=True) == []
    return tmp_path


def _change_english_cell(root):
    path = root / CHAPTER_3
    nb = json.loads(path.read_text())
    cell = next(c for c in nb["cells"] if c["cell_type"] == "markdown" and len(c["source"]) > 2)
    cell["source"][-1] += " A sentence added to the English."
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n")
    return cell["id"]


def test_control_an_english_change_without_its_korean_update_fails(scratch):
    cell = _change_english_cell(scratch)
    assert any("not in step" in p for p in i18n.problems(CHAPTER_3))  # before sync
    i18n.translation_path(CHAPTER_3).write_text(i18n.dump(CHAPTER_3, i18n.sync(CHAPTER_3)))
    assert i18n.problems(CHAPTER_3) == [
        f"{CHAPTER_3} [{cell}]: out of date (its English changed; update ko, then delete was)"
    ]
    # the committed Korean page is no longer what generate writes: the generated-files test fails
    assert any(CHAPTER_3 in shown and "removed" in shown for shown in i18n.generate(check=True))


def test_control_a_changed_generated_file_is_caught(scratch):
    path = scratch / "ko" / "notation.md"
    path.write_text(path.read_text() + "\nedited by hand\n")
    assert i18n.generate(check=True) == ["ko/notation.md"]


def test_control_a_korean_page_whose_translation_is_not_complete_is_caught(scratch):
    entries = i18n.load("notation.md")
    entries[0]["ko"] = ""
    i18n.translation_path("notation.md").write_text(i18n.dump("notation.md", entries))
    assert any("not translated" in p for p in i18n.problems("notation.md"))
    assert "ko/notation.md (no longer complete: removed)" in i18n.generate(check=True)
    i18n.generate()
    assert not (scratch / "ko" / "notation.md").exists()
    assert "file: notation" not in (scratch / "ko" / "_toc.yml").read_text()


# ---------------------------------------------------------------- lints


def test_control_the_emphasis_trap_is_caught():
    assert i18n.lint("**어텐션(attention)**은 가중합이다.")
    assert i18n.lint("**어텐션**은 가중합이다.") == []


def test_control_a_word_the_glossary_forbids_is_caught():
    never = yaml.safe_load((ROOT / "i18n" / "glossary.yml").read_text())["never"]
    assert never, "the glossary lists no word never to use"
    assert any("glossary" in p for p in i18n.lint("주의 메커니즘은 가중합이다."))


# ---------------------------------------------------------------- the length ratio


def _ratios(pages):
    out = []
    for page in pages:
        for e in i18n.load(page):
            if (e.get("ko") or "").strip() and i18n.prose_length(e["en"]) >= i18n.MIN_PROSE:
                out.append(i18n.prose_length(e["ko"]) / i18n.prose_length(e["en"]))
    return out


def test_no_committed_translation_is_much_shorter_than_its_english():
    """Every translated entry, complete page or not; prints the distribution (with -s) to recalibrate."""
    short = [
        f"{page} [{e['id']}]: {p}"
        for page in i18n.PAGES
        for e in i18n.load(page)
        if (e.get("ko") or "").strip() and (p := i18n.short_translation(e["en"], e["ko"]))
    ]
    ratios = _ratios(i18n.PAGES)
    if ratios:
        q = statistics.quantiles(ratios, n=20) if len(ratios) > 1 else ratios
        print(
            f"length ratio of {len(ratios)} entries: min {min(ratios):.3f}, 5% {q[0]:.3f}, "
            f"median {statistics.median(ratios):.3f}, max {max(ratios):.3f}"
        )
    assert short == []


def test_control_a_summary_is_flagged(scratch):
    entries = i18n.load(CHAPTER_3)
    long = next(e for e in entries if i18n.prose_length(e["en"]) > 4 * i18n.MIN_PROSE)
    # a fair Korean length (about half the English's characters) passes; its first sentence alone does not
    assert i18n.short_translation(long["en"], long["en"][: len(long["en"]) // 2]) is None
    first = long["en"].split(". ")[0]
    assert i18n.short_translation(long["en"], first) is not None
