"""The grader's own words in the submission's language (issue 30): a time limit used up, a sandbox that died,
a reply too large, a malformed notebook, a switched-off call, a refusal on Gradescope, and every other
sentence of grader/attnlib_grader that reaches a learner's feedback/<name>.md or results.json.

Two ways: tools/message_catalogue.py reads every sentence written in the grader's code and says which reach a
learner untranslated (``grader_escapes``); and the failure paths themselves, fed a Korean submission, speak
Korean (with the English run of the same paths as the control).
"""

from __future__ import annotations

import json
import re

import nbformat
import pytest
from exercise_helpers import _load_tool

from attnlib.grading import messages

catalogue_tool = _load_tool("message_catalogue")
# three English words in a row (as test_feedback_language): a phrase the catalogue did not translate
ENGLISH_SENTENCE = re.compile(r"\b[a-z]{2,}(?: [a-z]{2,}){2,}\b")


# ----------------------------------------------------------------------------------- the code, read
def test_no_sentence_of_the_grader_reaches_a_learner_untranslated():
    readers = [r for r in catalogue_tool.read_modules() if r.where.startswith("grader/")]
    assert len(readers) >= 10 and [e for r in readers for e in r.escapes] == []


GRADER_SOURCE = '''
"""A docstring is no message."""
import sys

WARNING = "printed for the teacher, never sent"


def call(name, error):
    if error:
        raise SandboxError(f"{name} raised an error here")
    errors.append("the cell stopped early")
    print(f"grade.py: the teacher reads {name} here", file=sys.stderr)
    parser.add_argument("--out", help="folder for the scores and feedback")
    return say("{name} did this", name=name, why=f"because {name} said so")


def self_check():
    raise SelfCheckError("the reference solution failed in the sandbox")
'''


def test_control_the_grader_scan_finds_the_sentences_a_learner_reads():
    escapes = catalogue_tool.grader_escapes("grader/attnlib_grader/grade.py", GRADER_SOURCE)
    found = [e.split(": text a learner reads: ")[1] for e in escapes]
    assert found == [
        "'printed for the teacher, never sent'",  # a constant no say/tr is given
        "f'{name} raised an error here'",
        "'the cell stopped early'",
        "f'because {name} said so'",  # an f-string field of a say: not translated
    ]


def test_control_the_grader_scan_leaves_the_teachers_and_the_codes_text():
    """A print, an argparse help, a docstring, a say's template and self_check (listed for grade.py) pass."""
    escapes = catalogue_tool.grader_escapes("grader/attnlib_grader/grade.py", GRADER_SOURCE)
    assert not any(w in e for e in escapes for w in ("teacher reads", "folder for", "reference solution"))
    assert catalogue_tool.grader_escapes("grader/attnlib_grader/gradebooks.py", GRADER_SOURCE) == []


# ------------------------------------------------------------------------- the failure paths, run
CELLS = [
    'raise ValueError("boom")',
    "while True:\n    pass",
    "import os\nimport torch\n\n"
    "def fails():\n    raise KeyError(1)\n\n"
    "def huge():\n    return torch.zeros(2**25)\n\n"
    "def spin():\n    while True:\n        pass\n\n"
    "def uses_off():\n    import attnlib\n    return attnlib.scores.dot(None, None)\n\n"
    "def crash():\n    os._exit(3)",
]
NAMES = ["fails", "huge", "spin", "uses_off", "crash"]


def _failures(tmp_path, language: str) -> list[str]:
    """What a learner reads when each failure path is taken, in ``language``: the cells that failed, a call
    that raised, a value too large, a time limit, a switched-off call, a sandbox stopped after a failure, a
    process that died, a budget used up, a notebook that cannot be read, a notebook too large."""
    from attnlib_grader.grade import Bundle, grade_submission
    from attnlib_grader.sandbox import Budget, Meter, Sandbox, SandboxError
    from attnlib_grader.submissions import MAX_NOTEBOOK_BYTES

    said = []
    config = {"names": NAMES, "cell_time_limit": 0.5, "switch_off": ["attnlib.scores.dot"]}
    with messages.in_language(language):
        sandbox = Sandbox(CELLS, config, str(tmp_path))
        sandbox.start()
        try:
            said += sandbox.errors
            for name in ("fails", "huge", "uses_off", "spin", "fails"):
                with pytest.raises((SandboxError, TimeoutError)) as failed:
                    sandbox.call(name, (), {}, 1.0)
                said.append(str(failed.value))
        finally:
            sandbox.kill()
        sandbox = Sandbox(CELLS[2:], config, str(tmp_path))
        sandbox.start()
        try:
            with pytest.raises(SandboxError) as failed:
                sandbox.call("crash", (), {}, 5.0)
            said.append(str(failed.value))
        finally:
            sandbox.kill()
        with pytest.raises(TimeoutError) as failed:
            Budget(0.0, Meter()).left()
        said.append(str(failed.value))
    bundle = Bundle({"questions": [{"name": "q1", "points": 1}]}, {"q1": ""})
    marked = {"metadata": {"attnlib": {"language": language}}, "nbformat": 4}
    for notebook in ({**marked, "cells": "not a list"}, {**marked, "padding": "x" * MAX_NOTEBOOK_BYTES}):
        result = grade_submission(bundle, "learner", json.dumps(notebook).encode())
        assert result.language == language
        said += [result.questions[0].error, *result.notes]
    return said


