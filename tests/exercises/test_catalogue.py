"""The checks' messages in the learner's language (issue 30): a Korean entry for every message, the language
found from the notebook, otter's lines around the messages, and the same messages in English as before.

The catalogue is attnlib/grading/messages_ko.json; tools/message_catalogue.py finds the messages by reading
the code (its docstring says which). Sets whose test cells are not converted yet are listed in PENDING: their
completeness tests are expected to fail (strict xfail, so a set that becomes complete must leave the list).
"""

from __future__ import annotations

import json
import sys

import pytest
from exercise_helpers import SETS, _load_tool
from test_messages import code_in

from attnlib.grading import checks, messages

catalogue_tool = _load_tool("message_catalogue")
i18n = _load_tool("i18n")

# the sets whose test cells still write English messages inline (f-strings, literal AssertionErrors)
PENDING: set[str] = set()
KO = messages.catalogue("ko")


def _set_param(name: str):
    marks = [pytest.mark.xfail(strict=True, reason="test cells not converted yet")] if name in PENDING else []
    return pytest.param(name, marks=marks, id=name)


# ------------------------------------------------------------------------------------------ completeness
def test_every_message_of_the_checks_and_the_grader_has_a_korean_entry():
    found = catalogue_tool.templates(catalogue_tool.read_modules())
    assert [text for text in found if not KO.get(text)] == []


def test_no_message_of_the_checks_escapes_the_catalogue():
    assert [e for reader in catalogue_tool.read_modules() for e in reader.escapes] == []


@pytest.mark.parametrize("name", [_set_param(s) for s in SETS])
def test_every_message_of_a_set_has_a_korean_entry(name):
    found = catalogue_tool.templates(catalogue_tool.read_masters([name]))
    assert found, f"no message found in {name}'s test cells"
    assert [f"{where}: {text!r}" for text, where in found.items() if not KO.get(text)] == []


@pytest.mark.parametrize("name", [_set_param(s) for s in SETS])
def test_no_message_of_a_set_escapes_the_catalogue(name):
    assert [e for reader in catalogue_tool.read_masters([name]) for e in reader.escapes] == []


@pytest.mark.parametrize("english", sorted(KO))
def test_a_korean_entry_has_exactly_the_placeholders_of_its_english(english):
    assert messages.placeholders(KO[english]) == messages.placeholders(english)


def test_the_korean_entries_pass_the_glossary_and_emphasis_lints():
    problems = [f"{en!r}: {p}" for en, ko in KO.items() for p in i18n.lint(ko, en)]
    assert problems == []


def test_the_korean_entries_show_no_code_their_english_does_not():
    assert [ko for en, ko in KO.items() if set(code_in(ko)) - set(code_in(en))] == []


def test_every_entry_of_the_catalogue_is_a_message_the_code_shows():
    """No stale entry: a message that left the code leaves the catalogue (found by the same reading)."""
    found = catalogue_tool.templates(catalogue_tool.read_modules() + catalogue_tool.read_masters())
    assert [text for text in KO if text not in found] == []


def test_the_catalogue_is_written_sorted_as_the_tool_writes_it():
    path = catalogue_tool.CATALOGUE
    text = path.read_text(encoding="utf-8")
    assert text == json.dumps(json.loads(text), ensure_ascii=False, indent=1, sort_keys=True) + "\n"


# controls: the reader finds what escapes and what a check translates
SOURCE = """
HINT = "a hint bound to a name"


@test_case(points=1, hidden=True)
def hidden_x(f):
    got = checks.call(f, 1, what="f(x) on one input", hint=HINT)
    checks.close(got, 2, "the positional label")
    checks.tensor(got, checks.say("f with S={S}", S=3))
    assert got, f"got {got}"
    raise AssertionError("a bare literal")
"""


def test_control_the_reader_collects_labels_hints_and_templates():
    reader = catalogue_tool.Reader("control", [SOURCE], strict=True)
    assert set(reader.templates) == {
        "a hint bound to a name",
        "f(x) on one input",
        "the positional label",
        "f with S={S}",
    }


def test_control_the_reader_finds_an_f_string_and_a_literal_assertion():
    escapes = catalogue_tool.Reader("control", [SOURCE], strict=True).escapes
    assert any("an f-string" in e and "got {got}" in e for e in escapes)
    assert any("a literal message" in e and "a bare literal" in e for e in escapes)


# --------------------------------------------------------------------------------------------- language
@pytest.fixture
def clean(monkeypatch):
    """No language chosen by the environment, nothing remembered from a notebook."""
    monkeypatch.delenv(messages.ENV, raising=False)
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    monkeypatch.setattr(messages, "_NOTEBOOK", [None])
    yield monkeypatch


def _notebook(path, language):
    path.write_text(json.dumps({"cells": [], "metadata": {"attnlib": {"language": language}}}))
    return path


