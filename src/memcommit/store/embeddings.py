"""Vectors of memories: embedded outside the write lock, then written beside the versions.

A store opened with an embedder embeds what each commit adds (or rewrites) right after
the commit lands, before its hooks run; `fill` is `Store.embed`, which embeds what has
no vector yet, a batch at a time, each batch written in its own transaction so an
interrupted run keeps what it did and a second run goes on from there. Embedding
never holds the store's lock: the texts are read, the lock is let go, the model
runs, and the write then keeps only the vectors of memories whose content is still
the text that was embedded (another writer may have changed it meanwhile).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from memcommit.embedding import Embedder, known_dims, resolve
from memcommit.embedding.vectors import embedded, from_bytes, to_bytes
from memcommit.errors import InvalidInput
from memcommit.store import validate as v
from memcommit.store.backends.base import Backend, Batch, MemoryQuery

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt


class Core(Protocol):
    """What embedding needs of `memcommit.store.core.Core`: its backend, reads and writes."""

    backend: Backend

    def reading(self) -> AbstractContextManager[None]: ...

    def writing(self) -> AbstractContextManager[Backend]: ...


#: (tenant, id, content) of a memory to embed.
Item = tuple[str, str, str]
DEFAULT_BATCH = 64


@dataclass(frozen=True)
class StoredVectors:
    """One tenant's stored vectors by one embedder: row ``i`` of ``matrix`` is ``ids[i]``.

    ``versions[i]`` is the memory's current version (its vector embeds that content);
    ``matrix`` is C-contiguous float32 of shape ``(len(ids), dims)``, unit rows, in id order.
    ``dims`` is the size of this tenant's vectors under the name, 0 when it has none
    (whatever other tenants hold). Memories without a vector yet are not in it
    (recall finds them by words only).
    """

    embedder: str
    dims: int
    ids: tuple[str, ...]
    versions: tuple[int, ...]
    matrix: npt.NDArray[np.float32]


@dataclass(frozen=True)
class EmbedReport:
    """What `Store.embed` did: vectors written, texts that changed meanwhile, what is left."""

    embedder: str
    embedded: int
    skipped: int
    remaining: int
    embed_seconds: float
    write_seconds: float

    @property
    def texts_per_second(self) -> float:
        """Embedding throughput of this run (0 when nothing was embedded)."""
        return self.embedded / self.embed_seconds if self.embed_seconds > 0 else 0.0


def chosen(spec: str | Embedder | None, configured: Embedder | None) -> Embedder:
    """The embedder a call names (resolved), else the store's; InvalidInput if neither."""
    if spec is not None:
        return resolve(spec)
    if configured is None:
        raise InvalidInput(
            "embedder",
            None,
            "the store was opened without one: name one (embedder='local', --embedder local)",
        )
    return configured


def name_of(
    core: Core, spec: str | Embedder | None, configured: Embedder | None, tenant: str
) -> str:
    """The name ``tenant``'s vectors are read under: an embedder's, a stored name, or a spec's.

    An embedder's own name always means itself, even when it reads as a spec (a
    custom embedder named ``"hash:8"``): the store's embedder's name, or a name
    ``tenant`` holds vectors under, is taken as is. Other text that resolves
    (``"hash"``, ``"local"``) gives its embedder's name (``"hash-ngram-v1/64"``);
    any other text is taken as the name itself.
    """
    if not isinstance(spec, str):
        return chosen(spec, configured).name
    name = v.text("embedder", spec)
    if configured is not None and name == configured.name:
        return name
    with core.reading():
        held = core.backend.vector_dims(name, tenant=tenant) is not None
    if held:
        return name
    try:
        return resolve(name).name
    except InvalidInput:
        return name


def check_dims(backend: Backend, embedder: Embedder) -> None:
    """InvalidInput when the store holds vectors under this name of another size.

    An embedder that has not learnt its size yet (`known_dims`: an HTTP service
    not asked anything) is let through: asking would make opening a store depend
    on the service, and the check runs again before its vectors are written.
    """
    dims = known_dims(embedder)
    stored = None if dims is None else backend.vector_dims(embedder.name)
    if stored is not None and stored != dims:
        raise InvalidInput(
            "embedder",
            embedder.name,
            f"gives {dims} dims, but the store holds {stored}-dim vectors under"
            " this name (a changed model needs a new name)",
        )


