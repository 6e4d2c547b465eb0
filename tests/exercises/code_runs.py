"""How much of an answer a piece of code reproduces, read from tokens (shared by the exercise tests).

Code is normalised so that layout and renaming hide nothing: comments, strings and layout dropped, numbers
written 0, and every name that is not an attribute (after a dot) nor one of the modules `torch`, `F`, `nn`,
`math` written `v`. Two pieces of code share a run when one holds an unbroken sequence of the other's tokens.
"""

from __future__ import annotations

import io
import keyword
import textwrap
import tokenize

import nbformat

MODULES = {"torch", "F", "nn", "math"}
SKIP = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENDMARKER}


def normalised(source: str) -> list[str]:
    """The tokens of `source`, with comments, strings, layout, numbers and local names made alike.

    A fragment (an inline span of a hint, an unclosed bracket) gives the tokens read before the tokenizer
    stopped: a piece of code is read as far as it is code."""
    out, previous = [], None
    tokens = tokenize.generate_tokens(io.StringIO(textwrap.dedent(source)).readline)
    try:
        for token in tokens:
            if token.type in SKIP:
                continue
            text = token.string
            if token.type == tokenize.STRING:
                text = "''"
            elif token.type == tokenize.NUMBER:
                text = "0"
            elif token.type == tokenize.NAME and not keyword.iskeyword(text) and text not in MODULES:
                text = text if previous == "." else "v"
            out.append(text)
            previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError):
        pass
    return out


def longest_common_run(a: list[str], b: list[str]) -> int:
    """The length of the longest unbroken run of tokens that occurs in both `a` and `b`."""
    best, previous = 0, [0] * (len(b) + 1)
    for x in a:
        current = [0] * (len(b) + 1)
        for j, y in enumerate(b, start=1):
            if x == y:
                current[j] = previous[j - 1] + 1
                best = max(best, current[j])
        previous = current
    return best


def solution_blocks(master) -> dict[str, list[str]]:
    """{question: [dedented code of each `# BEGIN SOLUTION` ... `# END SOLUTION` block]} of a master."""
    blocks: dict[str, list[str]] = {}
    question = None
    for cell in nbformat.read(master, as_version=4).cells:
        if cell.cell_type == "raw" and cell.source.startswith("# BEGIN QUESTION"):
            options = dict(line.split(":", 1) for line in cell.source.splitlines()[1:] if ":" in line)
            question = options["name"].strip()
        if cell.cell_type != "code" or "# BEGIN SOLUTION" not in cell.source:
            continue
        lines = None
        for line in cell.source.splitlines():
            if line.strip() == "# BEGIN SOLUTION":
                lines = []
            elif line.strip() == "# END SOLUTION":
                blocks.setdefault(question, []).append(textwrap.dedent("\n".join(lines)))
                lines = None
            elif lines is not None:
                lines.append(line)
    return blocks
