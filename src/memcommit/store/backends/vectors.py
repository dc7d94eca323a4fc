"""The ``vectors`` table (migration 0004): embeddings kept with the memories, both backends.

A row is (tenant, id, embedder, version, dims, vector): the embedding, by the
embedder of that name, of the content memory ``id`` has held since ``version``
(little-endian float32 bytes). A commit that changes a memory's content or purges
it deletes its rows (`DROP_VECTORS`, in `writes.writes`); any other new version keeps
them, so a row serves the memory's current version whatever its number. The SQL
here is the same on SQLite and PostgreSQL but for the placeholder.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

#: (tenant, id, embedder, version, dims, vector), as exported and imported.
VectorRow = tuple[str, str, str, int, int, bytes]

DROP_VECTORS = "DELETE FROM vectors WHERE tenant = {p} AND id = {p}"

_CURRENT = "v.end_seq IS NULL AND v.status <> 'purged'"


class _Dialect(Protocol):
    """What the vector queries need of `sql.Dialect`."""

    @property
    def mark(self) -> str: ...

    def in_(self, column: str, values: Sequence[Any], params: list[Any]) -> str: ...


class VectorTable:
    """The vector reads and writes of `SQLBackend`, over its `_select` and `_write_all`."""

    dialect: ClassVar[_Dialect]

    if TYPE_CHECKING:  # SQLBackend's primitives

        def _select(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]: ...

        def _write_all(self, text: str, rows: Iterable[Sequence[Any]]) -> None: ...

    @property
    def _p(self) -> str:
        return self.dialect.mark

    def vector_dims(self, embedder: str, *, tenant: str | None = None) -> int | None:
        """The size of the vectors stored under ``embedder`` (None: it has none).

        Of ``tenant``'s vectors when given (what a tenant may learn), else of any
        tenant's (what a store-wide rule checks: one size per name).
        """
        p = self._p
        where, params = f"embedder = {p}", [embedder]
        if tenant is not None:
            where, params = f"tenant = {p} AND {where}", [tenant, embedder]
        found = self._select(f"SELECT dims FROM vectors WHERE {where} LIMIT 1", params)
        return int(found[0][0]) if found else None

    def put_vectors(self, rows: Sequence[VectorRow]) -> None:
        """Insert or replace vector rows, in the open transaction."""
        p = self._p
        self._write_all(
            "INSERT INTO vectors (tenant, id, embedder, version, dims, vector)"
            f" VALUES ({p}, {p}, {p}, {p}, {p}, {p}) ON CONFLICT (tenant, id, embedder)"
            " DO UPDATE SET version = excluded.version, dims = excluded.dims,"
            " vector = excluded.vector",
            rows,
        )

    def vectors(
        self,
        embedder: str,
        tenant: str,
        *,
        ids: Sequence[str] | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[tuple[str, int, bytes]]:
        """(id, current version, vector) of ``tenant``'s current memories that have one, by id.

        ``ids`` keeps those memories only; ``after`` and ``limit`` page through the rest.
        """
        p = self._p
        params: list[Any] = [tenant, embedder]
        where = f"x.tenant = {p} AND x.embedder = {p}"
        if ids is not None:
            if not ids:
                return []
            where += " AND " + self.dialect.in_("x.id", list(ids), params)
        if after is not None:
            where += f" AND x.id > {p}"
            params.append(after)
        page = "" if limit is None else f" LIMIT {int(limit)}"
        rows = self._select(
            "SELECT x.id, v.version, x.vector FROM vectors x JOIN versions v"
            f" ON v.id = x.id AND {_CURRENT} WHERE {where} ORDER BY x.id{page}",
            params,
        )
        return [(mid, int(version), bytes(blob)) for mid, version, blob in rows]

    def _unembedded_where(
        self, embedder: str, tenant: str | None, after: str | None
    ) -> tuple[str, list[Any]]:
        p = self._p
        params: list[Any] = [embedder]
        where = (
            f"{_CURRENT} AND NOT EXISTS (SELECT 1 FROM vectors x WHERE x.tenant = v.tenant"
            f" AND x.id = v.id AND x.embedder = {p})"
        )
        if tenant is not None:
            where += f" AND v.tenant = {p}"
            params.append(tenant)
        if after is not None:
            where += f" AND v.id > {p}"
            params.append(after)
        return where, params

    def unembedded(
        self, embedder: str, *, tenant: str | None, after: str | None, limit: int
    ) -> list[tuple[str, str, str]]:
        """(id, tenant, content) of current memories without a vector by ``embedder``, by id.

        ``after`` pages on (ids greater than it); purged memories have nothing to embed.
        """
        where, params = self._unembedded_where(embedder, tenant, after)
        rows = self._select(
            f"SELECT v.id, v.tenant, v.content FROM versions v WHERE {where}"
            f" ORDER BY v.id LIMIT {int(limit)}",
            params,
        )
        return [(mid, t, content) for mid, t, content in rows]

    def count_unembedded(self, embedder: str, *, tenant: str | None) -> int:
        """How many current memories have no vector by ``embedder`` (of ``tenant``, if given)."""
        where, params = self._unembedded_where(embedder, tenant, None)
        return int(self._select(f"SELECT COUNT(*) FROM versions v WHERE {where}", params)[0][0])

    def embedders(self) -> list[tuple[str, int, int]]:
        """(embedder, dims, vectors stored) of every embedder the store holds vectors of."""
        rows = self._select(
            "SELECT embedder, MIN(dims), COUNT(*) FROM vectors GROUP BY embedder ORDER BY embedder"
        )
        return [(name, int(dims), int(count)) for name, dims, count in rows]

    def vector_rows(self, *, after: tuple[str, str, str] | None, limit: int) -> list[VectorRow]:
        """Every vector row in key order, ``limit`` at a time from just past key ``after``."""
        p = self._p
        where, params = "", []
        if after is not None:
            where = f" WHERE (tenant, id, embedder) > ({p}, {p}, {p})"
            params = list(after)
        rows = self._select(
            "SELECT tenant, id, embedder, version, dims, vector FROM vectors"
            f"{where} ORDER BY tenant, id, embedder LIMIT {int(limit)}",
            params,
        )
        return [(t, mid, e, int(ver), int(d), bytes(blob)) for t, mid, e, ver, d, blob in rows]
