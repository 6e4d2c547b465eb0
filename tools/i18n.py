"""The Korean edition: translation files, and the Korean pages generated from them.

The English pages are the source. Each translated page has one translation file, i18n/ko/<page>.yml, with one
entry per markdown cell of a notebook (keyed by the cell's id) or per section of a Markdown page (keyed by its
heading). An entry holds the English text it translates (`en`) and its Korean (`ko`):

    - id: bb03cd8e
      en: |-
        # 3. The attention function ...
      ko: |-
        # 3. 어텐션 함수와 닷-프로덕트 어텐션 ...

`sync` brings the files in step with the English pages: a new cell gets an entry without `ko`; a cell whose
English changed keeps its Korean, gets the new English in `en` and the English its Korean translated in `was`
(gettext's "fuzzy"): the entry is out of date until a translator updates `ko` and deletes `was`. `generate`
writes ko/<page>: a notebook's code cells and outputs are the English ones, byte for byte, and its markdown
cells are the Korean. The Korean pages are generated, never edited by hand.

    python tools/i18n.py sync [page ...]      # create or update translation files
    python tools/i18n.py generate             # write ko/: the complete pages, ko/_toc.yml, ko/_config.yml
    python tools/i18n.py generate --check     # exit 1 and list the ko/ files that differ from what it writes
    python tools/i18n.py status               # what is left to translate, page by page
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path

import generated
import i18n_book
import yaml

ROOT = Path(__file__).resolve().parent.parent
LANG = "ko"
I18N = ROOT / "i18n" / LANG
OUT = ROOT / LANG
# The pages of the Korean edition, in the order of the English table of contents.
PAGES = [
    "intro.md",
    "how_to_run.md",
    "notation.md",
    *[
        f"{d}/{p.name}"
        for p in sorted((ROOT / "chapters").glob("*.ipynb"))
        for d in ("chapters", "exercises")
    ],
    "exercises/index.md",
    "exercises/teachers.md",
]

HEADING = re.compile(r"^#{1,6} \S")
FENCE = re.compile(r"^(`{3,}|~{3,})")


# ---------------------------------------------------------------- the English source, as entries


def md_sections(text: str) -> list[tuple[str, str]]:
    """A Markdown page cut before each heading outside a code fence: [(key, text)], the texts joined give
    the page back. The key is the heading's words in lower case joined by '-', numbered if repeated."""
    blocks: list[list[str]] = [[]]
    fence = None
    for line in text.splitlines(keepends=True):
        m = FENCE.match(line)
        if m and fence is None:
            fence = m.group(1)[0] * 3
        elif fence and line.startswith(fence):
            fence = None
        elif fence is None and HEADING.match(line) and any(b.strip() for b in blocks[-1]):
            blocks.append([])
        blocks[-1].append(line)
    sections, seen = [], {}
    for block in blocks:
        body = "".join(block)
        first = next((ln for ln in block if HEADING.match(ln)), "preamble")
        key = "-".join(re.findall(r"[a-z0-9]+", first.lstrip("#").lower()))[:60] or "section"
        seen[key] = seen.get(key, 0) + 1
        sections.append((key if seen[key] == 1 else f"{key}-{seen[key]}", body))
    return sections


def english_entries(page: str) -> list[tuple[str, str]]:
    """[(key, English text)] of a page: its markdown cells (notebook) or sections (Markdown page)."""
    path = ROOT / page
    if page.endswith(".ipynb"):
        nb = json.loads(path.read_text())
        return [(c["id"], "".join(c["source"])) for c in nb["cells"] if c["cell_type"] == "markdown"]
    return md_sections(path.read_text())


# ---------------------------------------------------------------- translation files


def translation_path(page: str) -> Path:
    return I18N / (page.rsplit(".", 1)[0] + ".yml")


class _Literal(str):
    pass


def _literal(dumper, data):
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|")


yaml.SafeDumper.add_representer(_Literal, _literal)

HEADER = """\
# The Korean translation of {page} (tools/i18n.py).
# One entry per {unit}; `en` is the English the entry translates, `ko` its Korean.
# An entry with `was` is out of date: its English changed from `was` to `en`; update `ko`, then delete `was`.
# Never edit `en` or `id` by hand: `python tools/i18n.py sync` writes them.
"""


