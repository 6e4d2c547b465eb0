"""Specification of attnlib.data.dates, checked against an independent reference parser.

The reference reads each format with ``datetime.strptime`` and the format string below, written from the
format's NAME, not from the renderer. Two-digit years use the documented window 1950-2049 (strptime's own
pivot is 1969, so the reference re-maps them). A source is unambiguous when, over ALL formats, it parses to
exactly one date.
"""

import re
from datetime import date, datetime, timedelta

import pytest

from attnlib.data.dates import (
    TWO_DIGIT_YEAR_FORMATS,
    TWO_DIGIT_YEARS,
    date_formats,
    dates_task,
    format_pattern,
    make_dates,
    render,
)

REFERENCE = {
    "d month yyyy": "%d %B %Y",
    "month d, yyyy": "%B %d, %Y",
    "weekday, month d, yyyy": "%A, %B %d, %Y",
    "weekday d month yyyy": "%A %d %B %Y",
    "wkd d mon yyyy": "%a %d %b %Y",
    "the dth of month yyyy": "the %d{suffix} of %B %Y",
    "month dth, yyyy": "%B %d{suffix}, %Y",
    "mon d yyyy": "%b %d %Y",
    "yyyy mon d": "%Y %b %d",
    "d-mon-yyyy": "%d-%b-%Y",
    "d mon yy": "%d %b %y",
    "dd/mm/yyyy": "%d/%m/%Y",
    "dd.mm.yyyy": "%d.%m.%Y",
    "d.m.yy": "%d.%m.%y",
    "dd-mm-yy": "%d-%m-%y",
    "yyyymmdd": "%Y%m%d",
}
SUFFIX = {1: "st", 2: "nd", 3: "rd", 21: "st", 22: "nd", 23: "rd", 31: "st"}  # every other day: "th"


def reference_parse(text: str, pattern: str) -> date | None:
    """The date ``text`` denotes under strptime ``pattern``, or None if it does not fit."""
    for suffix in ("st", "nd", "rd", "th") if "{suffix}" in pattern else ("",):
        try:
            parsed = datetime.strptime(text, pattern.format(suffix=suffix)).date()
        except ValueError:
            continue
        if suffix and SUFFIX.get(parsed.day, "th") != suffix:
            continue  # "the 3th of march" is not English
        if "%A" in pattern and parsed.strftime("%A").lower() not in text:
            continue  # strptime ignores a weekday that contradicts the date
        if "%a" in pattern and not text.startswith(parsed.strftime("%a").lower()):
            continue
        if "%y" in pattern:
            yy = parsed.year % 100
            parsed = parsed.replace(year=1900 + yy if yy >= 50 else 2000 + yy)
        return parsed
    return None


def readings(text: str) -> set[date]:
    """Every date ``text`` can mean under any of the formats."""
    return {d for pattern in REFERENCE.values() if (d := reference_parse(text, pattern)) is not None}


def _edge_dates() -> list[date]:
    """Days 1-3, 11-13, 21-23, 29, 31 of every month; years cycle over both ends of the window and 1968
    (strptime's own two-digit pivot is 1969, ours 1950)."""
    days = [1, 2, 3, 11, 12, 13, 21, 22, 23, 29, 31]
    years = (1950, 1968, 2049)
    out = []
    for month in range(1, 13):
        for i, day in enumerate(days):
            try:
                out.append(date(years[(month + i) % 3], month, day))
            except ValueError:
                pass  # 31 april, 29 february 2049, ...
    return out + [date(1968, 2, 29), date(2000, 2, 29)]  # leap days


def test_there_are_at_least_12_formats():
    assert len(date_formats()) >= 12
    assert set(date_formats()) == set(REFERENCE)


@pytest.mark.parametrize(
    ("fmt", "expected"),
    [
        ("d month yyyy", "3 march 2019"),
        ("month d, yyyy", "march 3, 2019"),
        ("weekday, month d, yyyy", "sunday, march 3, 2019"),
        ("weekday d month yyyy", "sunday 3 march 2019"),
        ("wkd d mon yyyy", "sun 3 mar 2019"),
        ("the dth of month yyyy", "the 3rd of march 2019"),
        ("month dth, yyyy", "march 3rd, 2019"),
        ("mon d yyyy", "mar 3 2019"),
        ("yyyy mon d", "2019 mar 3"),
        ("d-mon-yyyy", "3-mar-2019"),
        ("d mon yy", "3 mar 19"),
        ("dd/mm/yyyy", "03/03/2019"),
        ("dd.mm.yyyy", "03.03.2019"),
        ("d.m.yy", "3.3.19"),
        ("dd-mm-yy", "03-03-19"),
        ("yyyymmdd", "20190303"),
    ],
)
def test_render_writes_each_format(fmt, expected):
    assert render(date(2019, 3, 3), fmt) == expected


def test_numeric_dates_are_day_first():
    assert render(date(2019, 4, 3), "dd/mm/yyyy") == "03/04/2019"
    assert render(date(2019, 4, 3), "d.m.yy") == "3.4.19"
    assert readings("03/04/2019") == {date(2019, 4, 3)}


