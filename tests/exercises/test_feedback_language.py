"""The grader writes each submission's feedback in its notebook's language (issue 30), with the same scores.

A Korean submission is an English one whose notebook carries ``metadata.attnlib.language = "ko"``, as the
Korean exercise notebooks do (tools/i18n.py). Both are graded in one run, in threads side by side.
"""

from __future__ import annotations

import json
import os
import re

import nbformat
import pytest
from exercise_helpers import FIXTURES, SETS, fixture_notebook

from attnlib.grading import messages

SET = "03_dot_product_attention"
# wrong answers whose failures go through the checks' framing, a diagnose helper, the learner-test checks,
# the loop tracer and a hidden case's words
FIXTURES_USED = [
    "wrong_q2_missing_mask",
    "wrong_q3_python_loop",
    "wrong_q4_mean_per_sentence",
    "wrong_q6_reads_the_source",
    "tamper_wrong_shape_and_dtype",
]
# three English words in a row: a phrase the catalogue did not translate
ENGLISH_SENTENCE = re.compile(r"\b[a-z]{2,}(?: [a-z]{2,}){2,}\b")
# the text of an exception the learner's code raised (torch's own words, or a learner test's assertion),
# quoted in a Korean message, and quoted data ('el coche rojo')
LEARNERS_OWN = re.compile(r"(?<=발생했다: ).*?(?=\. |$)|\(\w+(Error|Exception): [^)]*\)|'[^']*'", re.M)


@pytest.fixture(scope="module")
def both(built, tmp_path_factory):
    """{language: {fixture: SubmissionResult}}, and the results folder, from one grading run."""
    from attnlib_grader.grade import grade_folder

    folder = tmp_path_factory.mktemp(f"submissions-{SET}-languages")
    for name in FIXTURES_USED:
        nb = fixture_notebook(SET, json.loads((FIXTURES / SET / f"{name}.json").read_text()))
        nbformat.write(nb, folder / f"en_{name}.ipynb")
        nb.metadata["attnlib"] = {"language": "ko"}
        nbformat.write(nb, folder / f"ko_{name}.ipynb")
    out = tmp_path_factory.mktemp(f"results-{SET}-languages")
    results = {r.name: r for r in grade_folder(built[SET], folder, out, jobs=2, time_limit=10)}
    by_language = {lang: {n: results[f"{lang}_{n}"] for n in FIXTURES_USED} for lang in ("en", "ko")}
    return by_language, out


def _scores(result) -> dict[str, float]:
    return {q.name: q.score for q in result.questions if not q.manual}


@pytest.mark.slow
def test_a_korean_submission_scores_as_its_english_copy(both):
    graded, _ = both
    for name in FIXTURES_USED:
        assert _scores(graded["ko"][name]) == _scores(graded["en"][name]), name
        assert [c.passed for q in graded["ko"][name].questions for c in q.cases] == [
            c.passed for q in graded["en"][name].questions for c in q.cases
        ], name


@pytest.mark.slow
def test_a_korean_submission_gets_korean_feedback(both):
    graded, out = both
    ko = messages.catalogue("ko")
    for name in FIXTURES_USED:
        assert graded["ko"][name].language == "ko" and graded["en"][name].language == "en"
        korean = (out / "feedback" / f"ko_{name}.md").read_text(encoding="utf-8")
        english = (out / "feedback" / f"en_{name}.md").read_text(encoding="utf-8")
        assert ko["Automatic score: {score:g} / {possible:g}"].split(":")[0] in korean
        assert "Automatic score" in english and "Automatic score" not in korean
        assert "hidden test" not in korean and "FAILED" not in korean


@pytest.mark.slow
def test_the_korean_failure_messages_hold_no_english_sentence(both):
    """Every failed case's message in Korean is the catalogue's: no English sentence left in it (the learner's
    own exception text aside, which none of these fixtures raise)."""
    graded, _ = both
    left = []
    for name, result in graded["ko"].items():
        for q in result.questions:
            for case in q.cases:
                if not case.passed:
                    found = ENGLISH_SENTENCE.findall(LEARNERS_OWN.sub("", case.message))
                    left += [f"{name} {q.name} {case.name}: {m}" for m in found]
    assert left == []