# libyaml's parser where PyYAML was built with it: the pure-Python one made `generate` take seconds
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml(path: Path):
    return yaml.load(path.read_text(), Loader=_LOADER)


def load(page: str) -> list[dict]:
    path = translation_path(page)
    if not path.exists():
        return []
    data = _yaml(path) or {}
    return data.get("cells", [])


def dump(page: str, entries: list[dict]) -> str:
    cells = []
    for e in entries:
        cell = {"id": e["id"]}
        for field in ("was", "en", "ko"):
            if e.get(field) is not None:
                cell[field] = _Literal(e[field])
        cells.append(cell)
    unit = (
        "markdown cell, keyed by the cell's id"
        if page.endswith(".ipynb")
        else "section, keyed by its heading"
    )
    body = yaml.safe_dump(
        {"source": page, "cells": cells},
        allow_unicode=True,
        sort_keys=False,
        width=10_000,
        default_flow_style=False,
    )
    return HEADER.format(page=page, unit=unit) + body


def sync(page: str) -> list[dict]:
    """The translation entries of `page`, in step with its English (see the module's docstring)."""
    old = {e["id"]: e for e in load(page)}
    entries = []
    for key, en in english_entries(page):
        e = dict(old.get(key, {"id": key}))
        if e.get("en") is not None and e["en"] != en and e.get("ko") is not None:
            e.setdefault("was", e["en"])
        if e.get("was") == en:  # changed back
            e.pop("was")
        e["en"] = en
        entries.append(e)
    return entries


def problems(page: str) -> list[str]:
    """What keeps the translation of `page` from being complete and current."""
    found = []
    current = english_entries(page)
    entries = load(page)
    if not translation_path(page).exists():
        return [f"{page}: no translation file ({translation_path(page).relative_to(ROOT)})"]
    if [e["id"] for e in entries] != [k for k, _ in current] or any(
        e.get("en") != en for e, (_, en) in zip(entries, current, strict=True)
    ):
        found.append(f"{page}: the translation file is not in step with the English: run tools/i18n.py sync")
    for e in entries:
        if not (e.get("ko") or "").strip():
            found.append(f"{page} [{e['id']}]: not translated")
        elif e.get("was") is not None:
            found.append(f"{page} [{e['id']}]: out of date (its English changed; update ko, then delete was)")
        else:
            short = short_translation(e["en"], e["ko"])
            found += [
                f"{page} [{e['id']}]: {p}"
                for p in broken_invariants(e["en"], e["ko"])
                + lint(e["ko"], e["en"])
                + ([short] if short else [])
            ]
    return found


# ---------------------------------------------------------------- what a translation keeps

# Everything in a cell that is not prose: a translation keeps each of these, the same number of times.
# Inline math may run onto the next line, never over a blank one (as MyST's dollarmath reads it).
_MATH = re.compile(r"\$\$.+?\$\$|(?<![\\$])\$(?!\$)(?:\\.|[^$\n]|\n(?![ \t]*\n))+?\$", re.S)
_ROLE = re.compile(r"(?<!`)\{(glue:\w+|glue|numref|ref|doc|eq|download)\}`([^`]*)`")  # not `{x}` in code
_CODE = re.compile(r"(?<!`)`((?:[^`\n]|\n(?![ \t]*\n))+)`(?!`)")  # may run onto the next line
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_LABEL = re.compile(r"^\((\S+)\)=\s*$", re.M)
_FENCE = re.compile(r"^[ \t]*(`{3,}|:{3,})[ \t]*(\{[\w-]+\}|\w*)", re.M)
_OPTION = re.compile(r"^[ \t]*:(name|label|width|align|class|alt-none):(.*)$", re.M)
_TAG = re.compile(r"</?(\w+)[^>]*>")
_HEADING_LEVEL = re.compile(r"^(#{1,6}) ", re.M)


def _role_target(name: str, body: str) -> str:
    m = re.search(r"<([^>]+)>\s*$", body)
    return f"{name}:{(m.group(1) if m else body).strip()}"


