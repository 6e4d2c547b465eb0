"""otter's report of a ``grader.check`` in the learner's language: the lines around the checks' messages.

otter-grader 7 writes "q1 results: All test cases passed!" and "q1 results:" / "case result:" around the
messages (``TestFile.summary`` and ``_repr_html_``). In English the result is otter's own object; in another
language ``Checked`` wraps it and writes the same lines from the catalogue (``messages.say``), with the same
layout, and hands every other attribute on to otter's object.
"""

from __future__ import annotations

import html
import random
import re
import sys
from textwrap import indent
from typing import Any

from attnlib.grading.messages import language, say

PASSED_EMOJI = ["🍀", "🎉", "🌈", "🙌", "🚀", "🌟", "✨", "💯"]  # otter's own
# otter's first lines of a case's message (otter.test_files.exception_test)
OTTER_LINES = [
    (re.compile(r"^✅ Test case passed$", re.M), lambda m: "✅ " + say("Test case passed")),
    (re.compile(r"^❌ Test case failed$", re.M), lambda m: "❌ " + say("Test case failed")),
    (
        re.compile(r"^Error at line (\d+) in test (\S+):$", re.M),
        lambda m: say("Error at line {line} in test {test}:", line=m.group(1), test=m.group(2)),
    ),
]


def case_message(text: str | None) -> str:
    """A case's message with otter's own lines in the current language (the checks' lines already are)."""
    text = text or ""
    for pattern, replace in OTTER_LINES:
        text = pattern.sub(replace, text, count=1)
    return text


class Checked:
    """otter's result of one question (a ``TestFile``), shown in the current language."""

    def __init__(self, result: Any) -> None:
        self.result = result

    def __getattr__(self, name: str) -> Any:
        return getattr(self.result, name)

    def _cases(self, public_only: bool) -> list[Any]:
        return [c for c in self.result.test_case_results if not (public_only and c.test_case.hidden)]

    def summary(self, public_only: bool = False) -> str:
        """As ``TestFile.summary``: one line when every case passed, else each case's result."""
        r = self.result
        if (not public_only and r.passed_all) or (public_only and r.passed_all_public):
            text = say("{name} results: All test cases passed!", name=r.name)
            for c in self._cases(public_only):
                if c.test_case.success_message is not None:
                    text += "\n" + say(
                        "{case} message: {text}", case=c.test_case.name, text=c.test_case.success_message
                    )
            return text
        parts = []
        for c in self._cases(public_only):
            text = ""
            shown = c.test_case.success_message if c.passed else c.test_case.failure_message
            if shown is not None:
                text += say("{case} message: {text}", case=c.test_case.name, text=shown) + "\n\n"
            text += say("{case} result:", case=c.test_case.name) + "\n"
            text += indent(case_message(c.message).strip(), "    ") + "\n\n"
            parts.append(text.strip())
        return say("{name} results:", name=r.name) + "\n" + indent("\n\n".join(parts), "    ")

    def __repr__(self) -> str:
        return self.summary()

    def _repr_html_(self) -> str:
        r, name = self.result, f"<pre style='display: inline;'>{html.escape(self.result.name)}</pre>"
        if r.passed_all:
            return f"<p><strong>{name}</strong> {say('passed!')} {random.choice(PASSED_EMOJI)}</p>"
        out = f"<p><strong style='color: red;'>{say('{name} results:', name=name)}</strong></p>"
        for c in r.test_case_results:
            case = f"<pre style='display: inline;'>{html.escape(c.test_case.name)}</pre>"
            out += f"<p><strong>{say('{case} result:', case=case)}</strong></p>"
            out += f"<pre>{html.escape(indent(case_message(c.message), '    '))}</pre>"
        return out


def in_language(result: Any) -> Any:
    """otter's result as it is in English, wrapped (``Checked``) in any other language."""
    return result if language() == "en" else Checked(result)


def notebook_class(base: type) -> type:
    """otter's ``Notebook`` class with ``check`` showing its result in the current language."""

    class Notebook(base):  # type: ignore[misc, valid-type]
        def check(self, question: str, global_env: dict[str, Any] | None = None) -> Any:
            # otter reads the caller's globals two frames up; this override is one more frame
            env = global_env if global_env is not None else sys._getframe(1).f_globals
            return in_language(super().check(question, env))

    Notebook.__name__ = Notebook.__qualname__ = "Notebook"
    return Notebook
