"""Checks of what callers pass TieredMemory: each raises InvalidInput naming the field.

They run before anything is read or written, so a refused call changes nothing.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from memcommit import inputs as shared
from memcommit.errors import InvalidInput


def moment(now: Any) -> datetime:
    """``now`` when it is a timezone-aware datetime (`memcommit.inputs.now`); UTC now when None."""
    return shared.now("now", now)


def ids(value: Any) -> list[str]:
    """Memory ids: a list of them, or one id as a list of one (`memcommit.inputs.one_or_many`)."""
    return list(shared.one_or_many("ids", value))


def scopes(value: Any) -> list[str] | None:
    """None, or scope names: a list of them, or one as a list of one."""
    return None if value is None else list(shared.one_or_many("scopes", value))


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
