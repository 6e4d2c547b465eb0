"""What the grader writes: one label per learner, feedback rendered inertly, and results as grading goes.

- ``label``: a learner's file name as a label that is one-to-one (two names never share a label, a CSV row or
  a feedback file), fits the file system (at most ``MAX_LABEL_BYTES``, with a hash of the name when cut) and
  is plain text: letters, digits and `` -_.,()=+@``; any other character is written ``%XX`` per byte of its
  UTF-8 (or of the raw byte, for a name that is not UTF-8), ``%`` included.
- ``inert``: learner text (exception messages, printed names, what a test quotes back) as Markdown that shows
  exactly those characters and makes nothing of them: ASCII punctuation backslash-escaped (no heading, list,
  emphasis, link, raw HTML or entity can start) but "(" (alone it starts nothing, "[" and ")" being escaped;
  escaped, Jupyter's MathJax reads "\\(" as the start of inline maths), control and invisible characters
  (terminal escapes, NUL, direction overrides) written as ``<U+XXXX>``, one line per line with blank lines
  dropped (nothing leaves the list item it is in). The feedback and the rubrics use this one renderer for
  every text.
- ``Results``: ``scores.csv``, ``feedback/<label>.md`` (the teacher's, with the rubrics) and
  ``for_learners/<label>.md`` (without them) written as each submission is graded, so one failure
  loses nothing else; the CSV is rewritten in order at the end, with the same scores in the import formats of
  Canvas and Moodle (``gradebooks``: ``canvas.csv``, ``moodle.csv``).
"""

from __future__ import annotations

import csv
import hashlib
import io
import os
import threading
import unicodedata
from pathlib import Path
from typing import Any

from attnlib.grading.messages import in_language, say
from attnlib_grader import gradebooks

MAX_LABEL_BYTES = 200  # a label's UTF-8; its feedback file adds ".md" (the usual limit is 255 bytes a name)
_KEEP = set(" -_.,()=+@")
_HEADER_NOTE = "submission"


LEARNERS = "for_learners"  # the folder of the feedback without the teacher's rubrics


def escaped(text: str) -> str:
    """``text`` with every character but letters, digits and `` -_.,()=+@`` written ``%XX`` (one-to-one)."""
    out = []
    for i, c in enumerate(text):
        if (c.isalnum() and unicodedata.category(c)[0] in "LN") or (c in _KEEP and not (i == 0 and c == ".")):
            out.append(c)
        else:
            data = c.encode("utf-8", "surrogateescape")
            out.append("".join(f"%{b:02X}" for b in data))
    return "".join(out) or "%"


