"""Building model values quickly from fields that are already known to be valid.

A dataclass's frozen ``__init__`` costs a setattr per field; a bulk commit of
100,000 memories (or a read of thousands) would spend most of its time there.
`memory` fills the instance dict directly instead; callers pass every field.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import lru_cache
from typing import Any

from memcommit.model import Change, Commit, Memory

_new = object.__new__
_set = object.__setattr__


def memory(fields: dict[str, Any]) -> Memory:
    """A Memory from a dict holding every field (validated by the caller); the dict is adopted."""
    m = _new(Memory)
    _set(m, "__dict__", fields)
    return m


def change(op: str, memory_id: str | None, version: int | None, detail: dict[str, Any]) -> Change:
    """A Change without the dataclass ``__init__`` (one per memory in a bulk commit)."""
    c = _new(Change)
    _set(c, "__dict__", {"op": op, "memory_id": memory_id, "version": version, "detail": detail})
    return c


def commit(
    *,
    seq: int,
    id: str,
    parent: str | None,
    time: datetime,
    author: str,
    message: str,
    changes: tuple[Change, ...],
) -> Commit:
    """A Commit without the dataclass ``__init__`` (one per write and per commit read)."""
    c = _new(Commit)
    _set(
        c,
        "__dict__",
        {"seq": seq, "id": id, "parent": parent, "time": time, "author": author,
         "message": message, "changes": changes},
    )  # fmt: skip
    return c


def fields_of(m: Memory) -> dict[str, Any]:
    """A copy of every field of ``m``, to derive the next version from."""
    return dict(m.__dict__)


@lru_cache(maxsize=256)  # a commit writes its own time into every row
def to_text(dt: datetime | None) -> str | None:
    """A datetime as fixed-width UTC ISO text, so text order is time order."""
    if dt is None:
        return None
    if dt.tzinfo is not timezone.utc:
        dt = dt.astimezone(timezone.utc)
    return dt.isoformat(timespec="microseconds")


def from_text(text: str | None) -> datetime | None:
    """The inverse of `to_text`."""
    return None if text is None else datetime.fromisoformat(text)