def test_ordinals_have_the_right_suffix():
    days = {
        1: "1st",
        2: "2nd",
        3: "3rd",
        4: "4th",
        11: "11th",
        12: "12th",
        13: "13th",
        21: "21st",
        22: "22nd",
    }
    for day, ordinal in days.items():
        assert render(date(2020, 1, day), "the dth of month yyyy") == f"the {ordinal} of january 2020"


@pytest.mark.parametrize("fmt", sorted(REFERENCE))
def test_every_format_reads_back_to_exactly_one_date(fmt):
    for d in _edge_dates():
        text = render(d, fmt)
        assert reference_parse(text, REFERENCE[fmt]) == d, text
        assert readings(text) == {d}, f"{text!r} is ambiguous: {sorted(readings(text))}"


def test_random_sources_are_unambiguous_and_targets_are_their_iso_dates():
    for source, target in make_dates(400, seed=7):
        assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", target)
        assert readings(source) == {date.fromisoformat(target)}, source


def test_two_digit_years_outside_the_window_are_refused():
    with pytest.raises(ValueError, match="two-digit"):
        render(date(1949, 12, 31), "d mon yy")
    with pytest.raises(ValueError, match="two-digit"):
        make_dates(10, seed=0, years=(1900, 2000))


def test_four_digit_formats_allow_any_years():
    pairs = make_dates(50, seed=0, formats=["d month yyyy", "yyyymmdd"], years=(1800, 1850))
    assert all("1800-01-01" <= target <= "1850-12-31" for _, target in pairs)


def test_dates_lie_in_the_requested_years():
    targets = [t for _, t in make_dates(500, seed=1, years=(1990, 1991))]
    assert min(targets) >= "1990-01-01" and max(targets) <= "1991-12-31"


def test_make_dates_is_deterministic_by_seed():
    assert make_dates(100, seed=3) == make_dates(100, seed=3)
    assert make_dates(100, seed=3) != make_dates(100, seed=4)


def test_all_formats_are_used():
    assert len(date_formats()) == len({_format_of(s) for s, _ in make_dates(600, seed=0)})


def _format_of(source: str) -> str:
    return next(f for f in date_formats() if reference_parse(source, REFERENCE[f]) is not None)


def test_dates_task_gives_disjoint_character_level_splits():
    task = dates_task(300, 50, 50, seed=0)
    assert (len(task.train), len(task.valid), len(task.test)) == (300, 50, 50)
    sources = [{"".join(p.src) for p in part} for part in (task.train, task.valid, task.test)]
    assert sum(map(len, sources)) == 400 == len(set().union(*sources))
    pair = task.train[0]
    assert all(len(c) == 1 for c in pair.src + pair.tgt)
    assert date.fromisoformat("".join(pair.tgt)) in readings("".join(pair.src))
    assert "-" in task.tgt_vocab and len(task.tgt_vocab) == 4 + 11  # digits and "-"


def test_dates_task_is_deterministic_by_seed():
    assert dates_task(20, 5, 5, seed=1) == dates_task(20, 5, 5, seed=1)
    assert dates_task(20, 5, 5, seed=1).train != dates_task(20, 5, 5, seed=2).train


def test_weekday_matches_the_date():
    d = date(2000, 1, 1)
    for offset in range(7):
        text = render(d + timedelta(days=offset), "weekday d month yyyy")
        assert text.split()[0] == (d + timedelta(days=offset)).strftime("%A").lower()


@pytest.mark.parametrize("fmt", date_formats())
def test_every_rendering_of_a_format_matches_its_pattern(fmt):
    for d in _edge_dates():
        if fmt in TWO_DIGIT_YEAR_FORMATS and not TWO_DIGIT_YEARS[0] <= d.year <= TWO_DIGIT_YEARS[1]:
            continue
        assert re.fullmatch(format_pattern(fmt), render(d, fmt)), (fmt, render(d, fmt))


def test_a_pattern_matches_what_the_reference_parser_reads_in_that_format():
    # independent of the renderer: strings the strptime reference reads in a format match its pattern, and
    # strings it reads in no format match no pattern
    typed = [
        "3 march 2019",
        "march 3rd, 2019",
        "20190303",
        "3.3.19",
        "2019-03-03",
        "03/13/2019",
        "mar. 3, 2019",
        "3 mar, 2019",
        "3rd march 2019",
        "sunday the 3rd of march, 2019",
        "31/12/99",
        "32/01/2019",
    ]
    for text in typed:
        by_reference = {fmt for fmt in date_formats() if reference_parse(text, REFERENCE[fmt]) is not None}
        by_pattern = {fmt for fmt in date_formats() if re.fullmatch(format_pattern(fmt), text)}
        assert by_pattern == by_reference, text
    assert any(reference_parse(text, REFERENCE[f]) for text in typed for f in date_formats())  # control


def test_a_pattern_checks_each_parts_spelling():
    assert re.fullmatch(format_pattern("dd/mm/yyyy"), "25/12/2019")
    assert not re.fullmatch(format_pattern("dd/mm/yyyy"), "12/25/2019")  # month 25
    assert not re.fullmatch(format_pattern("d month yyyy"), "32 march 2019")
    assert not re.fullmatch(format_pattern("mon d yyyy"), "mrz 3 2019")


def test_an_unknown_format_has_no_pattern():
    with pytest.raises(ValueError, match="unknown date format 'yyyy-mm-dd'"):
        format_pattern("yyyy-mm-dd")
