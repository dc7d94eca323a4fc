"""The store's vectors of a tenant, put into its index's dense rows before a recall ranks.

Vectors are made and kept by the store (``store.vectors``: by embedder name,
one per memory version's content), never by recall: the index only holds them
row for row with its documents (`memcommit.recall.index.dense`). Before a recall
ranks, every current document without a vector is looked up in the store, in
pages of ids: a document added by a commit gets its vector at the next recall,
one filled in later (``store.embed``) at the recall after that. A vector is
taken only for the version the document holds; one of a newer version (the
store moved on meanwhile) waits for the index to catch up with that version.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import numpy as np

from memcommit.embedding import Embedder
from memcommit.errors import InvalidInput
from memcommit.recall.index.dense import DenseRows
from memcommit.recall.index.tenant import TenantIndex

#: Ids asked for per read of the store.
PAGE = 2_000


class Stored(Protocol):
    """What recall reads of `memcommit.store.embeddings.StoredVectors`."""

    @property
    def ids(self) -> tuple[str, ...]: ...

    @property
    def versions(self) -> tuple[int, ...]: ...

    @property
    def matrix(self) -> np.ndarray: ...


class VectorReader(Protocol):
    """The store's read of stored vectors (``ViewLike.vectors``), as recall calls it: given
    the embedder itself, so its name is never read as a spec of another (``"hash:8"``)."""

    def __call__(
        self, embedder: Embedder, *, tenant: str | None = None, ids: Sequence[str] | None = None
    ) -> Stored: ...


def rows_of(index: TenantIndex, embedder: str, dims: int) -> DenseRows:
    """The index's rows of ``embedder``: kept, else from its vector file, else empty."""
    with index.lock:
        rows = index.dense.get(embedder)
        if rows is None and index.dense_file is not None:
            rows = index.dense_file(embedder, dims)
        if rows is None or rows.dims != dims:
            rows = index.dense[embedder] = DenseRows(embedder, dims)
        index.dense[embedder] = rows
        rows.grow(index.alive.size)
        return rows


def fill(index: TenantIndex, embedder: Embedder, read: VectorReader) -> int:
    """Put the stored vectors of every current document that has none yet; how many were put."""
    put = 0
    with index.lock:
        rows = rows_of(index, embedder.name, embedder.dims)
        missing = rows.missing(index.alive.view())
        versions = index.version.view()
        for start in range(0, len(missing), PAGE):
            docs = missing[start : start + PAGE]
            wanted = {index.ids[doc]: doc for doc in docs.tolist()}
            found = read(embedder, tenant=index.tenant, ids=list(wanted))
            if found.ids and found.matrix.shape[1] != rows.dims:
                raise InvalidInput(
                    "embedder",
                    embedder.name,
                    f"gives {rows.dims} dims, but the store holds {found.matrix.shape[1]}-dim"
                    " vectors under this name (a changed model needs a new name)",
                )
            take = [
                (wanted[memory_id], row)
                for row, (memory_id, version) in enumerate(
                    zip(found.ids, found.versions, strict=True)
                )
                if memory_id in wanted and versions[wanted[memory_id]] == version
            ]
            if take:
                at = np.array([doc for doc, _ in take], dtype=np.int64)
                rows.put(at, found.matrix[[row for _, row in take]])
                put += len(take)
        return put
