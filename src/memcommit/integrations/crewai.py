"""CrewAI's memory storage over memcommit: the `StorageBackend` its unified ``Memory`` calls.

    import memcommit
    from crewai import Crew
    from crewai.memory.unified_memory import Memory
    from memcommit.integrations.crewai import MemcommitStorage

    storage = MemcommitStorage(memcommit.open("memory.db"), tenant="acme")
    crew = Crew(agents=..., tasks=..., memory=Memory(storage=storage))

CrewAI 1.x replaced its short-term, long-term and entity memories with one
``Memory`` over a pluggable ``StorageBackend`` (records with a hierarchical
scope, categories, metadata, importance and an embedding). Each record is a
memcommit memory of one tenant: its content is the record's text, its scope the
record's scope path, its key the record's id, and ``metadata["crewai"]`` the
record as CrewAI dumps it, with its embedding. ``update`` and ``touch_records``
write new versions, deletes and ``reset`` invalidate (history keeps every
record), and ``search`` is `memcommit.recall` with a scorer that gives LanceDB's
score, ``1 / (1 + squared L2 distance)``; ``recall(...)`` returns its
explanation. Any other memory of the tenant (one written through MCP or the
API, whatever its metadata says) is no record: every read leaves it out and no
write touches it. Needs ``memcommit[crewai]``.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import memcommit
from memcommit.errors import InvalidInput
from memcommit.integrations import marks, needs, opened
from memcommit.model import Memory
from memcommit.recall import Context, RecallOptions
from memcommit.recall import recall as run_recall
from memcommit.store import validate

with needs("crewai", __name__):  # the framework: a clear error without its extra
    from crewai.memory.storage.backend import EmbeddingDimensionMismatchError
    from crewai.memory.types import MemoryRecord, ScopeInfo
    from pydantic import ValidationError

#: The metadata key of a record; the state namespace of the tenant's vector size.
MARK = "crewai"
_DIMENSION = "crewai-dimension"
#: The shape of a record's mark: CrewAI's JSON dump of a `MemoryRecord`, with its embedding.
_REQUIRED: marks.Shape = {
    "id": str,
    "content": str,
    "scope": str,
    "categories": list,
    "metadata": Mapping,
    "importance": (int, float),
    "created_at": str,
    "last_accessed": str,
    "private": bool,
}
_OPTIONAL: marks.Shape = {"source": str, "embedding": list}


class UnserializableRecord(InvalidInput, TypeError):
    """Metadata that is not JSON: a memcommit InvalidInput and, as in CrewAI, a TypeError."""


def under(scope: str, prefix: str | None) -> bool:
    """Whether ``scope`` is ``prefix`` or below it, a path label at a time (None or "/": all)."""
    if prefix is None or not prefix.strip("/"):
        return True
    base = "/" + prefix.strip("/")
    return scope == base or scope.startswith(base + "/")


def lancedb_score(vector: list[float], query: list[float]) -> float:
    """LanceDB's score of a stored vector for a query: ``1 / (1 + squared L2 distance)``."""
    return 1.0 / (1.0 + sum((a - b) ** 2 for a, b in zip(vector, query, strict=True)))


