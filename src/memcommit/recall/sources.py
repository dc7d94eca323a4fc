"""Where recall reads from: a store (live index kept current by commits) or a list of memories.

A store gets one `StoreIndex` for its lifetime: tenants are indexed on their
first recall (one ``find``), and every landed commit updates the tenants
already indexed (``on_commit``), so no query rebuilds anything. Reads ``as_of``
an earlier commit, and plain lists of memories, get a throwaway index.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from memcommit.errors import InvalidInput, NotFound, Purged
from memcommit.model import Commit, Memory
from memcommit.recall.index import TenantIndex, Vocabulary

Loader = Callable[[Sequence[str]], list[Memory]]  # memories by id, in the order asked
_BULK_LOAD = 64  # above this many memories, one find() beats one get() each


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


class StoreIndex:
    """The live recall index of one store (or tenant view), updated by its commits."""

    def __init__(self, store: Any) -> None:
        self._store = weakref.ref(store)  # the store owns this index, not the other way round
        self.vocabulary = Vocabulary()
        self.tenants: dict[str, TenantIndex] = {}
        self.lock = threading.RLock()
        self.unsubscribe = store.on_commit(self._on_commit)

    @property
    def store(self) -> Any:
        """The store this index follows."""
        return self._store()

    def source(self, tenant: str) -> Source:
        """The tenant's index (built on first use) and a loader reading the store."""
        with self.lock:
            index = self.tenants.get(tenant)
            if index is None:
                index = TenantIndex(tenant, self.vocabulary)
                memories = self.store.find(tenant=tenant, live=False)
                index.put_many(m for m in memories if _indexable(m))
                self.tenants[tenant] = index
        known = len(index) > 0 or tenant in self.store.tenants()
        return Source(index, self._loader(tenant), known)

    def _loader(self, tenant: str) -> Loader:
        store = self.store

        def load(ids: Sequence[str]) -> list[Memory]:
            if len(ids) > _BULK_LOAD:
                found = {m.id: m for m in store.find(tenant=tenant, live=False)}
                return [found[i] for i in ids]
            return [store.get(i) for i in ids]

        return load

    def _on_commit(self, commit: Commit) -> None:
        ids = list(dict.fromkeys(c.memory_id for c in commit.changes if c.memory_id))
        with self.lock:
            if not self.tenants or self.store is None:
                return
            for memory_id in ids:
                try:
                    memory = self.store.get(memory_id)
                except Purged:
                    for index in self.tenants.values():
                        index.remove(memory_id)
                    continue
                except NotFound:  # a trace id, not a memory
                    continue
                index = self.tenants.get(memory.tenant)
                if index is None:
                    continue
                if _indexable(memory):
                    index.put(memory)
                else:
                    index.remove(memory.id)


_live: weakref.WeakKeyDictionary[Any, StoreIndex] = weakref.WeakKeyDictionary()
_live_lock = threading.Lock()


def store_index(store: Any) -> StoreIndex:
    """The live index of ``store``, created (and subscribed to its commits) on first use.

    A tenant view that names its store (``view.store``) shares the store's index;
    otherwise the view gets its own, unsubscribed when the view goes away.
    """
    store = getattr(store, "store", None) or store
    with _live_lock:
        found = _live.get(store)
        if found is None:
            found = _live[store] = StoreIndex(store)
            weakref.finalize(store, found.unsubscribe)
        return found


def from_store(store: Any, tenant: str, as_of: Any) -> Source:
    """The tenant's source in ``store``: the live index, or a throwaway one ``as_of``."""
    if as_of is None:
        return store_index(store).source(tenant)
    memories = store.find(tenant=tenant, live=False, as_of=as_of)
    source = from_memories(memories, tenant)
    source.known = source.known or tenant in store.tenants(as_of=as_of)
    return source
