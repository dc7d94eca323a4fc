"""Checks of a scorer's parameters, made once when the scorer is built.

A NaN, negative or infinite weight does not fail loudly inside the arithmetic:
it silently selects nothing or everything. So each parameter is checked as it
is given, and a bad one raises `InvalidInput` naming it.
"""

from __future__ import annotations

import math
from typing import Any

from memcommit.errors import InvalidInput


def weight(field: str, value: Any, *, most: float = math.inf) -> float:
    """``value`` as a float: a finite number from 0 to ``most``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InvalidInput(field, value, "must be a number")
    if not 0.0 <= value <= most or not math.isfinite(value):
        shown = "a finite number >= 0" if most == math.inf else f"a number in [0, {most:g}]"
        raise InvalidInput(field, value, f"must be {shown}")
    return float(value)


def flag(field: str, value: Any) -> bool:
    """``value``, which must be True or False."""
    if not isinstance(value, bool):
        raise InvalidInput(field, value, "must be True or False")
    return value


def count(field: str, value: Any) -> int:
    """``value``, which must be an int >= 0."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(field, value, "must be an int >= 0")
    return value