def invariants(text: str) -> dict[str, list[str]]:
    """The parts of a Markdown text that its translation must keep, each sorted (so order may change)."""
    prose = re.sub(r"^(`{3,}).*?^\1", "", text, flags=re.M | re.S)  # fenced code kept whole below
    found = {
        "fenced code": sorted(m.group(0) for m in re.finditer(r"^(`{3,})(?!\{).*?^\1", text, re.M | re.S)),
        "math": sorted(m.group(0) for m in _MATH.finditer(prose)),
        "roles": sorted(_role_target(*m.groups()) for m in _ROLE.finditer(prose)),
        "links and images": sorted(_LINK.findall(prose)),
        "labels": sorted(_LABEL.findall(prose)),
        "directives": [" ".join(m.groups()) for m in _FENCE.finditer(text)],
        "directive options": sorted(f"{k}:{v.strip()}" for k, v in _OPTION.findall(text) if k != "alt-none"),
        "html tags": sorted(m.group(0).split()[0].rstrip(">") for m in _TAG.finditer(prose)),
        "heading levels": _HEADING_LEVEL.findall(prose),
    }
    stripped = _ROLE.sub("", _MATH.sub("", prose))
    found["inline code"] = sorted(_CODE.findall(stripped))
    return found


def broken_invariants(en: str, ko: str) -> list[str]:
    """What the Korean `ko` lost or added against the English `en` (see `invariants`)."""
    a, b = invariants(en), invariants(ko)
    out = []
    for kind in a:
        if a[kind] != b[kind]:
            lost = [x for x in a[kind] if x not in b[kind]]
            added = [x for x in b[kind] if x not in a[kind]]
            parts = [f"missing {lost[:3]!r}"] if lost else []
            parts += [f"extra {added[:3]!r}"] if added else []
            detail = "; ".join(parts) or "a different count or order"
            out.append(f"{kind}: {detail}")
    return out


# A translation much shorter than its English is a summary, not a translation. Korean writes the same prose
# in fewer characters than English (a syllable block is a character), so the check compares the prose alone
# (no math, code, roles, link targets, tags or Markdown marks), as a ratio of characters other than spaces, on
# entries long enough for a ratio to mean something. Calibrated on the entries in the translators' clones at
# 00:30 UTC on 2026-11-28 (284 entries of 120+ English characters: ratio 0.375 to 0.895, median 0.52, 1st
# percentile 0.41) and checked on main's at 01:00 (333 entries: 0.375 to 0.895, median 0.525, 1st percentile
# 0.417; the lowest, 0.375, is a full translation); tests/i18n/test_completeness.py prints the distribution.
SHORT_RATIO = 0.30
MIN_PROSE = 120  # English characters of prose below which the ratio is not checked


def prose_length(text: str) -> int:
    """Characters of prose in a Markdown text, spaces and punctuation-only marks left out."""
    text = re.sub(r"^(`{3,}|:{3,}).*?^\1", "", text, flags=re.M | re.S)
    text = _ROLE.sub("", _MATH.sub("", text))
    text = _CODE.sub("", text)
    text = re.sub(r"\]\([^)]*\)", "]", text)
    text = _TAG.sub("", text)
    text = re.sub(r"^\s*:[\w-]+:.*$", "", text, flags=re.M)  # directive options
    return len(re.sub(r"[\s#*_>|\[\]()`$-]", "", text))


def short_translation(en: str, ko: str) -> str | None:
    """A problem when the Korean prose is under SHORT_RATIO of the English's (see prose_length)."""
    n_en = prose_length(en)
    if n_en < MIN_PROSE:
        return None
    ratio = prose_length(ko) / n_en
    if ratio < SHORT_RATIO:
        return f"length: the Korean prose is {ratio:.2f} of the English (under {SHORT_RATIO}): a summary?"
    return None