def test_english_when_nothing_says_otherwise(clean):
    assert messages.language() == "en" and messages.remember() == "en"


def test_the_environment_variable_chooses_the_language(clean):
    clean.setenv(messages.ENV, "ko")
    assert messages.language() == "ko"


def test_an_unknown_environment_value_is_ignored(clean):
    clean.setenv(messages.ENV, "fr")
    assert messages.language() == "en"


def test_the_thread_override_comes_before_the_environment(clean):
    clean.setenv(messages.ENV, "ko")
    with messages.in_language("en"):
        assert messages.language() == "en"
    assert messages.language() == "ko"


def test_the_override_names_a_bad_language():
    with pytest.raises(ValueError, match="language must be one of"), messages.in_language("fr"):
        pass


def test_a_thread_setting_holds_inside_its_block_and_in_its_thread_only():
    """The one pattern behind in_language and checks.hidden_case: no other grading thread sees it."""
    import threading

    local, seen = threading.local(), []
    with messages.thread_setting(local, "hidden", True):
        other = threading.Thread(target=lambda: seen.append(getattr(local, "hidden", None)))
        other.start()
        other.join()
        assert local.hidden is True
    assert local.hidden is None and seen == [None]


def test_a_thread_setting_gives_back_the_value_before_it_when_the_block_raises():
    import threading

    local = threading.local()
    with messages.thread_setting(local, "language", "en"):
        with pytest.raises(KeyError), messages.thread_setting(local, "language", "ko"):
            raise KeyError("inside")
        assert local.language == "en"


def test_a_hidden_case_is_marked_in_its_block_only():
    with checks.hidden_case():
        assert checks.in_hidden_case()
        with checks.hidden_case(False):
            assert not checks.in_hidden_case()
        assert checks.in_hidden_case()
    assert not checks.in_hidden_case()


def test_the_notebooks_metadata_found_through_jpy_session_name(clean, tmp_path):
    clean.setenv("JPY_SESSION_NAME", str(_notebook(tmp_path / "ex.ipynb", "ko")))
    assert messages.remember() == "ko" and messages.language() == "ko"


def test_a_relative_session_name_is_read_in_the_kernels_folder(clean, tmp_path):
    _notebook(tmp_path / "ex.ipynb", "ko")
    clean.chdir(tmp_path)
    clean.setenv("JPY_SESSION_NAME", "some/folder/ex.ipynb")
    assert messages.remember() == "ko"


@pytest.mark.parametrize(
    "content",
    ["{ not json", '{"metadata": {"attnlib": {"language": "fr"}}}', '{"metadata": []}', "[]", ""],
    ids=["broken", "unknown-language", "bad-metadata", "not-a-dict", "empty"],
)
def test_a_broken_notebook_file_means_english(clean, tmp_path, content):
    path = tmp_path / "ex.ipynb"
    path.write_text(content)
    clean.setenv("JPY_SESSION_NAME", str(path))
    assert messages.remember() == "en"


def test_a_missing_notebook_file_means_english(clean, tmp_path):
    clean.setenv("JPY_SESSION_NAME", str(tmp_path / "gone.ipynb"))
    assert messages.remember() == "en"


def _fake_colab(monkeypatch, reply):
    import types

    message = types.ModuleType("google.colab._message")
    message.blocking_request = reply
    colab = types.ModuleType("google.colab")
    colab._message = message
    google = types.ModuleType("google")
    google.colab = colab
    for name, module in (("google", google), ("google.colab", colab), ("google.colab._message", message)):
        monkeypatch.setitem(sys.modules, name, module)


def test_the_colab_notebooks_metadata_is_asked_of_the_browser(clean):
    asked = []

    def reply(kind, timeout_sec):
        asked.append((kind, timeout_sec))
        return {"ipynb": {"metadata": {"attnlib": {"language": "ko"}}}}

    _fake_colab(clean, reply)
    assert messages.remember() == "ko" and asked == [("get_ipynb", messages.COLAB_TIMEOUT_S)]


def test_a_colab_request_that_fails_means_english(clean):
    def reply(kind, timeout_sec):
        raise TimeoutError("the browser did not answer")

    _fake_colab(clean, reply)
    assert messages.remember() == "en"


# ------------------------------------------------------------------------------------------- messages
def test_say_formats_the_english_template_in_english(clean):
    assert checks.say("{what} is None: replace the `...` by your code", what="f(x)") == (
        "f(x) is None: replace the `...` by your code"
    )


def test_say_formats_the_korean_template_in_korean(clean):
    with messages.in_language("ko"):
        got = checks.say("{what} is None: replace the `...` by your code", what="f(x)")
    assert got == KO["{what} is None: replace the `...` by your code"].format(what="f(x)")


