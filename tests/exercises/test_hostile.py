"""The hostile fixtures (hostile_fixtures.py, issue 13's five classes): enough of them, no unfair point (their
declared scores are checked with every fixture's in test_grading.py), nothing leaked into their feedback, no
outlived process, and what a set switches off reported when reached."""

import csv
import json
import time
from collections import Counter

import pytest
from attnlib_grader import report
from exercise_helpers import FIXTURES, GRADER_SECRET, SETS

CLASSES = ("reading", "outliving", "breaking", "switch_off", "trust")
HOSTILE = [(s, p.stem) for s in SETS for p in sorted((FIXTURES / s).glob("hostile_*.json"))]


def spec_of(name, fixture):
    return json.loads((FIXTURES / name / f"{fixture}.json").read_text())


def test_hostile_fixtures_cover_every_class_in_at_least_four_sets():
    """Issue 13's five classes; issue 26's are swept over every set they apply to (test_hostile26.py)."""
    from test_hostile26 import CLASSES as CLASSES_26

    every = [
        (p.parent.name, json.loads(p.read_text())["class"]) for p in sorted(FIXTURES.glob("*/hostile_*.json"))
    ]
    per_class = Counter(kind for _, kind in every)
    assert len(every) >= 30 and len({name for name, _ in every}) >= 4, Counter(name for name, _ in every)
    assert all(per_class[kind] >= 4 for kind in CLASSES), per_class
    assert set(per_class) == set(CLASSES) | set(CLASSES_26)


@pytest.mark.parametrize("name,fixture", HOSTILE, ids=lambda v: str(v))
def test_hostile_fixture_leaks_nothing_into_its_feedback(graded, name, fixture):
    text = (graded[name]["out"] / "feedback" / f"{graded[name]['labels'][fixture]}.md").read_text()
    folder, bundle = graded[name]["folder"], graded[name]["bundle"]
    forbidden = [
        GRADER_SECRET,  # an environment variable of the grader
        str(folder),  # where the submissions are
        str(bundle),  # where the hidden tests are
        "not_a_notebook",  # a classmate's name
        "@test_case",  # hidden test code
        "exercises/source",
        "exercises/dist",
    ]
    assert not [f for f in forbidden if f in text], [f for f in forbidden if f in text]


@pytest.mark.parametrize(
    "name,fixture",
    [(s, f) for s, f in HOSTILE if spec_of(s, f).get("feedback_contains")],
    ids=lambda v: str(v),
)
def test_feedback_says_a_switched_off_function_was_reached(graded, name, fixture):
    text = (graded[name]["out"] / "feedback" / f"{graded[name]['labels'][fixture]}.md").read_text()
    for piece in spec_of(name, fixture)["feedback_contains"]:
        assert piece in text
    assert "your code called" in text


@pytest.mark.parametrize("name", SETS)
def test_no_learner_process_rewrites_the_scores_after_grading(graded, name):
    """The daemon fixtures append full marks to any scores.csv they find for a minute: none may survive."""
    out = graded[name]["out"]
    before = (out / "scores.csv").read_text()
    time.sleep(1.5)
    assert (out / "scores.csv").read_text() == before
    assert "pwned-by-daemon" not in before
    rows = {r["submission"]: r for r in csv.DictReader((out / "scores.csv").open(encoding="utf-8"))}
    for fixture, result in graded[name]["results"].items():
        auto = [q for q in result.questions if not q.manual]
        # a label that starts like a formula is written with a leading quote (report.csv_cell)
        assert rows[report.csv_cell(fixture)]["auto_score"] == f"{sum(q.score for q in auto):g}"


@pytest.mark.parametrize("name", SETS)
def test_untouched_notebook_passes_no_public_test(graded, name):
    """A blank answer must not be told it passes, structural tests (no loops) included."""
    result = graded[name]["results"]["untouched"]
    passing = [(q.name, c.name) for q in result.questions for c in q.cases if not c.hidden and c.passed]
    assert not passing


SWITCH_OFF = [(s, f) for s, f in HOSTILE if f.startswith("hostile_switch_off_")]


@pytest.mark.parametrize("name", sorted({s for s, _ in SWITCH_OFF}))
def test_switch_off_fixtures_would_score_without_the_switch_off(built, name, tmp_path):
    """Positive control: graded with an empty switch_off list, every switch_off fixture gets more than its
    declared score on a question it attacks, so what stops it is the switch-off, not a bug of its own."""
    import nbformat
    from attnlib_grader.grade import grade_folder, load_bundle
    from exercise_helpers import exercises

    bundle = load_bundle(built[name])
    bundle.config["switch_off"] = []
    folder = tmp_path / "submissions"
    folder.mkdir()
    specs = {f: spec_of(name, f) for s, f in SWITCH_OFF if s == name}
    for fixture, spec in specs.items():
        nb = exercises.submission(name, spec["answers"], spec["cells_before"], spec["cells_after"])
        nbformat.write(nb, folder / f"{fixture}.ipynb")
    for result in grade_folder(bundle, folder, tmp_path / "out", jobs=2):
        declared = specs[result.name]["scores"]
        scores = {q.name: q.score for q in result.questions if not q.manual}
        assert any(scores[q] > declared[q] for q in declared), (result.name, scores, declared)


CONTRACT = [(s, f) for s, f in HOSTILE if spec_of(s, f).get("contract")]


@pytest.mark.parametrize("name,fixture", CONTRACT, ids=lambda v: str(v))
def test_contract_fixtures_are_caught_by_their_rule(graded, name, fixture):
    """Each contract fixture's feedback names the rule it breaks (checks.contract, on every call)."""
    text = (graded[name]["out"] / "feedback" / f"{graded[name]['labels'][fixture]}.md").read_text()
    words = {"mutation": "in place", "repeat": "called again with the same inputs", "dtype": "keep the dtype"}
    for function, rule in spec_of(name, fixture)["contract"].items():
        # the feedback renders learner-facing names inertly (report.inert: context\_gru\_step)
        assert report.inert(function) in text and words[rule] in text, (rule, text[:2000])


@pytest.mark.parametrize("name", sorted({s for s, _ in CONTRACT}))
def test_contract_fixtures_would_score_without_the_contract(built, name, tmp_path):
    """Positive control: graded with their function exempt from the rule they break, the contract fixtures
    score more than declared, so it is the contract that takes their points."""
    import nbformat
    from attnlib_grader.grade import grade_folder, load_bundle
    from exercise_helpers import exercises

    bundle = load_bundle(built[name])
    folder = tmp_path / "submissions"
    folder.mkdir()
    specs = {f: spec_of(name, f) for s, f in CONTRACT if s == name}
    exempt = bundle.config.setdefault("contract_exempt", {})
    for fixture, spec in specs.items():
        for function, rule in spec["contract"].items():
            exempt.setdefault(function, []).append(rule)
        nb = exercises.submission(name, spec["answers"], spec["cells_before"], spec["cells_after"])
        nbformat.write(nb, folder / f"{fixture}.ipynb")
    for result in grade_folder(bundle, folder, tmp_path / "out", jobs=2):
        declared = specs[result.name]["scores"]
        scores = {q.name: q.score for q in result.questions if not q.manual}
        assert any(scores[q] > declared[q] for q in declared), (result.name, scores, declared)