@pytest.mark.slow
def test_the_english_failure_messages_stay_english(both):
    """Control of the test above: its pattern finds English in nearly every English message of the same cases
    (not in all: "w in float64 is wrong." has no three plain words in a row)."""
    graded, _ = both
    failed = [c for r in graded["en"].values() for q in r.questions for c in q.cases if not c.passed]
    unmatched = [c.message for c in failed if not ENGLISH_SENTENCE.search(c.message)]
    assert failed and len(unmatched) <= len(failed) / 10, unmatched


def test_the_language_of_a_submission_is_its_metadata(tmp_path):
    from attnlib_grader.submissions import language

    nb = nbformat.v4.new_notebook()
    assert language(nbformat.writes(nb).encode()) == "en"
    nb.metadata["attnlib"] = {"language": "ko"}
    assert language(nbformat.writes(nb).encode()) == "ko"
    nb.metadata["attnlib"] = {"language": "xx"}
    assert language(nbformat.writes(nb).encode()) == "en"
    assert language(b"{ broken") == "en" and language(os.urandom(64)) == "en"


# ------------------------------------------------------------------------- every set's public checks
def _solutions(name: str) -> dict:
    """The namespace of a set's solution notebook, run once here (as test_public_audit runs it)."""
    from exercise_helpers import exercises
    from test_public_audit import solutions_namespace

    return solutions_namespace(exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb"))


def _public_messages(name: str, question: str, namespace: dict) -> dict[str, dict[str, str]]:
    """{language: {case: message}} of the cases of the question's public tests that fail on ``namespace``."""
    from exercise_helpers import exercises

    ex = exercises.parse(exercises.SOURCE_DIR / f"{name}.ipynb")
    q = next(q for q in ex.questions if q.name == question)
    exempt = ex.config.get("contract_exempt")
    source = q.test_file(name, with_hidden=False, exempt=exempt, real_references=True)
    failed: dict[str, dict[str, str]] = {}
    for language in ("en", "ko"):
        failed[language] = {}
        with messages.in_language(language):
            space, cases = exercises._public_cases(source, f"{question}.py")
            for case in cases:
                try:
                    case.test_func(*[namespace.get(p) for p in case._get_func_params()])
                except Exception as e:  # noqa: BLE001 - a failed check, or the wrong answer's own error
                    failed[language][case.name] = f"{type(e).__name__}: {e}"
    return failed


def _wrong_fixtures(name: str) -> list[str]:
    """The fixtures of a set that change only answers (no extra cells) and name a public message."""
    found = []
    for path in sorted((FIXTURES / name).glob("wrong_*.json")):
        spec = json.loads(path.read_text())
        if "public" in spec and not spec.get("cells_before") and not spec.get("cells_after"):
            found.append(path.stem)
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", SETS)
def test_every_sets_public_checks_speak_korean_on_its_wrong_answers(name):
    """For each wrong-answer fixture: the same public cases fail in Korean as in English, the English message
    holds the fixture's words, and the Korean one holds no English sentence (the learner's own error
    aside)."""
    import contextlib

    namespace = _solutions(name)
    saved = dict(namespace)
    problems, checked, fixtures = [], 0, _wrong_fixtures(name)
    for fixture in fixtures:
        spec = json.loads((FIXTURES / name / f"{fixture}.json").read_text())
        try:
            with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
                for source in spec["answers"].values():
                    exec(compile(source, "<answer cell>", "exec"), namespace)
            for question, words in spec["public"].items():
                failed = _public_messages(name, question, namespace)
                if not any(words in m for m in failed["en"].values()):
                    continue  # a wrong answer that later cells turn into the failure: not reproduced here
                checked += 1
                if set(failed["ko"]) != set(failed["en"]):
                    problems.append(f"{fixture} {question}: other cases fail in Korean: {failed}")
                for case, message in failed["ko"].items():
                    left = ENGLISH_SENTENCE.findall(LEARNERS_OWN.sub("", message))
                    if left:
                        problems.append(f"{fixture} {question} {case}: English left {left}: {message[:300]}")
        finally:
            namespace.clear()
            namespace.update(saved)
    assert problems == []
    assert checked >= len(fixtures) / 2, f"only {checked} of {len(fixtures)} fixtures reproduced in-process"