def test_a_check_translates_its_framing_label_and_hint(clean):
    import torch

    label, hint = "the attended weights", "the context is the weights times H"
    with messages.in_language("ko"), pytest.raises(AssertionError) as failed:
        checks.close(torch.ones(2), torch.zeros(2), label, hint=hint)
    shown = str(failed.value)
    assert (
        KO[hint] in shown and "largest error" not in shown and KO[" (largest error {error:.3g})"][:6] in shown
    )


def test_text_without_an_entry_stays_english(clean):
    with messages.in_language("ko"):
        assert checks.tr("no entry holds this sentence") == "no entry holds this sentence"


def test_the_english_messages_are_those_the_checks_wrote_before(clean):
    """The English framing of close, between and tensor, as written inline before the catalogue."""
    import torch

    cases = [
        (
            lambda: checks.close(torch.ones(2), torch.zeros(2), "w", hint="h"),
            "w has the right shape but wrong values (largest error 1). h",
        ),
        (lambda: checks.between(float("nan"), 0, 1, "x"), "x should lie between 0 and 1, got nan."),
        (lambda: checks.tensor(torch.ones(2), "t", shape=(3,)), "t should have shape (3,), got (2,)."),
        (lambda: checks.call(None, what="f(x)"), "f is not defined: run the cell that defines it"),
    ]
    for run, expected in cases:
        with pytest.raises(AssertionError) as failed:
            run()
        assert str(failed.value) == expected


def test_a_switched_off_call_in_a_learners_test_is_named_in_korean_too(clean):
    """learner_tests reads the switched-off message to tell "calls a switched-off implementation" (this scores
    0) from "fails against a right implementation": the same verdict in either language."""

    def calls_off(f):
        import attnlib

        attnlib.scores.dot(None, None)

    clean.setattr(checks, "GRADING", False)  # as in a notebook (a grading test here may have set it)
    said = {"en": "calls an implementation that is switched off", "ko": "꺼져 있는 구현을 호출한다"}
    for language, words in said.items():
        with messages.in_language(language), pytest.raises(AssertionError) as failed:
            checks.passes(calls_off, lambda *a: 1, "test_x(x)", off=("attnlib.scores.dot",))
        assert words in str(failed.value) and "attnlib.scores.dot" in str(failed.value)


# ----------------------------------------------------------------------------------- the learner's view
def test_a_public_check_on_a_wrong_answer_speaks_korean(clean, tmp_path):
    """End to end, as in the Korean notebook: grading.notebook, then grader.check on a wrong answer."""
    pytest.importorskip("otter")
    from attnlib import grading

    clean.setenv("JPY_SESSION_NAME", str(_notebook(tmp_path / "03.ipynb", "ko")))
    clean.chdir(tmp_path)
    grader = grading.notebook("03_dot_product_attention")
    env = {"dot_scores": lambda s, H: 2 * (H @ s)}
    shown = repr(grader.check("q1", env))
    assert shown.startswith(checks.say("{name} results:", name="q1")) and "q1 결과:" in shown
    assert KO["has the right shape but wrong values"] in shown and "has the right shape" not in shown
    assert "테스트 케이스 실패" in shown and "Test case failed" not in shown


def test_a_public_check_in_english_is_otters_own_result(clean, tmp_path):
    pytest.importorskip("otter")
    from attnlib import grading

    clean.chdir(tmp_path)
    grader = grading.notebook("03_dot_product_attention")
    result = grader.check("q1", {"dot_scores": lambda s, H: H @ s})
    assert (
        type(result).__module__.startswith("otter") and repr(result) == "q1 results: All test cases passed!"
    )


# ------------------------------------------------------------------------------------------- the pages
def test_the_korean_notebooks_say_they_are_korean():
    for page in i18n.PAGES:
        if page.endswith(".ipynb") and (i18n.OUT / page).exists():
            nb = json.loads((i18n.OUT / page).read_text())
            assert messages.notebook_language(nb) == "ko", page


def test_parity_allows_the_language_and_nothing_else_in_the_metadata(monkeypatch, tmp_path):
    english = {
        "cells": [],
        "metadata": {"kernelspec": {"name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    (tmp_path / "en").mkdir()
    (tmp_path / "en" / "x.ipynb").write_text(json.dumps(english))
    (tmp_path / "ko").mkdir()
    monkeypatch.setattr(i18n, "ROOT", tmp_path / "en")
    monkeypatch.setattr(i18n, "OUT", tmp_path / "ko")
    for metadata, verdict in [
        (i18n.korean_metadata(english["metadata"]), []),
        (english["metadata"], ["x.ipynb: the notebook's metadata differs"]),
        (
            {**i18n.korean_metadata(english["metadata"]), "extra": 1},
            ["x.ipynb: the notebook's metadata differs"],
        ),
    ]:
        (tmp_path / "ko" / "x.ipynb").write_text(json.dumps({**english, "metadata": metadata}))
        assert [p[: len(verdict[0])] for p in i18n.parity("x.ipynb")] == verdict
