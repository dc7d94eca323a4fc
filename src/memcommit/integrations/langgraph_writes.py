"""The writes of the LangGraph adapter: puts and deletes in one commit, TTL refreshes, purges.

`ItemWriter` holds what an adapter writes to (a tenant of a memcommit store,
its clock, the embedding) and every write; `langgraph._Items` adds the reads.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import memcommit
from memcommit.errors import InvalidInput
from memcommit.integrations import namespaces, needs

with needs("langgraph", __name__):  # the framework: a clear error without its extra
    from langgraph.store.base import (
        IndexConfig,
        PutOp,
    )

from memcommit.integrations.langchain import Embedded
from memcommit.integrations.langgraph_items import (
    MARK,
    Embedder,
    Stored,
    check_text,
    commit_message,
    expiry,
    item_mark,
    leaves,
    utc_now,
    where,
)


class ItemWriter:
    """One tenant of a memcommit store, as a LangGraph store writes it."""

    def __init__(
        self,
        store: memcommit.Store,
        *,
        tenant: str,
        index: IndexConfig | None,
        clock: Callable[[], datetime] | None,
        author: str,
        kind: str,
        as_of: Any = None,
    ) -> None:
        if not isinstance(store, memcommit.Store):
            raise InvalidInput("store", store, "must be a memcommit.Store (memcommit.open(...))")
        self.store = store
        self.view = store.tenant(tenant)
        self.embedder = None if index is None else Embedder(index)
        self.clock = clock
        self.author = author
        self.kind = kind
        self.as_of = as_of

    # -- reading -------------------------------------------------------------------

    def now(self) -> datetime:
        """The moment reads are at: the as_of commit's time, or the clock's."""
        if isinstance(self.as_of, datetime):
            return self.as_of
        if self.as_of is not None:
            return self.store.show(self.as_of).time
        return (self.clock or utc_now)()

    # -- writing -------------------------------------------------------------------

    def writable(self) -> None:
        if self.as_of is not None:
            raise InvalidInput("as_of", self.as_of, "a store read as of a commit cannot write")

    def write(self, puts: list[PutOp]) -> None:
        """Every put and delete of a batch in one commit (none when nothing changes).

        The items are read inside the commit, under the writers' lock, so a
        concurrent writer's put of the same key is seen, never duplicated.
        """
        self.writable()
        fields = {(op.namespace, op.key): self.fields(op) for op in puts if op.value is not None}
        indexed: list[str] = []
        ahead = None
        if self.embedder is not None:  # before the commit: a failing embedding lands nothing
            texts = [content for (content, mark) in fields.values() if mark["indexed"]]
            ahead = Embedded(self.embedder.memcommit, texts)
        with self._commit(commit_message(puts)) as tx:
            at = tx.pending.time
            found = self.newest({namespaces.scope_of(op.namespace) for op in puts})
            for op in puts:
                scope = namespaces.scope_of(op.namespace)
                old = found.get((scope, op.key))
                if op.value is None:
                    if old is not None and old.memory.holds(at):
                        tx.invalidate(old.memory.id)
                    continue
                content, mark = fields[(op.namespace, op.key)]
                valid_to = None if op.ttl is None else expiry(at, op.ttl)
                if old is None or old.memory.status != "active":
                    written = tx.add(content, kind=self.kind, scope=scope, key=op.key,
                                     metadata={MARK: mark}, valid_to=valid_to)  # fmt: skip
                else:
                    written = tx.update(old.memory.id, content=content, metadata={MARK: mark},
                                        valid_to=valid_to)  # fmt: skip
                if mark["indexed"]:
                    indexed.append(written.id)
        if ahead is not None and indexed:
            self.view.embed_ids(ahead, indexed)

    def newest(self, scopes: set[str]) -> dict[tuple[str, str], Stored]:
        """The newest memory of each item in ``scopes``, whatever its state."""
        found = self.view.find(live=False, scopes=sorted(scopes))
        return {(s.memory.scope, s.key): s for s in map(Stored.of, found) if s is not None}

    def fields(self, op: PutOp) -> tuple[str, dict[str, Any]]:
        """The memory content and metadata that hold ``op``'s item."""
        if not isinstance(op.value, Mapping):
            raise InvalidInput("value", op.value, "must be a mapping (a JSON object) or None")
        if op.ttl is not None and (
            isinstance(op.ttl, bool)
            or not isinstance(op.ttl, (int, float))
            or not math.isfinite(op.ttl)
            or op.ttl <= 0
        ):
            raise InvalidInput("ttl", op.ttl, "must be finite minutes > 0, or None")
        if op.ttl is not None:
            expiry(self.now(), op.ttl)
        check_text("key", op.key)
        value = dict(op.value)
        try:
            json.dumps(value)
        except TypeError as error:
            raise InvalidInput("value", op.value, f"must be JSON: {error}") from None
        indexed = op.index is not False
        mark: dict[str, Any] = {"key": op.key, "value": value, "indexed": indexed, "ttl": op.ttl}
        if self.embedder is not None:
            texts = self.embedder.texts(value, None if op.index in (None, False) else op.index)
            if indexed and len(texts) > 1:  # one text: the stored vector is its vector
                mark["vectors"] = self.embedder.vectors(texts)
        else:
            texts = list(leaves(value))
        content = "\n".join(t for t in texts if t.strip()) or json.dumps(
            value, sort_keys=True, ensure_ascii=False
        )
        return content, mark

    def refresh(self, items: list[Stored]) -> None:
        """Move the expiry of items read with refresh_ttl, in one commit (none if none moves).

        The items are read again inside the commit: one that a concurrent writer
        changed or deleted since the read is left as that writer made it.
        """
        if not items or self.as_of is not None:
            return
        with self._commit("langgraph: refresh ttl") as tx:
            at = tx.pending.time
            newest = self.newest({s.memory.scope for s in items})
            for s in items:
                now = newest.get((s.memory.scope, s.key))
                if now is None or now.memory.id != s.memory.id or now.ttl is None:
                    continue
                if now.memory.version != s.memory.version or not now.memory.holds(at):
                    continue
                tx.update(s.memory.id, valid_to=expiry(at, now.ttl, clamp=True))

    def purge(self, namespace: tuple[str, ...], key: str) -> None:
        """Erase every memory that ever held the item (tombstones stay in history).

        The item's memories are read inside the commit, under the writers' lock:
        one a concurrent writer put since is purged too, and a commit that finds
        none lands nothing.
        """
        self.writable()
        scope = namespaces.scope_of(namespace)
        with self._commit(f"langgraph: purge {where(namespace, key)}") as tx:
            for m in self.view.find(live=False, scopes=[scope], key=key):
                if item_mark(m) is not None:
                    tx.purge(m.id)

    def _commit(self, message: str) -> Any:
        """A commit of the tenant by this store's author, at its clock's time."""
        return self.view.commit(message=message, author=self.author, now=self._moment())

    def _moment(self) -> datetime | None:
        return None if self.clock is None else self.clock()
