"""How an adapter knows its own items among a tenant's memories.

An adapter keeps an item's own fields in one metadata entry (its mark), under
the adapter's name. Any memory may carry metadata of that name (a user writing
through MCP, the CLI or the API knows nothing of the adapters), so a mark is
recognised by its whole shape, never by its name alone: metadata holding the
mark and nothing else, every field of the declared type, and the field that
names the item (if the adapter keys its items) equal to the memory's key. A
memory that fails is simply not an item, and never breaks the adapter's reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memcommit.model import Memory

#: Field name -> the types its value may have.
Shape = Mapping[str, type | tuple[type, ...]]


def mark_of(
    memory: Memory, name: str, *, key: str | None, required: Shape, optional: Shape
) -> Mapping[str, Any] | None:
    """``memory``'s mark ``name`` if it has the adapter's shape, else None.

    ``key`` names the field that must equal ``memory.key`` (None for an adapter
    whose memories have no key, as Google ADK's); ``required`` fields must be
    present, ``optional`` ones may be missing or None; no other field is allowed.
    """
    metadata = memory.metadata
    mark = metadata.get(name) if len(metadata) == 1 else None
    if not isinstance(mark, Mapping):
        return None
    if key is not None and mark.get(key) != memory.key:
        return None
    if any(field not in required and field not in optional for field in mark):
        return None
    for field, types in required.items():
        if field not in mark or not _typed(mark[field], types):
            return None
    for field, types in optional.items():
        if mark.get(field) is not None and not _typed(mark[field], types):
            return None
    return mark


def _typed(value: Any, types: type | tuple[type, ...]) -> bool:
    """``isinstance``, except that a bool is no number."""
    if isinstance(value, bool):
        return bool in (types if isinstance(types, tuple) else (types,))
    return isinstance(value, types)
