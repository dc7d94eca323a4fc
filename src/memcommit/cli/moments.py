"""Times and durations as people type them: ISO 8601, ``2h`` ago, ``yesterday``.

The command line reads the wall clock here, at its edge, and hands the library
aware datetimes; a bad value is an InvalidInput that lists every accepted form.
"""

from __future__ import annotations

import re
from datetime import datetime, time, timedelta, timezone

from memcommit.errors import InvalidInput

_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}
_DURATION = re.compile(r"\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*")

DURATION_FORMS = "a number and a unit: 90s, 30m, 12h, 7d or 2w"
TIME_FORMS = (
    "ISO 8601 (2026-11-01, 2026-11-01T12:00, 2026-11-01T12:00+02:00; no offset = UTC),"
    " a time ago (90s, 30m, 2h, 3d, 1w), now, today or yesterday"
)


def utc_now() -> datetime:
    """The wall clock, aware, in UTC."""
    return datetime.now(timezone.utc)


def parse_duration(field: str, text: str | None) -> timedelta | None:
    """``"90s"``, ``"30m"``, ``"12h"``, ``"7d"`` or ``"2w"``; None stays None."""
    if text is None:
        return None
    match = _DURATION.fullmatch(text)
    if not match:
        raise InvalidInput(field, text, f"must be {DURATION_FORMS}")
    try:
        return timedelta(**{_UNITS[match[2]]: float(match[1])})
    except OverflowError:
        raise InvalidInput(
            field, text, f"must be at most {timedelta.max.days} days (a duration's range)"
        ) from None


def parse_moment(field: str, text: str, *, now: datetime | None = None) -> datetime:
    """An aware datetime from ISO 8601, a time ago, ``now``, ``today`` or ``yesterday``."""
    now = now or utc_now()
    word = text.strip().lower()
    midnight = datetime.combine(now.date(), time(), tzinfo=now.tzinfo)
    words = {"now": now, "today": midnight, "yesterday": midnight - timedelta(days=1)}
    if word in words:
        return words[word]
    if _DURATION.fullmatch(word):
        ago = parse_duration(field, word)
        assert ago is not None
        try:
            return now - ago
        except OverflowError:
            earliest = (now - datetime.min.replace(tzinfo=timezone.utc)).days
            raise InvalidInput(
                field, text, f"must be at most {earliest} days ago (after year 1)"
            ) from None
    iso = text.strip()
    if iso[-1:] in ("z", "Z"):  # Python 3.10's fromisoformat does not read the "Z"
        iso = iso[:-1] + "+00:00"
    try:
        moment = datetime.fromisoformat(iso)
    except ValueError:
        raise InvalidInput(field, text, f"must be a time: {TIME_FORMS}") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)


def parse_now(text: str | None, *, field: str = "now") -> datetime | None:
    """``--now``: any accepted time form, or None for the store's clock."""
    return None if text is None else parse_moment(field, text)


def parse_as_of(
    text: str | None, *, field: str = "as-of", now: datetime | None = None
) -> int | str | datetime | None:
    """``--as-of``: a commit seq (``12``), a commit id (32 hex digits) or a time."""
    if text is None:
        return None
    text = text.strip()
    if text.isdigit():
        return int(text)
    if re.fullmatch(r"[0-9a-f]{32}", text):
        return text
    try:
        return parse_moment(field, text, now=now)
    except InvalidInput:
        if _DURATION.fullmatch(text.lower()):
            raise  # a time ago out of range: its own message gives the range
        raise InvalidInput(
            field, text, f"must be a commit seq (12), a commit id (32 hex digits) or {TIME_FORMS}"
        ) from None
