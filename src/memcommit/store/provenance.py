"""Which memories were derived from which, as recorded in their metadata.

A summary keeps the ids it was built from under ``metadata["provenance"]["built_from"]``:
every memory whose text it carries (the Compactor's, its merges' and TieredMemory's
consolidations', which summarize a segment's whole trace). A consolidation also lists
the mid-term members it replaced under ``metadata["consolidated"]``. Purge follows
these links so that no summary keeps the text of a memory that had to go.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: The metadata keys that hold a memory's links to its sources (an update keeps them:
#: `memcommit.store.transaction.Transaction.update`).
LINKS = ("provenance", "consolidated")


def sources(metadata: Mapping[str, Any] | None) -> list[str]:
    """The ids a memory's ``metadata`` says it was built from (none for most memories)."""
    if not metadata:
        return []
    provenance = metadata.get("provenance")
    built = provenance.get("built_from") if isinstance(provenance, Mapping) else None
    found = [*_ids(built), *_ids(metadata.get("consolidated"))]
    return list(dict.fromkeys(found))


def _ids(value: Any) -> list[str]:
    return [i for i in value if isinstance(i, str)] if isinstance(value, list) else []


def derived(
    ids: Iterable[str], candidates: Iterable[tuple[str, Mapping[str, Any] | None]]
) -> list[tuple[str, str]]:
    """(id, source) of each candidate built from one of ``ids``, directly or through another.

    ``candidates`` are (id, metadata) pairs; a summary of a summary of an id is
    found too, its source being the summary between. Breadth first, each once.
    """
    built_from: dict[str, list[str]] = {}
    for id, metadata in candidates:
        for source in sources(metadata):
            built_from.setdefault(source, []).append(id)
    todo = list(dict.fromkeys(ids))
    seen = set(todo)
    out: list[tuple[str, str]] = []
    for source in todo:  # grows while it is walked
        for id in built_from.get(source, ()):
            if id not in seen:
                seen.add(id)
                out.append((id, source))
                todo.append(id)
    return out
