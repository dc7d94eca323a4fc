"""The input rules every layer shares: times, one-or-many names, strings and size limits.

The store, tiers, compaction and recall all check what callers hand them with
these functions, so one value gets one answer everywhere: a naive datetime is
refused by ``commit``, ``recall(now=)``, ``find(as_of=)`` and
``TieredMemory.working(now=)`` alike, and a single string where a list is
expected is taken as a one-item list by every call. Each refusal is an
`InvalidInput` naming the field and the value.

The limits, enforced before anything is written (so both backends store the
same things and a value accepted once can always be read back):

    =================  ==========================================================
    ``LIMITS`` key     what it bounds
    =================  ==========================================================
    content            memory text, UTF-8 bytes (a store may lower or raise it)
    metadata           a memory's metadata or a change's detail, as JSON bytes
    message            a commit message, UTF-8 bytes
    name               a key, id, tenant, scope, session, project, author or tag
    depth              nesting of lists and objects inside metadata
    =================  ==========================================================

Every string anywhere (content, names, messages, metadata keys and values) is
valid Unicode without NUL: lone surrogates cannot be encoded as UTF-8 (exports
and JSON output would crash on them) and PostgreSQL refuses NUL in text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime, timezone
from types import MappingProxyType
from typing import Any, Literal, overload

from memcommit.errors import InvalidInput

#: The size limits, in UTF-8 bytes (depth in levels); see the module docstring.
LIMITS = MappingProxyType(
    {
        "content": 1024 * 1024,
        "metadata": 256 * 1024,
        "message": 64 * 1024,
        "name": 1024,
        "depth": 32,
    }
)


def clean_text(name: str, value: str) -> bytes:
    """The UTF-8 bytes of ``value``; NUL and lone surrogates are refused."""
    if "\x00" in value:
        raise InvalidInput(name, value, "must not contain NUL characters")
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(name, value, "must be valid Unicode (no lone surrogates)") from None


def bounded(name: str, value: str, limit: str) -> str:
    """``value`` when it is clean text of at most ``LIMITS[limit]`` bytes."""
    most = LIMITS[limit]
    size = len(value) if value.isascii() and "\x00" not in value else len(clean_text(name, value))
    if size > most:
        raise InvalidInput(name, value, f"is longer than the limit of {most} bytes ({limit})")
    return value


def message(value: Any) -> str:
    """A commit message: any clean string up to the message limit (empty is allowed)."""
    if not isinstance(value, str):
        raise InvalidInput("message", value, "must be a string")
    return bounded("message", value, "message")


def json_text(name: str, value: Any) -> str:
    """Compact JSON text of ``value`` within the metadata limits.

    Keys must be strings, numbers finite, strings clean, nesting at most
    ``LIMITS["depth"]`` deep; checked by one walk before encoding, so a deep
    value is refused with InvalidInput instead of a RecursionError.
    """
    check_json(name, value)
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    most = LIMITS["metadata"]
    if len(text) > most and len(text.encode("utf-8")) > most:
        raise InvalidInput(name, value, f"is longer than the limit of {most} bytes (metadata)")
    return text


def check_json(name: str, value: Any, *, depth: int = 0) -> None:
    """Raise InvalidInput unless ``value`` is JSON within the depth limit and with clean strings.

    The one JSON-shape check: the store's metadata, details and state, and
    compaction's summaries. ``depth`` is how many lists and objects enclose
    ``value`` where it will be stored (a summary kept under a key of a memory's
    metadata: 1), so a part is refused exactly when the whole would be. The
    reason says where inside ``value`` the refused part is (``at ['steps'][2]``).
    """
    _walk(name, value, depth, "")


def _walk(name: str, value: Any, depth: int, where: str) -> None:
    """Raise InvalidInput for the first part of ``value`` that JSON or the limits refuse."""
    at = f" (at {where})" if where else ""
    if value is None or isinstance(value, bool | int):
        return
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidInput(
                name, value, f"must be JSON-serializable: NaN and infinities are not{at}"
            )
        return
    if isinstance(value, str):
        _clean_at(name, value, at)
        return
    if depth >= LIMITS["depth"]:
        raise InvalidInput(name, "...", f"is nested deeper than {LIMITS['depth']} levels{at}")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(name, key, f"must have string keys (JSON object keys){at}")
            _clean_at(name, key, at)
            _walk(name, item, depth + 1, f"{where}[{key!r}]")
        return
    if isinstance(value, list | tuple):
        for index, item in enumerate(value):
            _walk(name, item, depth + 1, f"{where}[{index}]")
        return
    raise InvalidInput(name, value, f"must be JSON-serializable, not {type(value).__name__}{at}")


def _clean_at(name: str, value: str, at: str) -> None:
    """`clean_text`, its refusal saying where the string sits."""
    try:
        clean_text(name, value)
    except InvalidInput as refused:
        raise InvalidInput(name, value, refused.reason + at) from None


@overload
def moment(name: str, value: Any, *, optional: Literal[False]) -> datetime: ...
@overload
def moment(name: str, value: Any, *, optional: bool = True) -> datetime | None: ...
def moment(name: str, value: Any, *, optional: bool = True) -> datetime | None:
    """None (when optional) or a timezone-aware datetime, returned in UTC.

    The one check of every time any layer is handed: commit ``now``, the
    clock's readings, ``as_of``, validity, ``recall(now=)``, the tiers' and the
    compactor's ``now``. A naive datetime is refused: it names no moment.
    """
    if value is None and optional:
        return None
    if not isinstance(value, datetime):
        raise InvalidInput(name, value, "must be a timezone-aware datetime")
    if value.tzinfo is timezone.utc:
        return value
    try:
        utc = None if value.utcoffset() is None else value.astimezone(timezone.utc)
    except (ArithmeticError, ValueError, TypeError) as exc:  # an odd tzinfo, or out of range
        raise InvalidInput(name, value, f"must be a representable aware datetime: {exc}") from None
    if utc is None:
        raise InvalidInput(name, value, "must be timezone-aware (naive datetimes are ambiguous)")
    return utc


def now(name: str, value: Any) -> datetime:
    """``value`` checked by `moment`, or the current UTC time when it is None."""
    if value is None:
        return datetime.now(timezone.utc)
    return moment(name, value, optional=False)


def one_or_many(name: str, value: Any, allowed: Iterable[str] | None = None) -> tuple[str, ...]:
    """A tuple of non-empty strings from one string or an iterable of them.

    The rule for every parameter that takes a list of names (scopes, ids,
    kinds, tiers, tags): one string means a list of that one string, never its
    characters. ``allowed`` restricts the items to those values.
    """
    if isinstance(value, str):
        items: tuple[Any, ...] = (value,)
    elif isinstance(value, bytes) or not isinstance(value, Iterable):
        raise InvalidInput(name, value, "must be a string or a list of strings")
    else:
        items = tuple(value)
    choices = None if allowed is None else tuple(allowed)
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise InvalidInput(name, value, f"every item must be a non-empty string, not {item!r}")
        if choices is not None and item not in choices:
            raise InvalidInput(name, value, f"every item must be one of {', '.join(choices)}")
        bounded(name, item, "name")
    return items
