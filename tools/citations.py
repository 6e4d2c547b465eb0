"""Every numbered citation of a paper in the course, and the audit table that records what each one is.

    python tools/citations.py          # list the citations the table does not record, and stale entries

The course cites papers by number: "Luong et al.'s eq. 8", "their footnote 14", "Bahdanau et al.'s Fig. 2",
"§3.2.1", "appendix A.2.2", "Table 1", "Algorithm 1". A number is easy to get wrong and cannot be checked by
running code, so each one was checked against the paper's text by hand and recorded in
``tests/tooling/citations.yml``:

- ``papers``: for each paper, the version whose numbering was checked and, for every number the course cites,
  what that number is in the paper, in one phrase (``numbers``);
- ``citations``: every place the course cites a number, ``[file, cell id or "-", the citation as written,
  paper]``.

``tests/tooling/test_citations.py`` fails when a source cites a number that the table does not record (a new
citation must be checked against the paper and recorded), when the table records a citation no source makes
any more, when a recorded citation names a number its paper's entry does not list, and when a Korean entry
(``i18n/ko``) cites other numbers than the English it translates. It cannot read the papers: it checks that
every citation was audited, not that the audit was right.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import yaml
from notebooks import ROOT

TABLE = ROOT / "tests" / "tooling" / "citations.yml"
NOT_A_PAPER = "none"  # the paper key of a match that cites no paper (the course's own numbers)

_NUMBER = r"(?:\(\d+(?:\.\d+)*\)|\d+(?:\.\d+)*)"  # 5, 3.2.1 or (5)
_MORE = r"(?:\s*(?:,|and|-|–|to|or)\s*" + _NUMBER + r")*"  # ", 6", " and 6", "-10"
CITATION = re.compile(
    "|".join(
        [
            r"\b[Ee]q(?:s|uations?)?\.?\s+" + _NUMBER + _MORE,  # eq. 5, eqs. 5 and 6, eq. (5), equation 7
            r"§\s?\d+(?:\.\d+)*|\b(?:Sections?|Sec\.)\s*\d+(?:\.\d+)*",  # §3.2.1, Section 5, Sec. 3
            r"\b(?:Figs?\.|Figures?)\s*\d+" + _MORE,  # Fig. 2, Figure 3
            r"\b[Tt]ables?\s+\d+" + _MORE,  # Table 1, tables 4 and 6
            r"\b[Ff]ootnotes?\s+\d+" + _MORE,  # footnote 14
            r"\b[Aa]ppendi(?:x|ces)\s+[A-Z](?:\.\d+)*\b",  # appendix A.2.2
            r"\b(?:Algorithm|Theorem|Proposition|Lemma|Corollary)\s+\d+",
            r"\bpp?\.\s*\d+",  # p. 4
        ]
    )
)
KINDS = [  # how a citation's kind is written, and the one name the table uses for it
    (re.compile(r"^(?:[Ee]q(?:s|uations?)?\.?)\s*"), "eq."),
    (re.compile(r"^(?:§\s?|Sections?\s*|Sec\.\s*)"), "§"),
    (re.compile(r"^(?:Figs?\.|Figures?)\s*"), "Fig."),
    (re.compile(r"^[Tt]ables?\s+"), "Table"),
    (re.compile(r"^[Ff]ootnotes?\s+"), "footnote"),
    (re.compile(r"^[Aa]ppendi(?:x|ces)\s+"), "appendix"),
    (re.compile(r"^(Algorithm|Theorem|Proposition|Lemma|Corollary)\s+"), None),
    (re.compile(r"^pp?\.\s*"), "p."),
]


def sources(root: Path = ROOT) -> Iterator[tuple[str, str, str]]:
    """(file, cell id or "-", text) of every source the course writes citations in: the chapters and the
    exercise masters (every cell: prose, code comments, rubrics), the front pages, attnlib, the grader, the
    benchmarks and the recipes that compute stored results."""
    notebooks = [*root.glob("chapters/*.ipynb"), *root.glob("exercises/source/*.ipynb")]
    for path in sorted(notebooks):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            yield path.relative_to(root).as_posix(), cell["id"], "".join(cell["source"])
    files = [*root.glob("*.md"), *root.glob("exercises/*.md"), *root.glob("attnlib/**/*.py")]
    files += [*root.glob("grader/**/*.py"), *root.glob("benchmarks/**/*.py")]
    files += root.glob("tools/recipes/*.py")
    for path in sorted(files):
        yield path.relative_to(root).as_posix(), "-", path.read_text(encoding="utf-8")


def found(texts) -> set[tuple[str, str, str]]:
    """Every (file, cell, citation as written, whitespace collapsed) in ``texts``."""
    return {(f, c, " ".join(m.group().split())) for f, c, text in texts for m in CITATION.finditer(text)}


def numbers(citation: str) -> list[str]:
    """The single numbers a citation names, each as the table writes it: "eqs. 9-10" -> ["eq. 9", "eq. 10"],
    "tables 4 and 6" -> ["Table 4", "Table 6"], "Section 3.2" -> ["§3.2"]."""
    for pattern, kind in KINDS:
        head = pattern.match(citation)
        if head:
            kind = kind or head.group(1)
            rest = citation[head.end() :]
            break
    else:
        raise ValueError(f"not a citation: {citation!r}")
    if kind == "appendix":
        return [f"appendix {rest}"]
    parts = [p.strip("()") for p in re.findall(r"\(?\d+(?:\.\d+)*\)?|-|–|to", rest)]
    out: list[str] = []
    for i, part in enumerate(parts):
        if part in ("-", "–", "to"):
            continue
        if i >= 2 and parts[i - 1] in ("-", "–", "to") and "." not in part and "." not in parts[i - 2]:
            out += [str(n) for n in range(int(parts[i - 2]) + 1, int(part) + 1)]
        else:
            out.append(part)
    sep = "" if kind == "§" else " "
    return [f"{kind}{sep}{n}" for n in out]


KOREAN = (
    re.compile(  # the Korean edition's labels: 식 5, 그림 2, 표 1, 각주 14, 부록 A.2.2, 식 5와 6, 식 9~10
        r"(식|그림|표|각주|부록|알고리즘|정리|명제)\s?("
        + _NUMBER
        + r"|[A-Z](?:\.\d+)*)"
        + r"((?:\s*(?:,|과|와|및|-|–|~)\s*"
        + _NUMBER
        + r")*)"
    )
)
KOREAN_KINDS = {"식": "eq.", "그림": "Fig.", "표": "Table", "각주": "footnote", "부록": "appendix"}
KOREAN_KINDS |= {"알고리즘": "Algorithm", "정리": "Theorem", "명제": "Proposition"}
KOREAN_LINKS = {"과": "and", "와": "and", "및": "and", "~": "-"}


def cited_numbers(text: str, korean: bool = False) -> set[str]:
    """The single numbers ``text`` cites; with ``korean``, also those written with the Korean labels."""
    cited = [c for _, _, c in found([("", "", text)])]
    if korean:
        for m in KOREAN.finditer(text):
            rest = m.group(3)
            for word, link in KOREAN_LINKS.items():
                rest = rest.replace(word, f" {link} ")
            cited.append(f"{KOREAN_KINDS[m.group(1)]} {m.group(2)}{rest}")
    return {n for c in cited for n in numbers(c)}


def translation_problems(root: Path = ROOT) -> list[str]:
    """Korean entries (``i18n/ko``) that cite other numbers than the English they translate."""
    out = []
    for path in sorted((root / "i18n" / "ko").glob("**/*.yml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")).get("cells", []):  # _toc.yml has none
            if entry.get("ko"):
                english, korean = cited_numbers(entry["en"]), cited_numbers(entry["ko"], korean=True)
                if english != korean:
                    name = path.relative_to(root).as_posix()
                    out.append(
                        f"{name} {entry['id']}: English cites {sorted(english)}, Korean {sorted(korean)}"
                    )
    return out


def load(path: Path = TABLE) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def problems(table: dict, cited: set[tuple[str, str, str]]) -> list[str]:
    """What keeps the table from being the audit of ``cited``: unrecorded and stale citations, unknown papers,
    numbers a paper's entry does not list, papers without a checked version."""
    out = []
    papers = table["papers"]
    for key, paper in papers.items():
        for field in ("title", "version", "checked", "numbers"):
            if not paper.get(field):
                out.append(f"paper {key}: no {field}")
    recorded = set()
    for file, cell, citation, cites in table["citations"]:
        if (file, cell, citation) in recorded:
            out.append(f"recorded twice: {file} {cell} {citation!r}")
        recorded.add((file, cell, citation))
        for paper in cites if isinstance(cites, list) else [cites]:
            if paper == NOT_A_PAPER:
                continue
            if paper not in papers:
                out.append(f"{file} {cell} {citation!r}: unknown paper {paper!r}")
                continue
            for number in numbers(citation):
                if number not in papers[paper]["numbers"]:
                    out.append(f"{file} {cell} {citation!r}: {paper} has no {number!r} in its entry")
    for file, cell, citation in sorted(cited - recorded):
        out.append(f"not audited: {file} {cell} {citation!r}")
    for file, cell, citation in sorted(recorded - cited):
        out.append(f"stale (no source cites it any more): {file} {cell} {citation!r}")
    return out


if __name__ == "__main__":
    report = problems(load(), found(sources())) + translation_problems()
    print("\n".join(report) or "citations: every numbered citation is audited")
    sys.exit(1 if report else 0)
