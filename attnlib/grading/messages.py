"""The messages of the exercise checks in the learner's language: English, or Korean from a catalogue.

Every message a learner can see in ``grader.check`` output or in the teacher's feedback is an English
*template* (``"{what} should lie between {low:g} and {high:g}"``) that ``say`` formats. In Korean, the
template is first looked up in the catalogue ``messages_ko.json`` (English template -> Korean template, with
the same ``{placeholders}``); ``tr`` translates a finished English text by exact lookup (the ``what=`` and
``hint=`` literals a test passes to the checks). Text the catalogue does not hold stays English.

The language, in this order (``language``):
1. a thread-local override, ``in_language("ko")``: the teacher's grader grades several submissions in
   threads, each in the language of its notebook;
2. the environment variable ``ATTNLIB_LANGUAGE`` (``en`` or ``ko``);
3. the running notebook's ``metadata.attnlib.language``, read once by ``grading.notebook`` (``remember``):
   in Jupyter through ``JPY_SESSION_NAME``, the notebook's path that Jupyter Server puts in the kernel's
   environment (jupyter_server PR 679); in Colab through ``google.colab._message.blocking_request
   ("get_ipynb")``, the notebook the browser holds. Any failure of this detection means English, silently;
4. English.
``tools/i18n.py generate`` writes ``metadata.attnlib.language = "ko"`` into the Korean exercise notebooks.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import string
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

LANGUAGES = ("en", "ko")
ENV = "ATTNLIB_LANGUAGE"
CATALOGUE = {"ko": Path(__file__).resolve().parent / "messages_ko.json"}
COLAB_TIMEOUT_S = 5
_LOCAL = threading.local()
_NOTEBOOK: list[str | None] = [None]  # the running notebook's language, once grading.notebook found it


@contextlib.contextmanager
def thread_setting(local: threading.local, name: str, value: Any) -> Iterator[None]:
    """``local.<name>`` is ``value`` in this thread inside the block, and what it was before (None if it was
    never set) after it, however the block ends: a setting of one grading thread that no other one sees."""
    before = getattr(local, name, None)
    setattr(local, name, value)
    try:
        yield
    finally:
        setattr(local, name, before)


@contextlib.contextmanager
def in_language(language: str) -> Iterator[None]:
    """Messages made in this thread, inside the block, are in ``language`` ("en" or "ko")."""
    if language not in LANGUAGES:
        raise ValueError(f"language must be one of {LANGUAGES}, got {language!r}")
    with thread_setting(_LOCAL, "language", language):
        yield


def language() -> str:
    """The language of the messages made now: "en" or "ko" (see the module's order)."""
    override = getattr(_LOCAL, "language", None)
    if override:
        return override
    chosen = os.environ.get(ENV, "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    return _NOTEBOOK[0] or "en"


def notebook_language(nb: Any) -> str | None:
    """``metadata.attnlib.language`` of a notebook (a dict of its JSON) when it is a known language."""
    try:
        found = nb["metadata"]["attnlib"]["language"]
    except (KeyError, TypeError, IndexError):
        return None
    return found if isinstance(found, str) and found in LANGUAGES else None


def _jupyter_notebook() -> Any:
    name = os.environ.get("JPY_SESSION_NAME", "")
    if not name.endswith(".ipynb"):
        return None
    # relative to the server's root, or absolute; the kernel runs in the notebook's folder
    for path in (Path(name), Path.cwd() / name, Path.cwd() / Path(name).name):
        if path.is_file() and path.stat().st_size < 50 * 2**20:
            return json.loads(path.read_text(encoding="utf-8"))
    return None


def _colab_notebook() -> Any:
    import sys

    if "google.colab" not in sys.modules:
        return None
    try:
        from google.colab import _message  # type: ignore[import-not-found]
    except ImportError:
        return None

    reply = _message.blocking_request("get_ipynb", timeout_sec=COLAB_TIMEOUT_S)
    return reply.get("ipynb") if isinstance(reply, dict) else None


def detect() -> str | None:
    """The running notebook's language (its metadata), or None where it cannot be found out."""
    for find in (_jupyter_notebook, _colab_notebook):
        try:
            found = notebook_language(find())
        except Exception:  # noqa: BLE001 - detection never breaks a check: English then
            found = None
        if found:
            return found
    return None


def remember() -> str:
    """Detect the running notebook's language once (``grading.notebook``); returns the language now."""
    _NOTEBOOK[0] = detect()
    return language()


@functools.lru_cache(maxsize=len(LANGUAGES))
def catalogue(language: str) -> dict[str, str]:
    """English template -> template in ``language`` (empty for English)."""
    path = CATALOGUE.get(language)
    return json.loads(path.read_text(encoding="utf-8")) if path is not None else {}


def placeholders(template: str) -> list[str]:
    """The ``{fields}`` of a template, each as written (name, conversion, format), sorted."""
    found = []
    for _, name, spec, conversion in string.Formatter().parse(template):
        if name is not None:
            found.append(f"{{{name}{'!' + conversion if conversion else ''}{':' + spec if spec else ''}}}")
    return sorted(found)


def tr(text: Any) -> Any:
    """``text`` in the current language where the catalogue holds it exactly; anything else as it is."""
    if not isinstance(text, str) or not text:
        return text
    lang = language()
    return text if lang == "en" else catalogue(lang).get(text, text)


def say(template: str, **fields: Any) -> str:
    """The message ``template.format(**fields)`` in the current language; text fields are translated
    (``tr``) first, so a label or a hint passed on from a test comes out in the same language."""
    lang = language()
    chosen = template if lang == "en" else catalogue(lang).get(template, template)
    return chosen.format(**{k: tr(v) for k, v in fields.items()})


__all__ = [
    "LANGUAGES",
    "catalogue",
    "detect",
    "in_language",
    "language",
    "remember",
    "say",
    "thread_setting",
    "tr",
]
