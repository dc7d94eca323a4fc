"""Checks of what callers pass TieredMemory: each raises InvalidInput naming the field.

They run before anything is read or written, so a refused call changes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from memcommit.errors import InvalidInput


def moment(now: Any) -> datetime:
    """``now`` when it is a timezone-aware datetime; the current UTC time when None."""
    if now is None:
        return datetime.now(timezone.utc)
    if not isinstance(now, datetime) or now.tzinfo is None or now.utcoffset() is None:
        raise InvalidInput("now", now, "must be a timezone-aware datetime")
    return now


def ids(value: Any) -> list[str]:
    """A list of non-empty id strings (not one string)."""
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput("ids", value, "must be a list of memory ids")
    out = list(value)
    if not all(isinstance(i, str) and i for i in out):
        raise InvalidInput("ids", out, "every id must be a non-empty string")
    return out


def scopes(value: Any) -> list[str] | None:
    """None, or a list of scope names (not one string)."""
    if value is None:
        return None
    if isinstance(value, str) or not isinstance(value, Iterable):
        raise InvalidInput("scopes", value, "must be a list of scopes, not one string")
    out = list(value)
    if not all(isinstance(s, str) and s for s in out):
        raise InvalidInput("scopes", out, "every scope must be a non-empty string")
    return out


def tenant(value: Any) -> str | None:
    """None, or a tenant name."""
    if value is not None and (not isinstance(value, str) or not value):
        raise InvalidInput("tenant", value, "must be a non-empty tenant name")
    return value


def heat_threshold(value: Any) -> float:
    """A finite number of at least 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput("heat_threshold", value, "must be a number")
    if not math.isfinite(value) or value < 0:
        raise InvalidInput("heat_threshold", value, "must be a finite number of at least 0")
    return float(value)
