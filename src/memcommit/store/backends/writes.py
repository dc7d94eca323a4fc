"""The write statements of a dialect, and every row write of one commit, chained to its parent.

`writes` turns a `Batch` into the statements and rows a backend runs in
order: the commit row, its versions (made and hashed as they go), the closes,
the erasures of its purges and the trace states, and the UPDATE that seals the
commit's hash when its versions streamed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from memcommit.store.backends import seals
from memcommit.store.backends.base import Batch
from memcommit.store.backends.rows import Rows, changes_text
from memcommit.store.backends.tables import COMMIT, STATE, TRACE, USAGE, VERSION_ROW, Dialect
from memcommit.store.backends.vectors import DROP_VECTORS
from memcommit.store.records import to_text


@dataclass(frozen=True)
class Statements:
    """Every write statement of one dialect, derived from the tables."""

    insert_commit: str
    insert_version: str
    close_version: str
    erase: str
    seal_commit: str
    upsert_trace: str
    upsert_usage: str
    set_state: str
    drop_vectors: str

    @classmethod
    def of(cls, d: Dialect) -> Statements:
        """The statements in ``d``'s spelling (by id and tenant: one partition on PostgreSQL)."""
        p, by_id = d.mark, d.tenant_by_id
        return cls(
            insert_commit=d.insert("commits", COMMIT),
            insert_version=d.insert("versions", VERSION_ROW),
            close_version=f"UPDATE versions SET end_seq = {p} WHERE id = {p} AND version = {p}"
            f" AND {by_id} = {p}",
            # the body and its salt go; the body's hash stays, so the digest still verifies
            erase="UPDATE versions SET content = '', tags = '[]', metadata = '{}',"
            f" salt = NULL, erased = {p} WHERE id = {p} AND version = {p} AND {by_id} = {p}",
            seal_commit=f"UPDATE commits SET hash = {p} WHERE seq = {p}",
            upsert_trace=d.insert("traces", TRACE)
            + " ON CONFLICT (id) DO UPDATE SET status = excluded.status,"
            " last_step = excluded.last_step, ended_seq = excluded.ended_seq,"
            " ended_at = excluded.ended_at",
            upsert_usage=d.insert("usage", USAGE)
            + " ON CONFLICT (id) DO UPDATE SET count = excluded.count,"
            " last_tick = excluded.last_tick",
            set_state=d.insert("state", STATE)
            + " ON CONFLICT (namespace, name) DO UPDATE SET value = excluded.value",
            drop_vectors=DROP_VECTORS.format(p=p),
        )


#: One less than how many version digests `writes` hands the commit's hash at once (a power
#: of two): the hash covers their concatenation, so batching them changes nothing of it.
_DIGEST_BATCH = 511
#: Up to this many versions, a commit's rows are all made before its commit row is
#: written, so the commit row carries its hash; above, they stream and an UPDATE seals it.
SEAL_FIRST = 64


@dataclass(frozen=True)
class Writes:
    """The row writes of one batch, statement by statement, in the order they must run.

    ``versions`` is a list when the commit row already holds the hash, else a
    generator whose rows feed the hash as they are made; ``seal`` (the UPDATE of
    the commit's hash) runs last, once they are all made, and has no rows when
    the hash was known first. ``hash()`` is the commit's hash once they are made.
    """

    commit: tuple[str, tuple[Any, ...]]
    versions: tuple[str, Iterable[tuple[Any, ...]]]
    updates: list[tuple[str, list[tuple[Any, ...]]]]  # closes, erasures, trace states
    seal: tuple[str, Callable[[], list[tuple[Any, ...]]]]
    hash: Callable[[], str]


def writes(
    batch: Batch,
    rows: Rows,
    statements: Statements,
    parent_hash: str | None,
    erasures: Sequence[tuple[str, str, int, str]] = (),
) -> Writes:
    """Every row write of ``batch``, chained to ``parent_hash``.

    ``erasures`` are the (body hash, id, version, tenant) of the stored versions a
    purge erases. Salts come from ``batch.seals`` when it has them (an import keeps the
    exported ones), else fresh ones.
    """
    c = batch.commit
    seq = c.seq
    changes = changes_text(batch)
    sealer = seals.Sealer(
        seals.commit_header(
            parent_hash, seq, c.id, c.parent, to_text(c.time) or "", c.author, c.message, changes
        )
    )
    given = batch.seals
    fresh = seals.salts(len(batch.versions)) if given is None else None
    encode = rows.version

    def made() -> Iterator[tuple[Any, ...]]:
        digests: list[str] = []  # the hash takes them a batch at a time: one update per batch
        keep, last = digests.append, _DIGEST_BATCH
        for i, (m, ended) in enumerate(zip(batch.versions, batch.ended, strict=False)):
            salt, erased = (fresh[i], None) if fresh is not None else given[i]  # type: ignore[index]
            row = encode(m, seq if ended else None, salt, erased)
            keep(row[-2])
            if i & last == last:
                sealer.add("".join(digests))
                digests.clear()
            yield row
        sealer.add("".join(digests))

    updates: list[tuple[str, list[tuple[Any, ...]]]] = [
        (statements.close_version, [(seq, *close) for close in batch.closes]),
        (statements.erase, list(erasures)),
        (statements.upsert_trace, [rows.trace_row(t) for t in batch.traces]),
        (statements.drop_vectors, list(batch.unembed)),
    ]
    kept = [(text, params) for text, params in updates if params]
    if len(batch.versions) <= SEAL_FIRST:
        versions = list(made())
        return Writes(
            commit=(statements.insert_commit, rows.commit_row(batch, changes, sealer.hash)),
            versions=(statements.insert_version, versions),
            updates=kept,
            seal=(statements.seal_commit, list),
            hash=lambda: sealer.hash,
        )
    return Writes(
        commit=(statements.insert_commit, rows.commit_row(batch, changes, None)),
        versions=(statements.insert_version, made()),
        updates=kept,
        seal=(statements.seal_commit, lambda: [(sealer.hash, seq)]),
        hash=lambda: sealer.hash,
    )
