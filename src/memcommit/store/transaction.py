"""One commit in the making: every change is checked when called, written when the block ends.

The transaction holds the writers' lock from its first read (on SQLite, from the
start; on PostgreSQL a block that only adds is ordered by the server as it lands:
`Buffer.pending`), so what it reads is what it will write over, and new versions
are buffered and written in one batch (fast for bulk adds).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Any

from memcommit.errors import Conflict, InvalidInput, NotFound
from memcommit.model import Memory
from memcommit.store import validate as v
from memcommit.store.backends.base import MemoryQuery
from memcommit.store.pending import UNORDERED_MOST, Pending
from memcommit.store.provenance import LINKS, derived, sources
from memcommit.store.tier_moves import TierMoves
from memcommit.store.trace_steps import TRACE_ENDINGS, TraceSteps


class Transaction(TierMoves, TraceSteps):
    """The ``tx`` of ``with store.commit(...) as tx``; ``tx.result`` is the landed Commit.

    ``tx.result`` stays None when the block changed nothing: no commit landed.
    """

    # -- adding ------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        kind: str = "fact",
        scope: str = "shared",
        tenant: str | None = None,
        session: str | None = None,
        key: str | None = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
        project: str | None = None,
        always: bool = False,
        token_count: int | None = None,
        metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        id: str | None = None,
        tier: str = "short",
    ) -> Memory:
        """Add a new memory (version 1) and return it; ``tenant`` defaults to "default"."""
        if self.unordered and len(self._versions) >= UNORDERED_MOST:
            self._order_first()  # a bulk commit: ordered rather than keep every memory
        m = self._new_memory(
            content,
            kind=kind,
            scope=scope,
            tenant=tenant,
            session=session,
            key=key,
            importance=importance,
            tags=tags,
            project=project,
            always=always,
            token_count=token_count,
            metadata=metadata,
            valid_from=valid_from,
            valid_to=valid_to,
            id=id,
            tier=tier,
        )
        self._record(m, "add", None)
        return m

    # -- changing ----------------------------------------------------------------

    def update(self, id: str, *, expected_version: int | None = None, **fields: Any) -> Memory:
        """A new version with ``fields`` changed; `Conflict` if ``expected_version`` moved on.

        New ``metadata`` replaces the old, except the links of a summary to its
        sources (`LINKS`): a link key it leaves out is kept as it was, and one it
        names must still list every source, or InvalidInput. Purge follows these
        links, so a summary relabelled still goes with the text it quotes.
        """
        cur = self._current(id, writable=True)
        if expected_version is not None:
            v.count("expected_version", expected_version, optional=False)
            if expected_version != cur.version:
                raise Conflict(id, expected_version, cur.version)
        if not fields:
            raise InvalidInput("fields", fields, f"name at least one of {', '.join(v.UPDATABLE)}")
        new = self._checked_fields(cur, fields)
        changed = {name: value for name, value in new.items() if getattr(cur, name) != value}
        if not changed:
            return cur  # every field already holds its value: no new version
        if "content" in changed:
            self._unembed[(cur.tenant, id)] = None
        return self._next(cur, "update", {"fields": sorted(changed)}, changed)

    def _checked_fields(self, cur: Memory, fields: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in fields.items():
            if name not in v.UPDATABLE:
                raise InvalidInput(
                    name, value, f"cannot be updated; allowed: {', '.join(v.UPDATABLE)}"
                )
            if name == "content":
                out[name] = v.content(value, self._limit)
            elif name == "kind":
                out[name] = v.kind(value)
            elif name == "scope":
                out[name] = v.text("scope", value)
            elif name in ("session", "key", "project"):
                out[name] = v.optional_text(name, value)
            elif name == "importance":
                out[name] = v.importance(value)
            elif name == "tags":
                out[name] = v.tags(value)
            elif name == "always":
                out[name] = v.flag("always", value)
            elif name == "token_count":
                out[name] = v.count("token_count", value)
            elif name == "metadata":
                out[name] = _linked(cur, v.metadata(value))
            elif name in ("valid_from", "valid_to"):
                out[name] = v.moment(name, value)
            else:
                out[name] = v.tier(value)
        v.window(out.get("valid_from", cur.valid_from), out.get("valid_to", cur.valid_to))
        return out

    def invalidate(self, id: str, at: datetime | None = None) -> Memory:
        """The memory no longer holds from ``at`` (default: this commit's time)."""
        cur = self._current(id, writable=True)
        at = v.moment("at", at) or self.pending.time
        if cur.valid_from is not None and at < cur.valid_from:
            raise InvalidInput("at", at, f"is before the memory's valid_from={cur.valid_from}")
        status = "invalidated" if at <= self.pending.time else cur.status
        return self._next(
            cur, "invalidate", {"at": at.isoformat()}, {"valid_to": at, "status": status}
        )

    def supersede(self, old_id: str, new_id: str) -> Memory:
        """``old_id`` is replaced by ``new_id``: it gets superseded_by and stops holding."""
        old = self._current(old_id, writable=True, field="old_id")
        new = self._current(new_id, field="new_id")
        if old_id == new_id:
            raise InvalidInput("new_id", new_id, "a memory cannot supersede itself")
        if new.tenant != old.tenant:
            raise NotFound("new_id", new_id)
        return self._next(
            old, "supersede", {"by": new_id}, {"superseded_by": new_id, "status": "superseded"}
        )

    def purge(self, id: str) -> Memory:
        """Erase the content, tags and metadata from every version; a tombstone stays.

        Every memory of the tenant derived from it (a summary of its trace, and
        summaries of that: see `memcommit.store.provenance`) is purged in the same
        commit, its change's detail naming the id it was ``derived_from``.
        """
        cur = self._current(id)
        if cur.status == "purged":
            return cur
        purged = self._erase(cur, {})
        for derived_id, source in derived([id], self._metadata_of(cur.tenant)):
            self._erase(self._current(derived_id), {"derived_from": source})
        return purged

    def _erase(self, cur: Memory, detail: dict[str, Any]) -> Memory:
        self._check_open()
        id = cur.id
        erased = {"content": "", "tags": (), "metadata": {}}
        erased_fields = {**erased, "metadata": None}
        self._versions = [{**f, **erased_fields} if f["id"] == id else f for f in self._versions]
        self._purges.append(id)
        self._unembed[(cur.tenant, id)] = None
        return self._next(cur, "purge", detail, {**erased, "status": "purged", "token_count": None})

    def _metadata_of(self, tenant: str) -> Iterator[tuple[str, Mapping[str, Any] | None]]:
        """(id, metadata) of each of ``tenant``'s memories as this commit leaves them."""
        if tenant not in self._stored_metadata:  # read once per commit: writers wait on us
            found = self._backend.memories(MemoryQuery(tenant=tenant, with_metadata=True))
            self._stored_metadata[tenant] = {m.id: m.metadata for m in found if m.metadata}
        pending = {i: f["metadata"] for i, f in self._latest.items() if f["tenant"] == tenant}
        yield from {**self._stored_metadata[tenant], **pending}.items()


def _linked(cur: Memory, metadata: dict[str, Any]) -> dict[str, Any]:
    """``metadata`` with ``cur``'s links to its sources kept (see `Transaction.update`)."""
    had = sources(cur.metadata)
    if not had:
        return metadata
    kept = {**{k: cur.metadata[k] for k in LINKS if k in cur.metadata}, **metadata}
    left = set(sources(kept))
    lost = next((i for i in had if i not in left), None)
    if lost is not None:  # only a key the update names can lose one
        key = next(k for k in LINKS if k in metadata and lost in sources({k: cur.metadata.get(k)}))
        raise InvalidInput(
            f"metadata[{key!r}]",
            metadata[key],
            f"drops source {lost!r} of {len(had)}: a derived memory keeps every id it was"
            f" built from, so that purging one purges it too; leave {key!r} out to keep it",
        )
    return kept if len(kept) == len(metadata) else v.metadata(kept)  # within the limits


__all__ = ["TRACE_ENDINGS", "Pending", "Transaction"]
