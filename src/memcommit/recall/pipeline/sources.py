"""Where recall reads from: a store's live index, a store as of an earlier commit, or a list.

A `Source` is one tenant's index, how to load its memories, and whether the
tenant exists. A store's present state comes from its live index
(`memcommit.recall.index.live`: opened once, kept current by commits, kept on
disk); reads ``as_of`` an earlier commit, and plain lists of memories, get a
throwaway index.

A snapshot's blocks are checked when first read, so damage can surface in the
middle of a recall or a commit's update: the tenant's index and snapshot are
then dropped, and the recall runs again on an index rebuilt from the store
(`rebuilt_when_damaged`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ParamSpec, TypeVar

from memcommit.embedding import Embedder
from memcommit.errors import IndexDamaged, InvalidInput, NotFound
from memcommit.model import Memory
from memcommit.recall.index import files
from memcommit.recall.index.live import store_index
from memcommit.recall.index.reopen import indexable
from memcommit.recall.index.tenant import TenantIndex
from memcommit.recall.index.vectors import VectorReader
from memcommit.store.protocols import CommitRef, ViewLike

Loader = Callable[[Sequence[str]], list[Memory]]  # memories by id, in the order asked


@dataclass
class Source:
    """One tenant's index, how to load its memories, and whether the tenant exists.

    ``embedder`` is the store's (None: recall ranks by words), ``vectors`` its read
    of the stored vectors (`memcommit.recall.index.vectors`); ``save`` writes the
    live index's files again (its snapshot and vector files), None for a throwaway index;
    ``measure`` charges the index to its cache again once a recall has read it (the
    vector rows it put, what its query derived), None for a throwaway index.
    """

    index: TenantIndex
    load: Loader
    known: bool
    embedder: Embedder | None = None
    vectors: VectorReader | None = None
    save: Callable[[], object] | None = None
    measure: Callable[[], object] | None = None


def from_memories(memories: Iterable[Memory], tenant: str) -> Source:
    """A throwaway index over the memories of ``tenant`` in a plain list."""
    index = TenantIndex(tenant)
    mine: dict[str, Memory] = {}
    for memory in memories:
        if not isinstance(memory, Memory):
            raise InvalidInput("store_or_view", memory, "a list must hold memcommit Memory values")
        if memory.tenant == tenant and indexable(memory):
            mine[memory.id] = memory
    index.put_many(mine.values())
    return Source(index, lambda ids: [mine[i] for i in ids], bool(mine))


def from_store(store: ViewLike, tenant: str, as_of: CommitRef | None) -> Source:
    """The tenant's source in ``store``: the live index, or a throwaway one ``as_of``."""
    if as_of is None:
        live = store_index(store)
        index = live.index(tenant)
        whole = live.store
        known = len(index) > 0 or tenant in whole.tenants()
        embedder, vectors = _embedding(store)

        def measure() -> None:
            with live.lock:
                live.tenants.charge(tenant)

        loader = store_loader(whole, tenant)
        return Source(index, loader, known, embedder, vectors, lambda: live.save(tenant), measure)
    memories = store.find(tenant=tenant, live=False, as_of=as_of)
    source = from_memories(memories, tenant)
    source.known = source.known or tenant in store.tenants(as_of=as_of)
    source.embedder, source.vectors = _embedding(store)  # for the versions still current
    return source


def _embedding(store: ViewLike) -> tuple[Embedder | None, VectorReader]:
    """The store's embedder (None: it has none) and its read of stored vectors."""
    return store.embedder, store.vectors


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


Params = ParamSpec("Params")
Result = TypeVar("Result")


def rebuilt_when_damaged(recall: Callable[Params, Result]) -> Callable[Params, Result]:
    """``recall``, run once more when it read a damaged snapshot block.

    The damaged file is deleted (with its vector files: derived data) and the
    block marked its snapshot, so the second run's `StoreIndex.index` drops that
    index and rebuilds it from the store, even when another thread let the index
    go meanwhile: the answer is the one a sound snapshot gives. A damaged index
    passed in directly raises again.
    """

    @functools.wraps(recall)
    def run(*args: Params.args, **kwargs: Params.kwargs) -> Result:
        try:
            return recall(*args, **kwargs)
        except IndexDamaged as damaged:
            place = Path(damaged.value)
            files.drop([place, *files.companions(place.parent, place.name)])
            return recall(*args, **kwargs)

    return run