class MemcommitStorage:
    """CrewAI's `StorageBackend` kept in one tenant of a memcommit store.

    ``store`` is a `memcommit.Store`, or a path or ``postgresql://`` URL to open
    (with ``options``); ``vector_dim`` fixes the embedding size up front, else
    the first saved embedding sets it (kept in the tenant, so a reopened storage
    refuses another size, as CrewAI's LanceDB storage does).
    """

    def __init__(
        self,
        store: memcommit.Store | str | Path = "memcommit.db",
        *,
        tenant: str = "default",
        vector_dim: int | None = None,
        options: Mapping[str, Any] | None = None,
        author: str = "crewai",
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        if vector_dim is not None and (
            isinstance(vector_dim, bool) or not isinstance(vector_dim, int) or vector_dim < 1
        ):
            raise InvalidInput("vector_dim", vector_dim, "must be an int >= 1 or None")
        self._store, self._target = opened(store, options)
        self.view = self._store.tenant(tenant)
        self.tenant, self.author, self.clock = tenant, author, clock
        if vector_dim is not None and self._dimension() is None:
            validate.tenant_name(tenant)  # state is written too: not for a name memories refuse
            self.view.state_set(_DIMENSION, "size", vector_dim)

    # -- writes ---------------------------------------------------------------------

    def save(self, records: list[MemoryRecord]) -> None:
        """Write the records in one commit; a record whose id is held becomes a new version."""
        checked = _records(records)
        if not checked:
            return
        self._check_dimension([r.embedding for r in checked])
        rows = {record.id: (record, _stored(record)) for record in checked}  # last one wins
        with self._commit(f"crewai: save {len(rows)} record(s)") as tx:
            held = self._by_id(rows)
            for record, stored in rows.values():
                if record.id in held:
                    tx.update(held[record.id][0].id, **_fields(record, stored))
                else:
                    tx.add(kind="fact", key=record.id, **_fields(record, stored))
        self._settle_dimension(checked)

    def update(self, record: MemoryRecord) -> None:
        """Replace the record with the same id (a new version; added if absent)."""
        self.save([record])

    def touch_records(self, record_ids: list[str]) -> None:
        """Set the records' ``last_accessed`` to now, in one commit of new versions.

        The records are read inside the commit, under the writers' lock: one
        another writer updated since is touched as that writer left it (its
        update is never undone), one deleted since stays deleted.
        """
        ids = _ids("record_ids", record_ids)
        when = _naive(self._now() or datetime.now(timezone.utc)).isoformat()
        with self._commit("crewai: touch records") as tx:
            held = self._by_id(ids)
            tx.message = f"crewai: touch {len(held)} record(s)"
            for memory, _ in held.values():
                stored = {**memory.metadata[MARK], "last_accessed": when}
                tx.update(memory.id, metadata={MARK: stored})

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Invalidate the records matching every given criterion; how many."""
        ids = None if record_ids is None else set(_ids("record_ids", record_ids))
        if older_than is not None and not isinstance(older_than, datetime):
            raise InvalidInput("older_than", older_than, "must be a datetime or None")

        def chosen() -> list[Memory]:
            return [
                memory
                for memory, record in self._held(scope_prefix, categories, metadata_filter)
                if (ids is None or record.id in ids)
                and (older_than is None or _naive(record.created_at) < _naive(older_than))
            ]

        return self._invalidate(chosen, "delete")

    def reset(self, scope_prefix: str | None = None) -> None:
        """Invalidate every record under ``scope_prefix`` (None or "/": all, and the size)."""
        self._invalidate(lambda: [memory for memory, _ in self._held(scope_prefix)], "reset")
        if scope_prefix is None or not str(scope_prefix).strip("/"):
            self.view.state_delete(_DIMENSION, "size")

    # -- reads ----------------------------------------------------------------------

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The nearest records under the scope, best first, each with LanceDB's score."""
        ctx = self.recall(
            query_embedding, scope_prefix, categories, metadata_filter, limit, min_score
        )
        rows = ctx.explanation.page(0, len(ctx.selected), outcome="selected")
        found = [(_record(row.memory), float(row.score or 0.0)) for row in rows]
        return [(record, score) for record, score in found if record is not None]

    def recall(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> Context:
        """The `memcommit.recall` Context behind `search`: every record's row, why each left."""
        query = _vector("query_embedding", query_embedding)
        self._check_dimension([query])
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
            raise InvalidInput("limit", limit, "must be an int >= 0")
        matches = _matcher(scope_prefix, categories, metadata_filter)

        def score(memory: Memory, _: Any) -> float | None:
            record = _record(memory)
            if record is None or not matches(record):
                return None
            vector = record.embedding or [0.0] * len(query)
            if len(vector) != len(query):  # never saved so, but a memory of the shape may be
                return None
            found = lancedb_score(vector, query)
            return found if found >= min_score else None

        options = RecallOptions(
            scorer=score,
            max_records=limit,
            latest_per_key=False,  # a record's id is its key: another memory's may be the same
            now=self._now(),
        )
        return run_recall(self.view, "", options)

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record ``record_id``, or None."""
        found = self._by_id(_ids("record_id", [record_id]))
        return found[record_id][1] if found else None

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """A page of the records under the scope, newest (by ``created_at``) first."""
        if limit <= 0 or offset < 0:
            return []
        records = [record for _, record in self._held(scope_prefix)]
        records.sort(key=lambda r: _naive(r.created_at), reverse=True)
        return records[offset : offset + limit]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records the scope holds (with its subscopes), their categories and span."""
        path = _scope(scope).rstrip("/") or "/"
        records = [record for _, record in self._held(path)]
        created = [record.created_at for record in records]
        return ScopeInfo(
            path=path,
            record_count=len(records),
            categories=sorted({c for record in records for c in record.categories}),
            oldest_record=min(created, default=None, key=_naive),
            newest_record=max(created, default=None, key=_naive),
            child_scopes=_children(path, [record.scope for record in records]),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes of ``parent``."""
        path = _scope(parent).rstrip("/") or "/"
        return _children(path, [record.scope for _, record in self._held(path)])

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """Each category under the scope and how many records carry it."""
        counts: dict[str, int] = {}
        for _, record in self._held(scope_prefix):
            for category in record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records the scope (and its subscopes) holds."""
        return len(self._held(scope_prefix))

    # -- async ----------------------------------------------------------------------

    async def asave(self, records: list[MemoryRecord]) -> None:
        """`save` on a worker thread."""
        await asyncio.to_thread(self.save, records)

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """`search` on a worker thread."""
        criteria = (scope_prefix, categories, metadata_filter, limit, min_score)
        return await asyncio.to_thread(self.search, query_embedding, *criteria)

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """`delete` on a worker thread."""
        criteria = (scope_prefix, categories, record_ids, older_than, metadata_filter)
        return await asyncio.to_thread(self.delete, *criteria)

    def close(self) -> None:
        """Close the store if this storage opened it (a store you passed stays open)."""
        if self._target is not None:
            self._store.close()

    # -- the work -------------------------------------------------------------------

    def _now(self) -> datetime | None:
        return None if self.clock is None else self.clock()

    def _commit(self, message: str) -> Any:
        return self.view.commit(message=message, author=self.author, now=self._now())

    def _records(self) -> list[tuple[Memory, MemoryRecord]]:
        """The tenant's records that hold, each with its memory (other memories left out)."""
        found = [(m, _record(m)) for m in self.view.find(kinds=["fact"])]
        return [(memory, record) for memory, record in found if record is not None]

    def _held(
        self,
        scope_prefix: str | None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> list[tuple[Memory, MemoryRecord]]:
        matches = _matcher(scope_prefix, categories, metadata_filter)
        return [(m, r) for m, r in self._records() if matches(r)]

    def _by_id(self, ids: Iterable[str]) -> dict[str, tuple[Memory, MemoryRecord]]:
        """The records of these ids that hold, with their memories (an unknown id is left out)."""
        held: dict[str, tuple[Memory, MemoryRecord]] = {}
        for record_id in ids:
            for memory in self.view.find(key=record_id, kinds=["fact"]):
                record = _record(memory)
                if record is not None:
                    held[record_id] = (memory, record)
        return held

    def _invalidate(self, pick: Callable[[], list[Memory]], verb: str) -> int:
        """Invalidate the records ``pick`` reads inside the commit; how many.

        Read under the writers' lock, they are the records that hold as the
        commit lands: one another writer deleted since is not invalidated again.
        """
        with self._commit(f"crewai: {verb} records") as tx:
            memories = pick()
            tx.message = f"crewai: {verb} {len(memories)} record(s)"
            for memory in memories:
                tx.invalidate(memory.id)
        return len(memories)

    def _dimension(self) -> int | None:
        size: int | None = self.view.state_get(_DIMENSION, "size")
        return size

    def _check_dimension(self, vectors: list[list[float] | None]) -> None:
        sizes = [len(v) for v in vectors if v]
        known = self._dimension() or (sizes[0] if sizes else None)
        for size in sizes:
            if known is not None and size != known:
                raise EmbeddingDimensionMismatchError(known, size)

    def _settle_dimension(self, records: list[MemoryRecord]) -> None:
        sizes = [len(r.embedding) for r in records if r.embedding]
        if sizes and self._dimension() is None:
            self.view.state_set(_DIMENSION, "size", sizes[0])


def _matcher(
    scope_prefix: str | None, categories: list[str] | None, metadata_filter: dict[str, Any] | None
) -> Callable[[MemoryRecord], bool]:
    """What a record must be to count: under the scope, of a category, of the metadata."""
    if scope_prefix is not None and not isinstance(scope_prefix, str):
        raise InvalidInput("scope_prefix", scope_prefix, "must be a scope path or None")
    if categories is not None and (
        isinstance(categories, str) or not all(isinstance(c, str) for c in categories)
    ):
        raise InvalidInput("categories", categories, "must be a list of text or None")
    if metadata_filter is not None and not isinstance(metadata_filter, Mapping):
        raise InvalidInput("metadata_filter", metadata_filter, "must be a mapping or None")

    def matches(record: MemoryRecord) -> bool:
        if not under(record.scope, scope_prefix):
            return False
        if categories and not set(categories) & set(record.categories):
            return False
        held = record.metadata
        return not metadata_filter or all(held.get(k) == v for k, v in metadata_filter.items())

    return matches


def _children(path: str, scopes: Iterable[str]) -> list[str]:
    """The scopes one label below ``path`` that lead to any of ``scopes``."""
    base = "" if path == "/" else path
    below = [s[len(base) + 1 :] for s in scopes if s.startswith(base + "/")]
    return sorted({f"{base}/{rest.split('/')[0]}" for rest in below if rest})


def _naive(moment: datetime) -> datetime:
    """CrewAI's times are naive UTC (``datetime.utcnow``); compare aware ones as such."""
    return moment if moment.tzinfo is None else moment.astimezone(timezone.utc).replace(tzinfo=None)


def _scope(value: Any) -> str:
    if not isinstance(value, str):
        raise InvalidInput("scope", value, "must be a scope path")
    return value if value.startswith("/") else "/" + value


def _ids(field: str, values: Any) -> list[str]:
    if isinstance(values, str) or not isinstance(values, Iterable):
        raise InvalidInput(field, values, "must be a list of record ids")
    out = list(values)
    for value in out:
        if not isinstance(value, str) or not value:
            raise InvalidInput(field, value, "a record id must be non-empty text")
    return out


def _vector(field: str, value: Any) -> list[float]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise InvalidInput(field, value, "must be a list of numbers")
    out = list(value)
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in out):
        raise InvalidInput(field, value, "must be a list of numbers")
    return [float(x) for x in out]


def _records(records: Any) -> list[MemoryRecord]:
    if isinstance(records, (str, bytes, Mapping, MemoryRecord)) or not isinstance(
        records, Iterable
    ):
        raise InvalidInput("records", records, "must be a list of crewai MemoryRecord")
    out = list(records)
    for record in out:
        if not isinstance(record, MemoryRecord):
            raise InvalidInput("records", record, "each record must be a crewai MemoryRecord")
        if not record.content.strip():
            raise InvalidInput("records", record, "a record's content must not be empty")
    return out


def _stored(record: MemoryRecord) -> dict[str, Any]:
    """The record as a memory keeps it: CrewAI's JSON dump, and its embedding."""
    try:
        json.dumps(record.metadata)
    except TypeError as exc:
        raise UnserializableRecord("metadata", record.metadata, str(exc)) from exc
    return {**record.model_dump(mode="json"), "embedding": record.embedding}


def _fields(record: MemoryRecord, stored: dict[str, Any]) -> dict[str, Any]:
    return {
        "content": record.content,
        "scope": record.scope,
        "importance": record.importance,
        "metadata": {MARK: stored},
    }


def _record(memory: Memory) -> MemoryRecord | None:
    """The record ``memory`` holds if it has the shape `save` writes, else None.

    Any memory of the tenant may carry metadata named "crewai" (one written
    through MCP or the API, say): only a mark of the shape `save` writes (every
    field of a dumped record, its id the memory's key, its scope the memory's)
    that CrewAI validates makes it a record.
    """
    mark = marks.mark_of(memory, MARK, key="id", required=_REQUIRED, optional=_OPTIONAL)
    if mark is None or mark["scope"] != memory.scope:
        return None
    try:
        return MemoryRecord.model_validate(dict(mark))
    except ValidationError:
        return None


__all__ = ["MemcommitStorage", "UnserializableRecord", "lancedb_score", "under"]
