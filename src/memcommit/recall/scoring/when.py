"""The times a query names, and which memories were made in them: dates for conversation memory.

"What did Maria do on 31 July, 2023?", "in June", "last week", "two days ago":
a question that names a time is about what was said then. `asked_times` reads
the query's absolute dates (a day, a month, a year, and "may"/"march" only next
to a number, where they are months) and its relative ones, resolved against the
recall's ``now`` (today, yesterday, N days/weeks/months/years ago, last or this
week/month/year, last <weekday>). `date_levels` then counts, per memory, how
closely its creation time matches: 1 when it falls in a named month, year or
period, 2 when it falls on a named day. The scorer multiplies by
``(1 + dates) ** level``: a date narrows the search without excluding anything.

Memories' own relative words ("yesterday" in a memory made on 8 May) were
measured as a second date of the memory and changed no LoCoMo figure, so a
memory's time is its creation time.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

import numpy as np

from memcommit.recall.index.columns import NO_START

_MONTH_NAMES = (
    ("january", "jan"),
    ("february", "feb"),
    ("march", "mar"),
    ("april", "apr"),
    ("may",),
    ("june", "jun"),
    ("july", "jul"),
    ("august", "aug"),
    ("september", "sep", "sept"),
    ("october", "oct"),
    ("november", "nov"),
    ("december", "dec"),
)
MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names}
#: Month names that are also common words: months only next to a number ("7 May", "May 2023").
_AMBIGUOUS = frozenset(("may", "march", "jan", "mar", "sep", "oct", "dec"))
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
#: Words this module reads as times.
CALENDAR_WORDS = frozenset(MONTHS).union(
    _WEEKDAYS,
    ("today", "yesterday", "ago", "day", "days", "week", "weeks", "month", "months", "year"),
    ("years",),
)
_COUNTS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "couple": 2,
    "few": 3,
}
_WORD = re.compile(r"[a-z]+|\d+")
_ISO_DAY = re.compile(r"\b(\d{4})-(\d{1,2})-(\d{1,2})\b")
_ORDINAL = re.compile(r"\b(\d{1,2})(?:st|nd|rd|th)\b")


@dataclass(frozen=True)
class AskedTimes:
    """What a query names: months, years, days (year 0: any year), and periods [start, end)."""

    months: frozenset[int] = frozenset()
    years: frozenset[int] = frozenset()
    days: frozenset[tuple[int, int, int]] = frozenset()  # (year or 0, month, day)
    periods: tuple[tuple[date, date], ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.months or self.years or self.days or self.periods)


def _day(year: int, month: int, day: int) -> tuple[int, int, int] | None:
    try:
        date(year or 2000, month, day)  # 2000 is a leap year: 29 February is a day
    except ValueError:
        return None
    return (year, month, day)


def _absolute(tokens: list[str]) -> tuple[set[int], set[int], set[tuple[int, int, int]]]:
    """Months, years and days named outright ("7 May 2023", "October 13th", "in June")."""
    months: set[int] = set()
    years = {int(t) for t in tokens if t.isdigit() and len(t) == 4 and 1900 <= int(t) <= 2099}
    days: set[tuple[int, int, int]] = set()
    for position, token in enumerate(tokens):
        month = MONTHS.get(token)
        if month is None:
            continue
        before = tokens[position - 1] if position else ""
        after = tokens[position + 1] if position + 1 < len(tokens) else ""
        number_next = before.isdigit() or after.isdigit()
        if token in _AMBIGUOUS and not number_next:
            continue
        months.add(month)
        following = tokens[position + 1 : position + 4]
        year = next((int(t) for t in following if t.isdigit() and int(t) in years), 0)
        for near in (before, after):
            if near.isdigit() and 1 <= int(near) <= 31:
                found = _day(year, month, int(near))
                if found:
                    days.add(found)
    return months, years, days


def _ago(amount: int, unit: str, today: date) -> tuple[date, date] | None:
    """The period "``amount`` ``unit`` ago" names, around the moment it points at."""
    if unit.startswith("day"):
        start = today - timedelta(days=amount)
        return start, start + timedelta(days=1)
    if unit.startswith("week"):
        centre = today - timedelta(weeks=amount)
        return centre - timedelta(days=3), centre + timedelta(days=4)
    if unit.startswith("month"):
        year, month = divmod(today.year * 12 + today.month - 1 - amount, 12)
        return _month(year, month + 1)
    if unit.startswith("year"):
        return date(today.year - amount, 1, 1), date(today.year - amount + 1, 1, 1)
    return None


def _month(year: int, month: int) -> tuple[date, date]:
    following = date(year + month // 12, month % 12 + 1, 1)
    return date(year, month, 1), following


def _relative(tokens: list[str], today: date) -> list[tuple[date, date]]:
    """Periods relative to ``today``: "yesterday", "3 days ago", "last week", "last friday"."""
    periods: list[tuple[date, date]] = []
    one_day = timedelta(days=1)
    monday = today - timedelta(days=today.weekday())
    for position, token in enumerate(tokens):
        before = tokens[position - 1] if position else ""
        if token == "today":
            periods.append((today, today + one_day))
        elif token == "yesterday":
            periods.append((today - one_day, today))
        elif token == "ago" and position >= 2:
            amount_word = tokens[position - 2]
            amount = int(amount_word) if amount_word.isdigit() else _COUNTS.get(amount_word)
            found = _ago(amount, tokens[position - 1], today) if amount else None
            if found:
                periods.append(found)
        elif before in ("last", "this") and token in ("week", "month", "year"):
            back = 1 if before == "last" else 0
            if token == "week":
                start = monday - timedelta(weeks=back)
                periods.append((start, start + timedelta(weeks=1)))
            elif token == "month":
                year, month = divmod(today.year * 12 + today.month - 1 - back, 12)
                periods.append(_month(year, month + 1))
            else:
                periods.append((date(today.year - back, 1, 1), date(today.year - back + 1, 1, 1)))
        elif before == "last" and token in _WEEKDAYS:
            back = (today.weekday() - _WEEKDAYS.index(token)) % 7 or 7
            day = today - timedelta(days=back)
            periods.append((day, day + one_day))
    return periods


def asked_times(text: str, now: datetime) -> AskedTimes:
    """The months, years, days and periods ``text`` names, relative words resolved at ``now``."""
    lowered = _ORDINAL.sub(r"\1", text.lower())
    tokens = _WORD.findall(lowered)
    months, years, days = _absolute(tokens)
    for year, month, day in _ISO_DAY.findall(lowered):
        found = _day(int(year), int(month), int(day))
        if found:
            days.add(found)
    periods = tuple(_relative(tokens, now.date()))
    return AskedTimes(frozenset(months), frozenset(years), frozenset(days), periods)


def date_factor(
    created: np.ndarray, docs: np.ndarray, asked: AskedTimes, weight: float
) -> np.ndarray:
    """``(1 + weight) ** level`` of each of ``docs`` (``created``: every document's time)."""
    if not asked or not weight:
        return np.ones(len(docs))
    return (1.0 + weight) ** date_levels(created[docs], asked)


def date_levels(created: np.ndarray, asked: AskedTimes) -> np.ndarray:
    """Per creation time (microseconds): 2 on a named day, 1 in a named month/year/period, else 0.

    A month and a year named together must both hold ("June 2023"); a memory
    with no creation time matches nothing.
    """
    levels = np.zeros(len(created), dtype=np.int64)
    known = created != NO_START
    if not asked or not known.any():
        return levels
    moments = created[known].astype("datetime64[us]")
    day = moments.astype("datetime64[D]")
    month_start = moments.astype("datetime64[M]")
    year = moments.astype("datetime64[Y]").astype(np.int64) + 1970
    month = (month_start.astype(np.int64) % 12) + 1
    day_of_month = (day - month_start.astype("datetime64[D]")).astype(np.int64) + 1
    coarse = np.zeros(len(moments), dtype=bool)
    if asked.months or asked.years:
        month_ok = np.isin(month, list(asked.months)) if asked.months else True
        year_ok = np.isin(year, list(asked.years)) if asked.years else True
        coarse |= month_ok & year_ok
    for start, end in asked.periods:
        coarse |= (day >= np.datetime64(start)) & (day < np.datetime64(end))
    fine = np.zeros(len(moments), dtype=bool)
    for asked_year, asked_month, asked_day in asked.days:
        same = (month == asked_month) & (day_of_month == asked_day)
        fine |= same & (year == asked_year) if asked_year else same
    levels[known] = coarse.astype(np.int64) + fine.astype(np.int64)
    return levels
