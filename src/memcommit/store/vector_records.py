"""Stored vectors as export records, and back: what export, import and migrate carry.

One record per row of the ``vectors`` table, after the state records (format 4):

    {"type": "vector", "tenant": ..., "id": ..., "embedder": ..., "version": 3,
     "dims": 384, "vector": "<base64 of dims little-endian float32>"}

An import checks each (size, finite values, unit length) and writes them only for
memories the import holds, current and not purged, at or past the vector's version;
an export of format 2 or 3 carries none (they are embedded again: `Store.embed`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator, Sequence
from typing import Any

from memcommit.embedding.vectors import NORM_TOLERANCE, from_bytes
from memcommit.errors import InvalidInput
from memcommit.store import validate
from memcommit.store.backends.base import Backend, MemoryQuery
from memcommit.store.backends.vectors import VectorRow

_PAGE = 1000


def records(backend: Backend) -> Iterator[dict[str, Any]]:
    """Every stored vector as an export record, in key order, a page of rows at a time."""
    after: tuple[str, str, str] | None = None
    while True:
        rows = backend.vector_rows(after=after, limit=_PAGE)
        for tenant, mid, embedder, version, dims, blob in rows:
            yield {
                "type": "vector",
                "tenant": tenant,
                "id": mid,
                "embedder": embedder,
                "version": version,
                "dims": dims,
                "vector": base64.b64encode(blob).decode("ascii"),
            }
        if len(rows) < _PAGE:
            return
        after = rows[-1][:3]


def parsed(r: dict[str, Any]) -> VectorRow:
    """One vector record checked: InvalidInput naming the field that is wrong."""
    import numpy as np

    dims = validate.count("dims", r.get("dims"), optional=False) or 0
    if dims < 1:
        raise InvalidInput("dims", dims, "must be at least 1")
    text = r.get("vector")
    try:
        blob = base64.b64decode(text if isinstance(text, str) else "", validate=True)
    except (binascii.Error, ValueError):
        raise InvalidInput("vector", text, "must be base64 text") from None
    if len(blob) != dims * 4:
        raise InvalidInput("vector", len(blob), f"must hold {dims} float32 values")
    vector = from_bytes([blob], dims)[0]
    if not np.isfinite(vector).all() or abs(float(np.linalg.norm(vector)) - 1) > NORM_TOLERANCE:
        raise InvalidInput("vector", r.get("id"), "must be finite with unit length")
    return (
        validate.text("tenant", r.get("tenant")),
        validate.text("id", r.get("id")),
        validate.text("embedder", r.get("embedder")),
        validate.count("version", r.get("version"), optional=False) or 0,
        dims,
        blob,
    )


def write(backend: Backend, rows: Sequence[tuple[int, VectorRow]]) -> None:
    """Write imported ``(line, row)`` vectors once every version is in: each must fit them."""
    sizes: dict[str, int] = {}
    for start in range(0, len(rows), _PAGE):
        chunk = rows[start : start + _PAGE]
        current = {
            m.id: m for m in backend.memories(MemoryQuery(ids=sorted({r[1] for _, r in chunk})))
        }
        for number, (tenant, mid, embedder, version, dims, _) in chunk:
            m = current.get(mid)
            if m is None or m.tenant != tenant or m.status == "purged" or m.version < version:
                reason = "names no current memory of its tenant at its version"
                raise InvalidInput(f"line {number}: id", mid, reason)
            if sizes.setdefault(embedder, dims) != dims:
                raise InvalidInput(
                    f"line {number}: dims", dims, f"{embedder!r} has {sizes[embedder]}-dim vectors"
                )
        backend.put_vectors([row for _, row in chunk])
