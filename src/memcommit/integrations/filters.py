"""Exact filters over JSON values, as LangGraph and LangChain pass them.

``{"author": "Alice", "score": {"$gt": 3}, "user.role": "admin"}``: every key is a
path into the value (dotted for nested objects) and every condition must hold.
A condition is a value to equal (lists and objects compare whole) or an object of
operators: $eq, $ne, $gt, $gte, $lt, $lte (the ordering ones compare numbers).

Filters are evaluated here, in Python, over decoded values: no key or value is
ever written into SQL. Keys are still checked, and a key shaped like an
injection attempt (quotes, brackets, spaces, operators) is refused with
`memcommit.errors.InvalidInput` before anything is read, so a caller learns at
once that it passed something other than a field name.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from memcommit.errors import InvalidInput

OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")
#: One label of a filter path: letters, digits (any script), "_" and "-".
_LABEL = re.compile(r"[\w-]+")
_MISSING = object()


def check(filter: Any) -> dict[str, Any]:
    """The filter as a dict, every key and every operator at every depth checked; {} for None."""
    if filter is None:
        return {}
    if not isinstance(filter, Mapping):
        raise InvalidInput("filter", filter, "must be a mapping of field paths to conditions")
    for key, condition in filter.items():
        if not isinstance(key, str) or not all(_LABEL.fullmatch(p) for p in key.split(".")):
            raise InvalidInput(
                "filter",
                key,
                "Invalid filter key: a key is field names of letters, digits, '_' or '-',"
                " joined by '.'",
            )
        _check_condition(key, condition)
    return dict(filter)


def _check_condition(path: str, condition: Any) -> None:
    """Refuse an unknown operator anywhere in ``condition``: in an operator object, in a
    nested object compared field by field, or in an operand (which is compared whole).

    An object with one "$" key is an operator object: every key must be an operator.
    """
    if isinstance(condition, (list, tuple)):
        for inner in condition:
            _check_condition(path, inner)
        return
    if not isinstance(condition, Mapping):
        return
    if _is_operators(condition):
        for name, operand in condition.items():
            if name not in OPERATORS:
                raise InvalidInput(
                    "filter",
                    {path: condition},
                    f"unknown operator {name!r} at {path!r}; allowed: " + ", ".join(OPERATORS),
                )
            _check_condition(path, operand)
        return
    for name, inner in condition.items():
        _check_condition(f"{path}.{name}", inner)


def matches(value: Mapping[str, Any], filter: Mapping[str, Any]) -> bool:
    """True when every condition of a `check`-ed filter holds for ``value``."""
    return all(_holds(_at(value, key), condition) for key, condition in filter.items())


def _at(value: Any, path: str) -> Any:
    if isinstance(value, Mapping) and path in value:
        return value[path]
    for label in path.split("."):
        if not isinstance(value, Mapping) or label not in value:
            return _MISSING
        value = value[label]
    return value


def _is_operators(condition: Any) -> bool:
    return isinstance(condition, Mapping) and any(str(k).startswith("$") for k in condition)


def _holds(found: Any, condition: Any) -> bool:
    if _is_operators(condition):
        return all(_compare(found, op, operand) for op, operand in condition.items())
    return found is not _MISSING and _equal(found, condition)


def _equal(found: Any, wanted: Any) -> bool:
    if isinstance(wanted, Mapping):
        return isinstance(found, Mapping) and all(
            _holds(found.get(k, _MISSING), v) for k, v in wanted.items()
        )
    if isinstance(wanted, (list, tuple)):
        return (
            isinstance(found, (list, tuple))
            and len(found) == len(wanted)
            and all(_equal(f, w) for f, w in zip(found, wanted, strict=True))
        )
    if isinstance(found, bool) or isinstance(wanted, bool):
        return type(found) is type(wanted) and found == wanted
    return found == wanted


def _compare(found: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return found is not _MISSING and _equal(found, operand)
    if op == "$ne":
        return found is _MISSING or not _equal(found, operand)
    a, b = _number(found), _number(operand)
    if a is None or b is None:
        return False
    return {"$gt": a > b, "$gte": a >= b, "$lt": a < b, "$lte": a <= b}[op]


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return None if math.isnan(number) else number