def label(file_name: str) -> str:
    """The label of a submitted file: its name without ``.ipynb`` (another case of the extension is kept as
    ``!IPYNB``), escaped, cut to ``MAX_LABEL_BYTES`` with ``~`` and a hash of the whole name when longer."""
    stem, extension = file_name, ""
    if file_name.lower().endswith(".ipynb"):
        stem, extension = file_name[:-6], file_name[-5:]
    text = escaped(stem) + ("" if extension in ("", "ipynb") else "!" + escaped(extension))
    if len(text.encode()) <= MAX_LABEL_BYTES:
        return text
    digest = hashlib.sha256(file_name.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    cut = text.encode()[: MAX_LABEL_BYTES - 17].decode("utf-8", "ignore")
    return f"{cut}~{digest}"


def csv_cell(text: str) -> str:
    """A label in a spreadsheet: one that starts like a formula gets a leading ``'`` (no label holds one)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text


# Characters a reader cannot see, or that act on the screen: controls (terminal escapes, NUL), formats
# (direction overrides), surrogates, private use, unassigned, line and paragraph separators.
INVISIBLE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _visible(c: str) -> str:
    return f"<U+{ord(c):04X}>"


def plain(text: Any) -> str:
    """``text`` as plain text that shows those very characters (Gradescope's output): the invisible ones
    written as ``<U+XXXX>``, line breaks kept."""
    text = str(text).replace("\r\n", "\n")
    return "".join(_visible(c) if unicodedata.category(c) in INVISIBLE and c != "\n" else c for c in text)


def inert(text: Any, indent: str = "") -> str:
    """``text`` as Markdown that renders those very characters and nothing else (see the module)."""
    lines = []
    for line in str(text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        out = []
        for c in line:
            if c == "\t":
                out.append(" ")
            elif unicodedata.category(c) in INVISIBLE:
                out.append(_visible(c))
            elif c.isascii() and not c.isalnum() and c not in " (":  # "\\(" opens MathJax's inline maths
                out.append("\\" + c)
            else:
                out.append(c)
        if "".join(out).strip():
            lines.append("".join(out).strip())
    return ("\n" + indent).join(lines)


def rubric_lines(rubric: dict | None, points: float) -> list[str]:
    """A question's rubric for the teacher, in the one rendering that the solutions notebook and every
    feedback file show (the master's ``rubric``, as the build resolves it). A written answer's (``ideas``): a
    template the teacher fills in, points per idea, the common misconceptions and what else is accepted. An
    auto-graded question's (``tests``: ``[test, points, why]``): which tests carry which points, and why;
    the typical answers and what they score (``examples``)."""
    if not rubric:
        return []
    if "tests" in rubric:
        lines = [f"Points by test ({points:g} in all):", ""]
        lines += [inert(rubric["note"]), ""] if rubric.get("note") else []
        for name, pts, why in rubric["tests"]:
            lines.append(f"- {inert(name)} ({float(pts):g}): {inert(why, '  ')}")
        if rubric.get("examples"):
            lines += ["", f"Typical answers: {inert(rubric['examples'], '  ')}"]
        return lines + [""]
    lines = [f"Points: ___ / {points:g} (one box per idea the answer states correctly)", ""]
    lines += [f"- [ ] ({float(pts):g}) {inert(idea, '  ')}" for pts, idea in rubric.get("ideas", [])]
    for title, key in (("Common misconceptions", "misconceptions"), ("Also accepted", "alternatives")):
        if rubric.get(key):
            lines += ["", f"{title}:", ""] + [f"- {inert(text, '  ')}" for text in rubric[key]]
    return lines + [""]


def feedback(result: Any, set_name: str, rubrics: dict | None = None) -> str:
    """A learner's feedback in Markdown: score per question and what failed (hidden tests: message only),
    and each question's rubric for the teacher (``rubrics``: question -> rubric; a written answer's as a
    template). In the language of the submission (``result.language``), the teacher's rubrics in English."""
    with in_language(getattr(result, "language", "en")):
        return _feedback(result, set_name, rubrics)


def _feedback(result: Any, set_name: str, rubrics: dict | None) -> str:
    auto = [q for q in result.questions if not q.manual]
    total, possible = sum(q.score for q in auto), sum(q.possible for q in auto)
    lines = [
        "# " + say("Feedback: {set}, {name}", set=inert(set_name), name=inert(result.name)),
        "",
        say("Automatic score: {score:g} / {possible:g}", score=total, possible=possible),
        "",
    ]
    if rubrics is not None:  # the teacher's copy
        lines += [
            "> "
            + say(
                "Teacher's copy: its rubrics say what the hidden tests check. Give the learner {path}, the "
                "same feedback without them.",
                path=inert(str(Path(LEARNERS) / result.name)) + ".md",
            ),
            "",
        ]
    for q in result.questions:
        if q.manual:
            shown = say(
                "{question}: graded by your teacher ({points:g} points)",
                question=inert(q.name),
                points=q.possible,
            )
            lines += [f"## {shown}", ""]
            with in_language("en"):
                lines += rubric_lines((rubrics or {}).get(q.name), q.possible)
            continue
        lines += [f"## {inert(q.name)}: {q.score:g} / {q.possible:g}", ""]
        if q.error:
            lines += [f"- {inert(q.error, '  ')}", ""]
        for case in q.cases:
            kind = say("hidden test" if case.hidden else "public test")
            mark = say("passed" if case.passed else "FAILED")
            text = "- " + say(
                "{kind} {case} ({points:g} points): {mark}",
                kind=kind,
                case=inert(case.name),
                points=case.points,
                mark=mark,
            )
            if not case.passed and case.message:
                text += "\n  " + inert(case.message, "  ")
            lines.append(text)
        lines.append("")
        if (rubrics or {}).get(q.name):
            lines += [say("Rubric (for the teacher):"), ""]
            with in_language("en"):
                lines += rubric_lines(rubrics[q.name], q.possible)
    if result.notes:
        lines += (
            ["## " + say("Notes on running your notebook"), ""]
            + [f"- {inert(n, '  ')}" for n in result.notes]
            + [""]
        )
    return "\n".join(lines)


class Results:
    """``out/scores.csv`` (with ``canvas.csv`` and ``moodle.csv``), ``out/feedback/<label>.md`` (the
    teacher's: with each question's rubric) and ``out/for_learners/<label>.md`` (the same without the rubrics,
    which say what the hidden tests check), written as each submission is graded."""

    def __init__(self, out: str | Path, questions: list[dict], set_name: str) -> None:
        self.out, self.set_name = Path(out), set_name
        for folder in ("feedback", LEARNERS):
            (self.out / folder).mkdir(parents=True, exist_ok=True)
        self.names = [q["name"] for q in questions]
        self.rubrics = {q["name"]: q.get("rubric") for q in questions}
        self.automatic = sum(float(q["points"]) for q in questions if not q.get("manual"))
        self.written = sum(float(q["points"]) for q in questions if q.get("manual"))
        self.lock = threading.Lock()
        self.rows: dict[str, list[str]] = {}
        self.problems: list[str] = []
        self._write_csv()

    def _row(self, result: Any) -> list[str]:
        auto = [q for q in result.questions if not q.manual]
        scores = ("" if q.manual else f"{q.score:g}" for q in result.questions)
        total, possible = sum(q.score for q in auto), sum(q.possible for q in auto)
        return [csv_cell(result.name), *scores, f"{total:g}", f"{possible:g}"]

    def _write_csv(self) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([_HEADER_NOTE, *self.names, "auto_score", "auto_possible"])
        order = sorted(self.rows, key=lambda n: n.encode("utf-8", "surrogateescape"))
        writer.writerows(self.rows[name] for name in order)
        scores = {self.rows[n][0]: self.rows[n][-2] for n in order}  # label -> automatic score
        for name, text in (
            ("scores.csv", buffer.getvalue()),
            ("canvas.csv", gradebooks.canvas(self.set_name, scores, self.automatic, self.written)),
            ("moodle.csv", gradebooks.moodle(self.set_name, scores, self.written)),
        ):
            partial = self.out / f"{name}.partial"
            partial.write_text(text, encoding="utf-8")
            os.replace(partial, self.out / name)

    def add(self, result: Any) -> None:
        """Write this submission's feedback and its row now; a failure to write one is reported, not fatal."""
        with self.lock:
            try:
                for folder, rubrics in (("feedback", self.rubrics), (LEARNERS, None)):
                    path = self.out / folder / f"{result.name}.md"
                    path.write_text(feedback(result, self.set_name, rubrics), encoding="utf-8")
            except OSError as e:
                self.problems.append(f"{result.name}: feedback not written ({type(e).__name__}: {e})")
            self.rows[result.name] = self._row(result)
            self._write_csv()
