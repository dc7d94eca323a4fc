"""Checks of what callers pass TieredMemory and its policies: each raises InvalidInput
naming the field.

They run before anything is read or written (a policy's when it is made), so a
refused call changes nothing and a bad parameter never waits for a maintenance
to fail.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from memcommit import inputs as shared
from memcommit.errors import InvalidInput
from memcommit.model import KINDS


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
    return number("heat_threshold", value)


def number(field: str, value: Any, *, above_zero: bool = False, most: float | None = None) -> float:
    """``value`` as a float: a finite number of at least 0 (above 0 when ``above_zero``), and at
    most ``most`` when given.

    Policies weigh, scale and size by these: NaN or an infinity would make every
    score NaN or infinite (the order of the candidates arbitrary), and a string
    would fail only inside a later maintenance, far from the call that made it.
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(field, value, "must be a number")
    try:
        x = float(value)
    except OverflowError:  # an int too big for a float
        x = math.inf
    low_ok = x > 0 if above_zero else x >= 0
    if not (math.isfinite(x) and low_ok and (most is None or x <= most)):
        low = "above 0" if above_zero else "of at least 0"
        high = "" if most is None else f" and at most {most:g}"
        raise InvalidInput(field, value, f"must be a finite number {low}{high}")
    return x


def kinds(field: str, value: Any, *, required: bool = True) -> frozenset[str]:
    """Memory kinds, each one of `memcommit.model.KINDS` (`memcommit.inputs.one_or_many`; a
    mapping gives its keys); at least one when ``required``.

    The store refuses any other kind, so a policy naming one would never match:
    a typo is refused here instead of silently selecting nothing.
    """
    found = frozenset(shared.one_or_many(field, value, KINDS))
    if required and not found:
        raise InvalidInput(field, value, "must name at least one kind")
    return found