def landed(batch: Batch) -> list[Item]:
    """What a landed commit left to embed: memories it created or whose content it changed."""
    rewritten = set(batch.unembed)
    seq = batch.commit.seq
    return [
        (m.tenant, m.id, m.content)
        for m, ended in zip(batch.versions, batch.ended, strict=False)
        if not ended
        and m.status != "purged"
        and (m.created_commit == seq or (m.tenant, m.id) in rewritten)
    ]


def write(core: Core, embedder: Embedder, items: Sequence[Item], matrix: Any) -> int:
    """Store the vectors of ``items`` whose memory still holds the embedded text; how many."""
    with core.writing() as backend:
        check_dims(backend, embedder)
        current = {m.id: m for m in backend.memories(MemoryQuery(ids=[i for _, i, _ in items]))}
        rows = []
        for (tenant, mid, content), vector in zip(items, matrix, strict=True):
            m = current.get(mid)
            if m is None or m.tenant != tenant or m.status == "purged" or m.content != content:
                continue
            rows.append((tenant, mid, embedder.name, m.version, embedder.dims, to_bytes(vector)))
        if rows:
            backend.put_vectors(rows)
    return len(rows)


def embed_items(
    core: Core, embedder: Embedder, items: Sequence[Item], batch_size: int = DEFAULT_BATCH
) -> tuple[int, float, float]:
    """Embed and write ``items`` a batch at a time: (written, embed seconds, write seconds)."""
    written, embedding, writing = 0, 0.0, 0.0
    for start in range(0, len(items), batch_size):
        chunk = items[start : start + batch_size]
        began = time.perf_counter()
        matrix = embedded(embedder, [content for _, _, content in chunk], "passage")
        wrote = time.perf_counter()
        written += write(core, embedder, chunk, matrix)
        embedding += wrote - began
        writing += time.perf_counter() - wrote
    return written, embedding, writing


def fill(
    core: Core,
    embedder: Embedder,
    *,
    tenant: str | None,
    batch_size: int = DEFAULT_BATCH,
    limit: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> EmbedReport:
    """`Store.embed`: vectors for the current memories that have none, by id order.

    ``progress(done, total)`` is told after each batch; ``limit`` stops after that
    many texts (the rest stay for the next run).
    """
    v.count("batch_size", batch_size, optional=False)
    if not batch_size:
        raise InvalidInput("batch_size", batch_size, "must be at least 1")
    v.count("limit", limit)
    if progress is not None and not callable(progress):
        raise InvalidInput("progress", progress, "must be a callable(done, total) or None")
    with core.reading():
        check_dims(core.backend, embedder)
        total = core.backend.count_unembedded(embedder.name, tenant=tenant)
    if limit is not None:
        total = min(total, limit)
    done = written = 0
    embedding = writing = 0.0
    after: str | None = None
    if progress is not None:
        progress(0, total)
    while done < total:
        with core.reading():
            page = core.backend.unembedded(
                embedder.name, tenant=tenant, after=after, limit=min(batch_size, total - done)
            )
        if not page:
            break
        items = [(t, mid, content) for mid, t, content in page]
        got, e, w = embed_items(core, embedder, items, batch_size)
        written, embedding, writing = written + got, embedding + e, writing + w
        done += len(items)
        after = page[-1][0]
        if progress is not None:
            progress(done, total)
    with core.reading():
        remaining = core.backend.count_unembedded(embedder.name, tenant=tenant)
    return EmbedReport(embedder.name, written, done - written, remaining, embedding, writing)


def stored(
    core: Core,
    name: str,
    tenant: str,
    *,
    ids: Iterable[str] | None = None,
    after: str | None = None,
    limit: int | None = None,
) -> StoredVectors:
    """`Store.vectors`: ``tenant``'s stored vectors by the embedder named ``name``."""
    wanted = None if ids is None else v.names("ids", ids)
    if ids is not None and wanted is None:
        raise InvalidInput("ids", ids, "must be a list of memory ids")
    v.count("limit", limit)
    if after is not None:
        v.text("after", after)
    with core.reading():
        dims = core.backend.vector_dims(name, tenant=tenant)  # never another tenant's size
        rows = core.backend.vectors(name, tenant, ids=wanted, after=after, limit=limit)
    size = dims or 0
    return StoredVectors(
        embedder=name,
        dims=size,
        ids=tuple(r[0] for r in rows),
        versions=tuple(r[1] for r in rows),
        matrix=from_bytes([r[2] for r in rows], size),
    )