# a learner's own exception text, quoted back ("(JSONDecodeError: Expecting value: …)") is not the grader's
LEARNERS_OWN = re.compile(r"\(\w+(Error|Exception): [^)]*\)")


def test_the_graders_failures_speak_korean_to_a_korean_submission(tmp_path):
    korean = _failures(tmp_path, "ko")
    english = _failures(tmp_path, "en")
    assert len(korean) == len(english) == 13
    left = [m for m in korean if ENGLISH_SENTENCE.search(LEARNERS_OWN.sub("", m))]
    assert left == []
    # each is the Korean of its English (the same path taken): a few checked word for word
    ko = messages.catalogue("ko")
    assert korean[0] == ko["cell {n}: {error}"].format(n=1, error="ValueError: boom")
    assert korean[1] == ko["cell {n}: did not finish within {limit:g} s"].format(n=2, limit=0.5)
    assert "채점 중에 꺼져 있다" in korean[4] and "attnlib.scores.dot" in korean[4]
    assert korean[6] == ko["the notebook's process was stopped after an earlier failure"]


def test_control_the_same_failures_in_english_hold_english_sentences(tmp_path):
    english = _failures(tmp_path, "en")
    assert english[1] == "cell 2: did not finish within 0.5 s"
    assert "is switched off while grading" in english[4]
    unmatched = [m for m in english if not ENGLISH_SENTENCE.search(LEARNERS_OWN.sub("", m))]
    # all but three, which have no three words of two letters in a row
    assert [m[:15] for m in unmatched] == ["cell 1: ValueEr", "fails raised Ke", "not a readable "]


# ------------------------------------------------------------------------------------- Gradescope
def _graded(language: str):
    from attnlib_grader.grade import CaseResult, QuestionResult, SubmissionResult

    q1 = QuestionResult(
        "q1", 2.0, cases=[CaseResult("q1 - 1", 1.0, False, True), CaseResult("h", 1.0, True, False)]
    )
    q2 = QuestionResult("q2", 3.0, manual=True)
    return SubmissionResult("learner", [q1, q2], notes=["cell 1: ValueError: boom"], language=language)


def _outputs(data: dict) -> list[str]:
    return [data["output"]] + [t["output"] for t in data["tests"]] + [t["name"] for t in data["tests"]]


def test_gradescopes_results_are_in_the_submissions_language():
    from attnlib_grader import gradescope

    korean, english = (_outputs(gradescope.results(_graded(lang), 1.0)) for lang in ("ko", "en"))
    assert [o for o in korean if ENGLISH_SENTENCE.search(o)] == []
    assert any(ENGLISH_SENTENCE.search(o) for o in english)  # the control
    assert "자동 채점 점수" in korean[0] and "숨겨진 테스트" in "\n".join(korean)


def _submitted(root, language: str, count: int) -> None:
    (root / "submission").mkdir(parents=True)
    for i in range(count):
        nb = nbformat.v4.new_notebook()
        nb.metadata["attnlib"] = {"language": language}
        nbformat.write(nb, root / "submission" / f"mine{i}.ipynb")


@pytest.mark.parametrize("language", ["ko", "en"])
def test_a_gradescope_refusal_is_in_the_submitted_notebooks_language(tmp_path, monkeypatch, language):
    """Two notebooks are refused before any grading (no bundle of a real set needed), in their language."""
    from attnlib_grader import gradescope
    from attnlib_grader.grade import Bundle

    monkeypatch.setattr(
        gradescope, "load_bundle", lambda path: Bundle({"questions": [{"name": "q1", "points": 1}]}, {})
    )
    _submitted(tmp_path, language, 2)
    data = gradescope.grade(tmp_path)
    assert data["extra_data"]["graded"] is False
    english = [o for o in _outputs(data) if ENGLISH_SENTENCE.search(o)]
    assert (english == []) == (language == "ko"), english


def test_gradescopes_sandbox_refusal_is_in_the_submitted_notebooks_language(tmp_path, monkeypatch):
    from attnlib_grader import gradescope
    from attnlib_grader.grade import Bundle

    def no_namespaces():
        raise gradescope.IsolationError("creating a user namespace failed")

    monkeypatch.setattr(
        gradescope, "load_bundle", lambda path: Bundle({"questions": [{"name": "q1", "points": 1}]}, {})
    )
    monkeypatch.setattr(gradescope, "check_bwrap", no_namespaces)
    monkeypatch.setattr(gradescope.os, "geteuid", lambda: 1000)
    _submitted(tmp_path, "ko", 1)
    data = gradescope.grade(tmp_path)
    shown = LEARNERS_OWN.sub("", data["output"].replace("(creating a user namespace failed)", ""))
    assert data["extra_data"]["graded"] is False and "bubblewrap" in shown
    assert not ENGLISH_SENTENCE.search(shown), shown
