"""Vectors through the store's API: the store's embedder, filling what has none, reading them."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from memcommit.embedding import Embedder
from memcommit.errors import InvalidInput
from memcommit.store import embeddings
from memcommit.store import validate as v
from memcommit.store.api_part import ApiPart
from memcommit.store.backends.base import MemoryQuery
from memcommit.store.embeddings import EmbedReport, StoredVectors


class VectorApi(ApiPart):
    """`embedder`, `embed` and `vectors` (see `memcommit.store.embeddings`)."""

    @property
    def embedder(self) -> Embedder | None:
        """The embedder this store was opened with (``memcommit.open(embedder=...)``), or None."""
        return self._core.embedder

    def embed(
        self,
        embedder: str | Embedder | None = None,
        *,
        tenant: str | None = None,
        batch_size: int = embeddings.DEFAULT_BATCH,
        limit: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> EmbedReport:
        """Embed the current memories that have no vector yet (by ``embedder``, else the store's).

        Resumable: each batch of ``batch_size`` texts is embedded outside the lock,
        then written in a transaction of its own, so an interrupted run keeps what it
        did and the next run does only the rest. ``limit`` stops after that many
        texts; ``progress(done, total)`` is told after each batch. A view embeds
        only its tenant's memories.
        """
        chosen = embeddings.chosen(embedder, self._core.embedder)
        only = self._only if self._only is not None else _tenant_or_none(tenant)
        if self._only is not None and tenant not in (None, self._only):
            raise InvalidInput("tenant", tenant, f"this view embeds only tenant {self._only!r}")
        return embeddings.fill(
            self._core, chosen, tenant=only, batch_size=batch_size, limit=limit, progress=progress
        )

    def embed_ids(self, embedder: str | Embedder | None, ids: Sequence[str]) -> int:
        """Embed the current content of the memories ``ids`` now, vector or not; how many stored.

        For a caller that chooses which memories carry a vector (an integration
        whose items may opt out of embedding), where `embed` takes every memory
        that lacks one. A view embeds only its tenant's memories; others are skipped.
        """
        if not isinstance(ids, (list, tuple)):  # a str would be its characters
            raise InvalidInput("ids", ids, "must be a list or tuple of memory ids")
        wanted = sorted({v.text("ids", i) for i in ids})
        chosen = embeddings.chosen(embedder, self._core.embedder)
        found = self._core.backend.memories(MemoryQuery(ids=wanted)) if wanted else []
        items = [
            (m.tenant, m.id, m.content)
            for m in found
            if self._visible(m.tenant) and m.status != "purged"
        ]
        return embeddings.embed_items(self._core, chosen, items)[0]

    def vectors(
        self,
        embedder: str | Embedder | None = None,
        *,
        tenant: str | None = None,
        ids: Iterable[str] | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> StoredVectors:
        """One tenant's stored vectors: ids, current versions and a float32 matrix, by id.

        ``embedder`` is an embedder, the name its vectors are stored under (the
        store's embedder's, or one the tenant holds vectors under, is always taken
        as is), or a name that resolves to one (``"hash"``); default: the store's.
        ``tenant`` defaults to "default" (a view: its own, only). ``ids`` keeps those
        memories; ``after`` and ``limit`` page in id order. Only current, unpurged
        memories that have a vector are in it; ``dims`` is the size of the tenant's
        own vectors (0 when it has none).
        """
        if self._only is not None and tenant not in (None, self._only):
            raise InvalidInput("tenant", tenant, f"this view reads only tenant {self._only!r}")
        only = self._only or _tenant_or_none(tenant) or "default"
        name = embeddings.name_of(self._core, embedder, self._core.embedder, only)
        return embeddings.stored(self._core, name, only, ids=ids, after=after, limit=limit)


def _tenant_or_none(tenant: Any) -> str | None:
    return None if tenant is None else v.text("tenant", tenant)
