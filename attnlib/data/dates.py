"""Date normalisation: human-readable dates -> ISO 8601 "YYYY-MM-DD", a character-level seq2seq task.

The classic first attention task (the Coursera/deeplearning.ai "neural machine translation" of dates): the
source "the 3rd of march 2019" and the target "2019-03-03" share almost no characters in the same place, so
the decoder must learn where to look: the year digits when it writes the year, the month name for the month.
The attention map shows that search directly. It trains on a CPU in seconds.

Every source has exactly ONE correct answer. Conventions that make it so:

* Numeric dates are day first (European): "03/04/2019" and "3.4.19" are 3 April, never March 4. There is no
  month-first numeric format at all, so no string can be read both ways.
* Two-digit years lie in 1950-2049: "50" … "99" are 1950 … 1999, "00" … "49" are 2000 … 2049. A date
  outside that window is never rendered with a two-digit year (``render`` raises ``ValueError``).
* Compact "yyyymmdd" always has 8 digits, year first (ISO basic format).
* Month and weekday names are English and lower-case; a weekday always matches its date.

The test suite checks this with an independent parser (``datetime.strptime`` with each format's own format
string): every generated string parses under exactly one date over all formats, and that date is the target.
Everything uses the standard library only; the same ``seed`` gives the same data on any machine.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from datetime import date, timedelta

from attnlib.data.batching import Pair, Task, build_task

MONTHS = "january february march april may june july august september october november december".split()
WEEKDAYS = "monday tuesday wednesday thursday friday saturday sunday".split()  # date.weekday() order
TWO_DIGIT_YEARS = (1950, 2049)


def _ordinal(day: int) -> str:
    """1 -> "1st", 2 -> "2nd", 3 -> "3rd", 11 -> "11th", 22 -> "22nd"."""
    suffix = "th" if 11 <= day <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def _yy(d: date) -> str:
    if not TWO_DIGIT_YEARS[0] <= d.year <= TWO_DIGIT_YEARS[1]:
        raise ValueError(f"year {d.year} is outside {TWO_DIGIT_YEARS}, the window of two-digit years")
    return f"{d.year % 100:02d}"


def _month(d: date) -> str:
    return MONTHS[d.month - 1]


def _mon(d: date) -> str:
    return MONTHS[d.month - 1][:3]


def _weekday(d: date) -> str:
    return WEEKDAYS[d.weekday()]


# name -> renderer. Names spell the layout: d = day, dd = zero-padded day, m/mm month number, month/mon full
# or 3-letter name, yyyy/yy year, weekday/wkd full or 3-letter weekday, dth ordinal day.
_FORMATS: dict[str, Callable[[date], str]] = {
    "d month yyyy": lambda d: f"{d.day} {_month(d)} {d.year}",  # 3 march 2019
    "month d, yyyy": lambda d: f"{_month(d)} {d.day}, {d.year}",  # march 3, 2019
    "weekday, month d, yyyy": lambda d: f"{_weekday(d)}, {_month(d)} {d.day}, {d.year}",
    "weekday d month yyyy": lambda d: f"{_weekday(d)} {d.day} {_month(d)} {d.year}",  # sunday 3 march 2019
    "wkd d mon yyyy": lambda d: f"{_weekday(d)[:3]} {d.day} {_mon(d)} {d.year}",  # sun 3 mar 2019
    "the dth of month yyyy": lambda d: f"the {_ordinal(d.day)} of {_month(d)} {d.year}",
    "month dth, yyyy": lambda d: f"{_month(d)} {_ordinal(d.day)}, {d.year}",  # march 3rd, 2019
    "mon d yyyy": lambda d: f"{_mon(d)} {d.day} {d.year}",  # mar 3 2019
    "yyyy mon d": lambda d: f"{d.year} {_mon(d)} {d.day}",  # 2019 mar 3
    "d-mon-yyyy": lambda d: f"{d.day}-{_mon(d)}-{d.year}",  # 3-mar-2019
    "d mon yy": lambda d: f"{d.day} {_mon(d)} {_yy(d)}",  # 3 mar 19
    "dd/mm/yyyy": lambda d: f"{d.day:02d}/{d.month:02d}/{d.year}",  # 03/03/2019
    "dd.mm.yyyy": lambda d: f"{d.day:02d}.{d.month:02d}.{d.year}",  # 03.03.2019
    "d.m.yy": lambda d: f"{d.day}.{d.month}.{_yy(d)}",  # 3.3.19
    "dd-mm-yy": lambda d: f"{d.day:02d}-{d.month:02d}-{_yy(d)}",  # 03-03-19
    "yyyymmdd": lambda d: f"{d.year}{d.month:02d}{d.day:02d}",  # 20190303
}
TWO_DIGIT_YEAR_FORMATS = frozenset(name for name in _FORMATS if "yy" in name and "yyyy" not in name)


def date_formats() -> list[str]:
    """Names of the supported formats, e.g. "d month yyyy" (3 march 2019)."""
    return list(_FORMATS)


# What each letter group of a format's name stands for, as a regular expression over the rendered text (lower
# case): the alternatives are the renderers' own outputs, so the patterns cannot drift from the formats.
_NAME_PARTS = {
    "weekday": "|".join(WEEKDAYS),
    "month": "|".join(MONTHS),
    "yyyy": r"\d{4}",
    "dth": "|".join(_ordinal(day) for day in range(1, 32)),
    "wkd": "|".join(w[:3] for w in WEEKDAYS),
    "mon": "|".join(m[:3] for m in MONTHS),
    "dd": "|".join(f"{day:02d}" for day in range(1, 32)),
    "mm": "|".join(f"{month:02d}" for month in range(1, 13)),
    "yy": r"\d{2}",
    "d": "|".join(str(day) for day in range(1, 32)),
    "m": "|".join(str(month) for month in range(1, 13)),
}  # longest names first: "month" before "mon" before "m"


def format_pattern(fmt: str) -> str:
    """A regular expression (Python's ``re`` and JavaScript's ``RegExp`` alike) that a whole string matches
    when it has the layout of format ``fmt``: "d mon yy" -> "(1|2|…|31)\\ (jan|…|dec)\\ \\d{2}".

    It checks the layout and each part's spelling (day 1-31, month 1-12), not the calendar: "31 feb 19" and a
    weekday that does not match its date pass. The in-page demo flags what matches no format (issue 28).
    """
    if fmt not in _FORMATS:
        raise ValueError(f"unknown date format {fmt!r}; known: {date_formats()}")
    pattern, i = [], 0
    while i < len(fmt):
        part = next((name for name in _NAME_PARTS if fmt.startswith(name, i)), None)
        pattern.append(f"({_NAME_PARTS[part]})" if part else re.escape(fmt[i]))
        i += len(part) if part else 1
    return "".join(pattern)


def render(d: date, fmt: str) -> str:
    """Write date ``d`` in format ``fmt`` (a name from :func:`date_formats`)."""
    if fmt not in _FORMATS:
        raise ValueError(f"unknown date format {fmt!r}; known: {date_formats()}")
    return _FORMATS[fmt](d)


def _sampler(
    formats: Sequence[str] | None, years: tuple[int, int], rng: random.Random
) -> Callable[[], tuple[str, str]]:
    """Check ``formats`` and ``years``, and return a function drawing one (source, ISO target) pair."""
    formats = date_formats() if formats is None else list(formats)
    unknown = [fmt for fmt in formats if fmt not in _FORMATS]
    if unknown or not formats:
        raise ValueError(f"unknown or no date formats {unknown or formats}; known: {date_formats()}")
    two_digit = TWO_DIGIT_YEAR_FORMATS.intersection(formats)
    if two_digit and not (TWO_DIGIT_YEARS[0] <= years[0] <= years[1] <= TWO_DIGIT_YEARS[1]):
        raise ValueError(
            f"years {years} leave the two-digit window {TWO_DIGIT_YEARS} used by {sorted(two_digit)}; "
            "narrow the years or drop those formats"
        )
    first = date(years[0], 1, 1)
    span = (date(years[1], 12, 31) - first).days

    def draw() -> tuple[str, str]:
        d = first + timedelta(days=rng.randint(0, span))
        return render(d, rng.choice(formats)), d.isoformat()

    return draw


def make_dates(
    n: int, seed: int = 0, formats: Sequence[str] | None = None, years: tuple[int, int] = TWO_DIGIT_YEARS
) -> list[tuple[str, str]]:
    """``n`` random (source, ISO target) pairs, e.g. ("the 3rd of march 2019", "2019-03-03").

    Dates are uniform over ``years`` (inclusive), formats uniform over ``formats`` (default: all).
    Duplicates are possible, as in any random sample; :func:`dates_task` removes them.
    """
    draw = _sampler(formats, years, random.Random(seed))
    return [draw() for _ in range(n)]


def dates_task(
    n_train: int = 8000,
    n_valid: int = 1000,
    n_test: int = 1000,
    seed: int = 0,
    formats: Sequence[str] | None = None,
    years: tuple[int, int] = TWO_DIGIT_YEARS,
) -> Task:
    """Train/valid/test splits of distinct date strings as character-level pairs, and their vocabularies.

    Source and target are lists of characters: "3 mar 19" -> ['3', ' ', 'm', 'a', 'r', ' ', '1', '9'].
    No source string occurs in two splits.
    """
    wanted = n_train + n_valid + n_test
    draw = _sampler(formats, years, random.Random(seed))
    distinct: dict[str, str] = {}
    for _ in range(100 * wanted):  # a generous bound instead of looping forever on a too small space
        if len(distinct) == wanted:
            break
        source, target = draw()
        distinct.setdefault(source, target)
    else:
        if len(distinct) < wanted:
            raise ValueError(
                f"could not draw {wanted} distinct dates from formats {formats} and years {years}"
            )
    pairs = [Pair(src=list(s), tgt=list(t)) for s, t in distinct.items()]
    return build_task((pairs[:n_train], pairs[n_train : n_train + n_valid], pairs[n_train + n_valid :]))
