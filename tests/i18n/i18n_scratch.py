"""A scratch copy of the course for tests that damage a translation or an English page: the English pages,
translation files and generated Korean pages of ``pages`` copied to a temporary root, with tools/i18n.py and
tools/i18n_book.py pointed at it."""

from __future__ import annotations

import shutil
from pathlib import Path

import colab_edition
import i18n_book

import i18n

ROOT = Path(i18n.ROOT)
SHARED = ["_toc.yml", "_config.yml", "i18n/glossary.yml", "i18n/ko/_toc.yml"]


def scratch_course(monkeypatch, tmp: Path, pages: list[str], korean: dict[str, str] | None = None) -> Path:
    """Copy ``pages`` (and what the tools read) to ``tmp``; ``korean``: page -> its translation file's text,
    written instead of the committed one (a test's own translation, never committed)."""
    for rel in SHARED + pages + [str(i18n.translation_path(p).relative_to(ROOT)) for p in pages]:
        src = ROOT / rel
        if src.exists():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(src, tmp / rel)
    for page, text in (korean or {}).items():
        path = tmp / i18n.translation_path(page).relative_to(ROOT)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for module in (i18n, i18n_book):
        monkeypatch.setattr(module, "ROOT", tmp)
        monkeypatch.setattr(module, "OUT", tmp / "ko")
    monkeypatch.setattr(i18n, "I18N", tmp / "i18n" / "ko")
    monkeypatch.setattr(i18n, "GLOSSARY", tmp / "i18n" / "glossary.yml")
    monkeypatch.setattr(i18n, "PAGES", [p for p in i18n.PAGES if p in pages])
    monkeypatch.setattr(i18n_book, "BOOK", tmp / "i18n" / "ko" / "_toc.yml")
    monkeypatch.setattr(colab_edition, "ROOT", tmp)
    return tmp


def translated_as_english(page: str) -> str:
    """A translation file whose every entry's 'Korean' is its English: complete and keeping every invariant,
    the starting point of a test that then damages one thing."""
    entries = i18n.sync(page)
    for entry in entries:
        entry.pop("was", None)
        entry["ko"] = entry["en"]
    return i18n.dump(page, entries)