# Emphasis that Markdown does not close: `**어텐션(attention)**은` shows its asterisks, because a closing `**`
# (or `*`) after punctuation must be followed by a space or punctuation (CommonMark's right-flanking rule).
# The text is parsed as the book parses it (markdown-it with dollar math and colon fences) and the asterisks
# left in its text counted: more than in the English is a trap.
@functools.cache
def _markdown():
    """The book's Markdown parser, made once (making one takes longer than parsing an entry)."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    return MarkdownIt("commonmark").use(dollarmath_plugin).use(colon_fence_plugin)


def _literal_asterisks(text: str) -> list[str]:
    found = []
    for token in _markdown().parse(text):
        for child in token.children or []:
            if child.type != "text":
                continue
            # an asterisk with a space on both sides is a times sign ("W_c * H"), never emphasis
            text = re.sub(r"(?<=\s)\*(?=\s)", "", child.content)
            if "*" in text:
                found.append(text)
    return found


GLOSSARY = ROOT / "i18n" / "glossary.yml"


@functools.lru_cache(maxsize=4)
def _glossary(path: Path, mtime: int) -> dict:
    return _yaml(path)


def lint(ko: str, en: str = "") -> list[str]:
    """Korean-only rules: emphasis left unclosed (asterisks that show), the glossary's words never to use."""
    out = []
    shown, expected = _literal_asterisks(ko), _literal_asterisks(en)
    if sum(t.count("*") for t in shown) > sum(t.count("*") for t in expected):
        where = next((t for t in shown if t not in expected), shown[0])[:80]
        out.append(f"emphasis: asterisks show as text (a closing * or ** after punctuation): {where!r}")
    if GLOSSARY.exists():
        for rule in _glossary(GLOSSARY, GLOSSARY.stat().st_mtime_ns).get("never", []):
            for m in re.finditer(rule["pattern"], ko):
                out.append(f"glossary: {m.group(0)!r}: {rule['why']}")
    return out


# ---------------------------------------------------------------- the generated Korean pages


def korean_page(page: str, present: set[str] | None = None, labels: dict | None = None) -> str:
    """The text of ko/<page>: the English page with each entry's text replaced by its Korean. A notebook is
    written as nbformat writes the English one (tools/execute_notebooks.py), so that its code cells and
    outputs are the same bytes. ``present``: the pages (without suffix) of the Korean edition; references to
    other pages go to the English site (tools/i18n_book.py)."""
    ko = {e["id"]: e["ko"] for e in load(page)}
    present = present if present is not None else edition_pages()
    refs = i18n_book.References(page.rsplit(".", 1)[0], present, labels)
    path = ROOT / page
    if page.endswith(".ipynb"):
        nb = json.loads(path.read_text())
        for cell in nb["cells"]:
            if cell["cell_type"] == "markdown":
                cell["source"] = refs.markdown(ko[cell["id"]]).splitlines(keepends=True)
        nb["metadata"] = korean_metadata(nb["metadata"])
        return json.dumps(nb, indent=1, ensure_ascii=False, sort_keys=True) + "\n"
    return "".join(refs.markdown(ko[key]) for key, _ in md_sections(path.read_text()))


def korean_metadata(metadata: dict) -> dict:
    """A Korean notebook's metadata: the English one with ``attnlib.language = "ko"``, which the checks of an
    exercise read to speak Korean (attnlib.grading.messages) and the grader to write Korean feedback."""
    return {**metadata, "attnlib": {**metadata.get("attnlib", {}), "language": "ko"}}


def parity(page: str) -> list[str]:
    """How ko/<page> differs from the English where it must not: a notebook's cell ids and types in the
    same order, its code cells (source, outputs, metadata) and the notebook's metadata the same JSON, byte
    for byte, but for the notebook's ``attnlib.language``, "ko" (``korean_metadata``). (Its markdown keeps
    the English's invariants: ``problems``.)"""
    english, korean = ROOT / page, OUT / page
    if not korean.exists():
        return [f"{page}: not in the Korean edition (no {korean.relative_to(ROOT)})"]
    if not page.endswith(".ipynb"):
        return []
    en, ko = json.loads(english.read_text()), json.loads(korean.read_text())
    found = []
    shape = [(c.get("id"), c["cell_type"]) for c in en["cells"]]
    if [(c.get("id"), c["cell_type"]) for c in ko["cells"]] != shape:
        found.append(f"{page}: the cells' ids and types differ from the English ones (or their order)")
    for a, b in zip(en["cells"], ko["cells"], strict=False):
        if a["cell_type"] == "code" and json.dumps(a, sort_keys=True) != json.dumps(b, sort_keys=True):
            found.append(f"{page} [{a.get('id')}]: the code cell or its outputs differ from the English")
    if korean_metadata(en.get("metadata", {})) != ko.get("metadata"):
        found.append(f"{page}: the notebook's metadata differs from the English (but for its language, ko)")
    for key in ("nbformat", "nbformat_minor"):
        if en.get(key) != ko.get(key):
            found.append(f"{page}: the notebook's {key} differs from the English")
    return found


