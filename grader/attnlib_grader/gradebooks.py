"""The scores of a grading run in the import formats of two gradebooks: ``canvas.csv`` and ``moodle.csv``.

One row per learner, identified by the label of the submitted file (``report.label``: name the files after the
learners' logins, e.g. ``jdoe.ipynb``), the automatic score of the set in one column and an empty column for
the written answers, which the teacher fills in or leaves out of the import.

- Canvas (Grades > Import, a CSV file): the columns of Canvas's own gradebook export, ``Student``, ``ID``,
  ``SIS User ID``, ``SIS Login ID``, ``Section``, then one column per assignment; a second row ``Points
  Possible`` gives each assignment's points. Canvas matches a row to a learner by one of its identifying
  columns: here ``Student`` and ``SIS Login ID`` hold the label, the others are left empty. An assignment
  column whose name does not end in ``(<Canvas id>)`` becomes a new assignment on import.
- Moodle (Grades > Import > CSV file): a header row and one row per learner; at import the teacher maps the
  identifying column (``Username`` here) to a user field (username, email address or ID number) and each
  other column to a grade item, or to "ignore".
"""

from __future__ import annotations

import csv
import io

CANVAS_IDENTITY = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
MOODLE_IDENTITY = ["Username"]


def columns(set_name: str, written: float) -> list[str]:
    """The grade columns of a set: its automatic score, and its written answers where it has some."""
    return [f"{set_name} automatic"] + ([f"{set_name} written"] if written else [])


def _text(header: list[str], rows: list[list[str]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue()


def canvas(set_name: str, scores: dict[str, str], automatic: float, written: float) -> str:
    """Canvas's import CSV; ``scores``: label (already safe for a spreadsheet) -> automatic score."""
    points = [f"{automatic:g}"] + ([f"{written:g}"] if written else [])
    rows = [["Points Possible", "", "", "", "", *points]]
    rows += [[label, "", "", label, "", score] + ([""] if written else []) for label, score in scores.items()]
    return _text(CANVAS_IDENTITY + columns(set_name, written), rows)


def moodle(set_name: str, scores: dict[str, str], written: float) -> str:
    """Moodle's import CSV; ``scores`` as for ``canvas``."""
    rows = [[label, score] + ([""] if written else []) for label, score in scores.items()]
    return _text(MOODLE_IDENTITY + columns(set_name, written), rows)
