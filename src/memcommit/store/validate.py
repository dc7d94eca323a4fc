"""Checks every value a caller hands the store; each failure names the field and the value.

Every function returns the normalized value (tags as a tuple, metadata as a
plain dict) or raises `InvalidInput`, before anything is written.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from datetime import datetime
from numbers import Real
from typing import Any

from memcommit import inputs
from memcommit.errors import InvalidInput
from memcommit.inputs import moment as moment  # the store checks times through here too
from memcommit.model import KINDS, TIERS

#: Largest content accepted by default, in UTF-8 bytes (`memcommit.inputs.LIMITS`).
DEFAULT_MAX_CONTENT_BYTES = inputs.LIMITS["content"]

#: Largest integer accepted anywhere (counts, limits): what a signed 64-bit column holds.
MAX_INT = 2**63 - 1

#: Fields `Transaction.update` may change.
UPDATABLE = (
    "content", "kind", "scope", "session", "key", "importance", "tags", "project",
    "always", "token_count", "metadata", "valid_from", "valid_to", "tier",
)  # fmt: skip


def content(value: Any, limit: int) -> str:
    """Non-empty text of at most ``limit`` UTF-8 bytes."""
    if not isinstance(value, str):
        raise InvalidInput("content", value, f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput("content", value, "must not be empty")
    if value.isascii() and "\x00" not in value:
        size = len(value)
    else:
        size = len(inputs.clean_text("content", value))
    if size > limit:
        raise InvalidInput("content", value, f"is longer than the limit of {limit} bytes")
    return value


_known_good: set[str] = set()  # names seen valid before (tenants, scopes repeat a lot)


def text(name: str, value: Any) -> str:
    """A non-empty string (tenant, scope, author, ids)."""
    if type(value) is str and value in _known_good:
        return value
    if not isinstance(value, str):
        raise InvalidInput(name, value, f"must be a string, not {type(value).__name__}")
    if not value.strip():
        raise InvalidInput(name, value, "must not be empty")
    inputs.bounded(name, value, "name")
    if len(value) <= 64 and len(_known_good) < 10_000:
        _known_good.add(value)
    return value


_plain_tenants: set[str] = set()  # tenant names seen to print as themselves


def tenant_name(value: Any) -> str:
    """A tenant's name where a memory is written to it: text no other name prints as.

    White space at either end, control and invisible characters (a zero-width
    space, a direction mark, a no-break space) would make a tenant that lists,
    and shows in the workbench's menu, exactly as another one. Reads take any
    name `text` takes, so a store written before this check reads as it did.
    """
    name = text("tenant", value)
    if name in _plain_tenants:
        return name
    if name != name.strip() or not name.isprintable():
        raise InvalidInput(
            "tenant",
            name,
            "must not start or end with white space, nor hold control or invisible"
            " characters: it would print as another tenant's name",
        )
    if len(name) <= 64 and len(_plain_tenants) < 10_000:
        _plain_tenants.add(name)
    return name


def optional_text(name: str, value: Any) -> str | None:
    """None or a non-empty string (session, key, project)."""
    return None if value is None else text(name, value)


def kind(value: Any) -> str:
    """One of `memcommit.model.KINDS`."""
    if type(value) is not str or value not in KINDS:
        raise InvalidInput("kind", value, f"must be one of {', '.join(KINDS)}")
    return value


def tier(value: Any, name: str = "tier") -> str:
    """One of `memcommit.model.TIERS`."""
    if type(value) is not str or value not in TIERS:
        raise InvalidInput(name, value, f"must be one of {', '.join(TIERS)}")
    return value


def importance(value: Any) -> float:
    """A finite number from 0 to 1; -0.0 is 0.0 (SQLite would store it so, and the version's
    digest, taken before, would not match what `verify` reads back)."""
    if type(value) is float and 0.0 <= value <= 1.0:  # the common case, NaN fails the range
        return value + 0.0
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidInput("importance", value, "must be a number from 0 to 1")
    try:
        number = float(value)
    except (OverflowError, ValueError):  # 10**400, or a Real that refuses to be a float
        number = math.nan
    if not 0.0 <= number <= 1.0:  # NaN fails too
        raise InvalidInput("importance", value, "must be a number from 0 to 1")
    return number + 0.0


def tags(value: Any) -> tuple[str, ...]:
    """Non-empty strings: a list of them, or one string as a list of one (`inputs.one_or_many`)."""
    if type(value) is tuple and not value:
        return ()
    return inputs.one_or_many("tags", value)


def flag(name: str, value: Any) -> bool:
    """A real bool (1 and "yes" are refused: they hide mistakes)."""
    if not isinstance(value, bool):
        raise InvalidInput(name, value, "must be True or False")
    return value


def count(name: str, value: Any, *, optional: bool = True, least: int = 0) -> int | None:
    """None (when optional) or an int from ``least`` to `MAX_INT`."""
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not least <= value <= MAX_INT:
        raise InvalidInput(name, value, f"must be an integer from {least} to {MAX_INT}")
    return value


def seconds(name: str, value: Any, *, most: float = 86400.0) -> float:
    """A finite number of seconds from 0 to ``most`` (a timeout)."""
    if isinstance(value, bool) or not isinstance(value, Real):
        raise InvalidInput(name, value, "must be a number of seconds")
    try:
        number = float(value)
    except (OverflowError, ValueError):
        number = math.nan
    if not 0.0 <= number <= most:  # NaN fails too
        raise InvalidInput(name, value, f"must be from 0 to {most:g} seconds")
    return number


def namespace(value: Any) -> str:
    """A state namespace: non-empty text without "/".

    A tenant view stores its state under ``tenant:<tenant>/<namespace>``; with
    no "/" in a namespace that name splits one way only, so no tenant can name
    another's state (tenant names may hold "/").
    """
    checked = text("namespace", value)
    if "/" in checked:
        raise InvalidInput("namespace", value, 'must not contain "/"')
    return checked


def metadata(value: Any, name: str = "metadata") -> dict[str, Any]:
    """None or a mapping with string keys that survives a JSON round trip, within the limits."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidInput(name, value, "must be a mapping of JSON values")
    value = dict(value)
    back: dict[str, Any] = json.loads(inputs.json_text(name, value))
    if back != value:
        raise InvalidInput(name, value, "must survive a JSON round trip (use lists, not tuples)")
    return back


def json_value(name: str, value: Any) -> str:
    """JSON text of ``value`` (keys sorted); refuses NaN, non-JSON types and deep nesting."""
    inputs.check_json(name, value)
    return json.dumps(value, allow_nan=False, sort_keys=True)


def window(valid_from: datetime | None, valid_to: datetime | None) -> None:
    """valid_to must come after valid_from when both are given."""
    if valid_from is not None and valid_to is not None and valid_to <= valid_from:
        raise InvalidInput("valid_to", valid_to, f"must be later than valid_from={valid_from}")


def limit(value: Any) -> int | None:
    """None or an int from 1 to `MAX_INT`."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_INT:
        raise InvalidInput("limit", value, f"must be an integer from 1 to {MAX_INT}")
    return value


def names(name: str, value: Any, allowed: tuple[str, ...] | None = None) -> tuple[Any, ...] | None:
    """None, or one string or an iterable of strings (`inputs.one_or_many`)."""
    return None if value is None else inputs.one_or_many(name, value, allowed)
