"""Where recall reads from: a store (live index kept current by commits) or a list of memories.

A store gets one `StoreIndex` for its lifetime: tenants are indexed on their
first recall (one ``find``), and every landed commit updates the tenants
already indexed (``on_commit``), so no query rebuilds anything. Commits made by
other processes or hosts (which ``on_commit`` never hears of) are caught up at
the next recall: it compares the store's ``head_seq`` with the last commit the
index has seen and applies ``diff`` in between. Reads ``as_of`` an earlier
commit, and plain lists of memories, get a throwaway index.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memcommit.errors import InvalidInput, NotFound
from memcommit.model import Commit, Memory
from memcommit.recall.index import TenantIndex, Vocabulary
from memcommit.store.protocols import CommitRef, ViewLike
from memcommit.store.tenant import backing_store

Loader = Callable[[Sequence[str]], list[Memory]]  # memories by id, in the order asked


@dataclass
class Source:
    """One tenant's index, how to load its memories, and whether the tenant exists."""

    index: TenantIndex
    load: Loader
    known: bool


def _indexable(memory: Memory) -> bool:
    return memory.status != "purged"


def from_memories(memories: Iterable[Memory], tenant: str) -> Source:
    """A throwaway index over the memories of ``tenant`` in a plain list."""
    index = TenantIndex(tenant)
    mine: dict[str, Memory] = {}
    for memory in memories:
        if not isinstance(memory, Memory):
            raise InvalidInput("store_or_view", memory, "a list must hold memcommit Memory values")
        if memory.tenant == tenant and _indexable(memory):
            mine[memory.id] = memory
    index.put_many(mine.values())
    return Source(index, lambda ids: [mine[i] for i in ids], bool(mine))


#: Past this many changed memories, catching up drops the indexes (rebuilt on next use).
CATCH_UP_LIMIT = 20_000


class StoreIndex:
    """The live recall index of one store, updated by its commits; shared by its tenant views."""

    def __init__(self, store: ViewLike) -> None:
        self._store = weakref.ref(store)  # the store owns this index, not the other way round
        self.vocabulary = Vocabulary()
        self.tenants: dict[str, TenantIndex] = {}
        self.lock = threading.RLock()
        self.seen = store.head_seq  # every commit up to this one is in the indexes
        self.unsubscribe = store.on_commit(self._on_commit)

    @property
    def store(self) -> Any:
        """The store this index follows."""
        return self._store()

    def source(self, tenant: str) -> Source:
        """The tenant's index (built on first use) and a loader reading the store."""
        with self.lock:
            self._catch_up()
            index = self.tenants.get(tenant)
            if index is None:
                index = TenantIndex(tenant, self.vocabulary)
                memories = self.store.find(tenant=tenant, live=False)
                index.put_many(m for m in memories if _indexable(m))
                self.tenants[tenant] = index
        known = len(index) > 0 or tenant in self.store.tenants()
        return Source(index, store_loader(self.store, tenant), known)

    def _catch_up(self) -> None:
        """Apply the commits of other writers that landed since the last one seen."""
        head = self.store.head_seq
        if head == self.seen:
            return
        if self.tenants:
            ids = list(dict.fromkeys(c.memory_id for c in self.store.diff(self.seen, head)))
            if len(ids) > CATCH_UP_LIMIT:
                self.tenants.clear()  # cheaper to index each tenant again when next asked
            else:
                self._apply([i for i in ids if i])
        self.seen = head

    def _on_commit(self, commit: Commit) -> None:
        with self.lock:
            self._apply([c.memory_id for c in commit.changes if c.memory_id])
            if commit.seq == self.seen + 1:  # otherwise another writer's commits came between
                self.seen = commit.seq

    def _apply(self, ids: list[str]) -> None:
        """Put the current versions of ``ids`` into the indexes of tenants already indexed."""
        ids = list(dict.fromkeys(ids))
        with self.lock:
            store = self.store
            if not ids or not self.tenants or store is None:
                return
            found = {m.id: m for m in store.find(ids=ids, live=False)}  # trace ids: absent
            changed: dict[str, list[Memory]] = {}
            for memory_id in ids:
                memory = found.get(memory_id)
                if memory is not None and memory.tenant in self.tenants:
                    changed.setdefault(memory.tenant, []).append(memory)
            for tenant, memories in changed.items():
                index = self.tenants[tenant]
                index.put_many(m for m in memories if _indexable(m))
                for memory in memories:
                    if not _indexable(memory):  # purged: no longer a document
                        index.remove(memory.id)


def store_loader(store: ViewLike, tenant: str) -> Loader:
    """Loads one tenant's memories by id from ``store`` in one read, in the order asked.

    The read names the ids only (so the backend looks them up by primary key)
    and the tenant is checked here: another tenant's memory is never returned.
    """

    def load(ids: Sequence[str]) -> list[Memory]:
        if not ids:
            return []
        found = {m.id: m for m in store.find(ids=list(ids), live=False) if m.tenant == tenant}
        missing = next((i for i in ids if i not in found), None)
        if missing is not None:
            raise NotFound("id", missing)
        return [found[i] for i in ids]

    return load


_live: weakref.WeakKeyDictionary[ViewLike, StoreIndex] = weakref.WeakKeyDictionary()
_live_lock = threading.Lock()


def store_index(store: ViewLike) -> StoreIndex:
    """The live index of ``store``, created (and subscribed to its commits) on first use.

    A tenant view leads to its store (``backing_store``), so every view of one store,
    and the store itself, share one index: each tenant is indexed once.
    """
    store = backing_store(store)
    with _live_lock:
        found = _live.get(store)
        if found is None:
            found = _live[store] = StoreIndex(store)
            weakref.finalize(store, found.unsubscribe)
        return found


def from_store(store: ViewLike, tenant: str, as_of: CommitRef | None) -> Source:
    """The tenant's source in ``store``: the live index, or a throwaway one ``as_of``."""
    if as_of is None:
        return store_index(store).source(tenant)
    memories = store.find(tenant=tenant, live=False, as_of=as_of)
    source = from_memories(memories, tenant)
    source.known = source.known or tenant in store.tenants(as_of=as_of)
    return source
