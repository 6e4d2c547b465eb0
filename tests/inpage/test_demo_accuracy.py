"""The in-page demos on what people type (issue 28): the written lists of benchmarks/demo_accuracy.py, whose
right answers are the data's own, answered by the models the pages hold (the page = Python within 1e-4:
tests/site/test_inpage_site.py). ``benchmarks/demo_accuracy.py`` prints every answer and the accuracies."""

import sys
from datetime import date
from pathlib import Path

import pytest

from attnlib.data import translation_task
from attnlib.data.dates import date_formats, format_pattern, render

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import demo_accuracy as demo  # noqa: E402


def _renderings(answer: str) -> set[str]:
    return {render(date.fromisoformat(answer), fmt) for fmt in date_formats()}


def test_the_learned_list_holds_only_the_learned_formats_and_the_other_list_none():
    assert all(typed.lower() in _renderings(want) for typed, want in demo.DATES_LEARNED)
    assert not any(typed.lower() in _renderings(want) for typed, want in demo.DATES_NOT_LEARNED)
    assert any(typed != typed.lower() for typed, _ in demo.DATES_LEARNED)  # written as people write them


def test_the_sentences_are_held_out_pairs_with_the_datas_own_translations():
    task = translation_task(seed=0, n=4000)  # chapter 8's data
    held_out = {(" ".join(p.src), " ".join(p.tgt)) for p in task.test}
    seen = {" ".join(p.src) for p in task.train}
    pairs = [(demo.as_trained(typed), want) for typed, want in demo.SENTENCES]
    assert all(pair in held_out for pair in pairs)
    assert not any(src in seen for src, _ in pairs)
    assert all(typed[0].isupper() and typed[-1] in ".?" for typed, _ in demo.SENTENCES)


@pytest.fixture(scope="module")
def translator():
    return demo.page_spec("08_translation.ipynb")


def test_a_sentence_typed_with_a_capital_and_punctuation_gets_the_answer_of_the_training_form(translator):
    typed = [typed for typed, _ in demo.SENTENCES]
    assert demo.answers(translator, typed) == demo.answers(translator, [demo.as_trained(t) for t in typed])


def test_control_the_training_form_is_not_what_was_typed():
    assert all(demo.as_trained(typed) != typed for typed, _ in demo.SENTENCES)


def test_the_dates_model_reads_dates_in_its_formats_as_people_write_them():
    spec = demo.page_spec("04_bahdanau_attention.ipynb")
    shown = demo.answers(spec, [typed for typed, _ in demo.DATES_LEARNED])
    right = sum(got == want for got, (_, want) in zip(shown, demo.DATES_LEARNED, strict=True))
    assert right >= len(demo.DATES_LEARNED) - 1, shown  # 16 of 16 on the stored model (2026-11-28)


def test_the_dates_page_flags_every_unseen_format_and_no_learned_one():
    spec = demo.page_spec("04_bahdanau_attention.ipynb")
    assert demo.flagged(spec, [typed for typed, _ in demo.DATES_NOT_LEARNED]) == [True] * len(
        demo.DATES_NOT_LEARNED
    )
    assert demo.flagged(spec, [typed for typed, _ in demo.DATES_LEARNED]) == [False] * len(demo.DATES_LEARNED)


def test_the_dates_page_lists_the_formats_of_its_training_data():
    spec = demo.page_spec("04_bahdanau_attention.ipynb")
    assert [f["pattern"] for f in spec["formats"]] == [format_pattern(fmt) for fmt in date_formats()]


def test_the_dates_page_says_nothing_about_dates_in_its_formats_and_flags_a_year_outside_its_range(tmp_path):
    # the page's own notes (inpage.js in node) on the stored model: no note at all on the 16 learned dates
    # (the year check once read "0720" of "19690720" as a year); a year note on 2101, alone or in yyyymmdd
    from tests.inpage.test_inpage import _in_node

    spec = demo.page_spec("04_bahdanau_attention.ipynb")
    typed = [typed for typed, _ in demo.DATES_LEARNED] + ["3 March 2101", "21010303"]
    said = _in_node(tmp_path, spec, typed, "a.notes(m, t, a.translate(m, t))")
    assert said[: len(demo.DATES_LEARNED)] == [[]] * len(demo.DATES_LEARNED)
    assert said[-2:] == [[f"2101: {spec['ranges'][0]['message']}"]] * 2
