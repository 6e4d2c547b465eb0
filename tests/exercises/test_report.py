"""The feedback file and the solutions notebook show each question's rubric through the grader's one renderer
(report.rubric_lines), and learner text stays text."""

from types import SimpleNamespace

from attnlib_grader import report
from markdown_it import MarkdownIt

AUTO = {"tests": [["hidden_a", 1.5, "the values (S = 1 included)"], ["hidden_b", 0.5, "no loop"]]}
WRITTEN = {"ideas": [[1, "an idea"], [1, "another"]], "misconceptions": ["m"], "alternatives": ["a"]}


def result(language="en"):
    message = "wrong (see [x](y))"
    case = SimpleNamespace(name="hidden_a", hidden=True, points=1.5, passed=False, message=message)
    auto = SimpleNamespace(name="q1", manual=False, score=0.5, possible=2.0, error=None, cases=[case])
    written = SimpleNamespace(name="q2", manual=True, score=0, possible=2.0, error=None, cases=[])
    return SimpleNamespace(name="learner", questions=[auto, written], notes=[], language=language)


def test_the_feedback_shows_an_auto_graded_questions_rubric_after_its_tests():
    text = report.feedback(result(), "set", {"q1": AUTO, "q2": WRITTEN})
    q1 = text.split("## q1", 1)[1].split("\n## ", 1)[0]
    assert "Rubric (for the teacher):" in q1
    assert "\n".join(report.rubric_lines(AUTO, 2.0)).strip() in q1
    assert "- hidden\\_a (1.5): the values (S \\= 1 included\\)" in q1


def test_the_teachers_rubric_stays_english_in_a_korean_submissions_feedback():
    text = report.feedback(result("ko"), "set", {"q1": AUTO, "q2": WRITTEN})
    assert "채점 기준 (교사용):" in text and "Points by test (2 in all):" in text
    assert "Points: ___ / 2" in text  # the written answer's template


def test_inert_text_opens_no_maths_and_still_renders_as_text():
    """'(' is left as it is: escaped, Jupyter's MathJax would read '\\(' as inline maths. With '[', ')' and
    every other ASCII punctuation escaped, no link, list or HTML can start."""
    text = report.inert("(a) [b](c) 1) <i>x</i> *y*")
    assert "\\(" not in text
    tokens = MarkdownIt("commonmark").parse("- " + text)
    inline = [c for t in tokens if t.children for c in t.children]
    kinds = {t.type for t in tokens + inline}
    assert not kinds & {"link_open", "html_inline", "em_open", "ordered_list_open"}
    rendered = MarkdownIt("commonmark").render(text)
    assert "(a) [b](c) 1) &lt;i&gt;x&lt;/i&gt; *y*" in rendered


def test_the_learners_copy_of_the_feedback_holds_no_rubric(tmp_path):
    questions = [
        {"name": "q1", "points": 2, "rubric": AUTO},
        {"name": "q2", "points": 2, "manual": True, "rubric": WRITTEN},
    ]
    report.Results(tmp_path, questions, "set").add(result())
    teacher = (tmp_path / "feedback" / "learner.md").read_text()
    learner = (tmp_path / "for_learners" / "learner.md").read_text()
    assert "Rubric (for the teacher):" in teacher and "the values (S" in teacher  # the control
    assert "Rubric" not in learner and "the values (S" not in learner and "an idea" not in learner
    shown = MarkdownIt("commonmark").render(teacher)
    assert "Teacher's copy" in shown and "for_learners/learner.md" in shown and "copy" not in learner
    assert learner.split("## q1", 1)[1].split("\n\n", 1)[0] in teacher  # the same scores and messages