def complete_pages() -> list[str]:
    """The pages whose translation is complete and current, in the order of PAGES: the Korean edition."""
    return [page for page in PAGES if not problems(page)]


def edition_pages() -> set[str]:
    return {page.rsplit(".", 1)[0] for page in complete_pages()}


def edition_files() -> dict[Path, str]:
    """Every file of ko/ that generate writes (the pages, the home notice, _toc.yml, _config.yml)."""
    pages = complete_pages()
    present = {page.rsplit(".", 1)[0] for page in pages}
    labels = i18n_book.figure_labels()
    files = {OUT / page: korean_page(page, present, labels) for page in pages}
    files.setdefault(OUT / "intro.md", i18n_book.home_notice())
    files[OUT / "_toc.yml"] = i18n_book.toc(present)
    files[OUT / "_config.yml"] = i18n_book.config()
    return files


def stale_files(files: dict[Path, str]) -> list[Path]:
    """Pages in ko/ that generate would not write now (their translation is no longer complete)."""
    candidates = [OUT / page for page in PAGES] + [OUT / "_toc.yml", OUT / "_config.yml"]
    return [path for path in candidates if path.exists() and path not in files]


def generate(check: bool = False) -> list[str]:
    """Write ko/ (or, with ``check``, only find what differs); return the files that differed."""
    files = edition_files()
    changed = [
        str(path.relative_to(ROOT))
        for path, text in files.items()
        if generated.update(path, text.encode(), check)
    ]
    for path in stale_files(files):
        changed.append(f"{path.relative_to(ROOT)} (no longer complete: removed)")
        if not check:
            path.unlink()
            if not any(path.parent.iterdir()):
                path.parent.rmdir()
    return changed


# ---------------------------------------------------------------- command line


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("command", choices=["sync", "generate", "status"])
    parser.add_argument("pages", nargs="*", help="pages relative to the repository root (default: all)")
    parser.add_argument("--check", action="store_true", help="generate: list what differs, exit 1 if any")
    args = parser.parse_args(argv)
    pages = args.pages or PAGES
    for page in pages:
        if page not in PAGES:
            parser.error(f"pages: {page!r} is not a page of the Korean edition ({', '.join(PAGES)})")
    if args.command == "sync":
        for page in pages:
            path = translation_path(page)
            path.parent.mkdir(parents=True, exist_ok=True)
            text = dump(page, sync(page))
            if not path.exists() or path.read_text() != text:
                path.write_text(text)
                print(f"wrote {path.relative_to(ROOT)}")
        return 0
    if args.command == "status":
        missing = []
        for page in pages:
            left = problems(page)
            if left:
                missing.append(page)
            print(f"{page}: {'complete' if not left else f'{len(left)} to do'}")
            for p in left[:20]:
                print(f"  {p}")
        print(f"status: {len(pages) - len(missing)} of {len(pages)} pages in the Korean edition")
        print(f"status: not yet in it: {', '.join(missing) or 'none'}")
        return 0
    if args.pages:
        parser.error("generate writes the whole Korean edition (every complete page): name no pages")
    changed = generate(check=args.check)
    if args.check:
        return generated.report(changed, "python tools/i18n.py generate")
    for shown in changed:
        print(f"generate: {shown}")
    print(f"generate: {len(complete_pages())} of {len(PAGES)} pages in the Korean edition")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
