"""The narrow interface every storage backend implements, and the values it exchanges.

The Store holds all the logic (validation, versions, traces, tenants, hooks);
a backend only stores rows and answers queries. A new backend is one module that
implements `Backend` and registers its URL scheme (`memcommit.store.backends`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from memcommit.model import Commit, Memory, Usage
from memcommit.store.backends.problems import Walk
from memcommit.store.backends.vectors import VectorRow


@dataclass(frozen=True)
class TraceRow:
    """A trace's own state; its root and steps are memories with ``trace_id`` set."""

    id: str
    tenant: str
    scope: str
    session: str | None
    status: str  # "open" | "finished" | "failed" (the latest one; see ended_seq)
    last_step: int
    started_seq: int
    started_at: datetime
    ended_seq: int | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True)
class MemoryQuery:
    """Which memory versions a read wants; the backend turns it into one SELECT.

    ``as_of`` is a commit seq (None: the present). ``live_at`` set means only
    memories that hold at that time. Results come in id order (generated ids
    sort by creation), or by step when ``trace`` is set, or by trace id then
    step when ``traces`` (the members of many traces, in one read) is set.
    """

    ids: Sequence[str] | None = None
    tenant: str | None = None
    kinds: Sequence[str] | None = None
    scopes: Sequence[str] | None = None
    sessions: Sequence[str | None] | None = None
    key: str | None = None
    tiers: Sequence[str] | None = None
    trace: str | None = None
    traces: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    live_at: datetime | None = None
    as_of: int | None = None
    limit: int | None = None
    #: Only ids greater than this one (with ``limit``: one page of a listing in id order).
    after: str | None = None
    #: Only memories with metadata (what a purge follows to summaries: `store.provenance`).
    with_metadata: bool = False


@dataclass
class Batch:
    """Every row write of one commit, applied by `Backend.write` in one transaction.

    ``versions`` are the new memory versions in order; ``ended`` marks which of
    them a later version in the same batch already replaced. ``closes`` are the
    (id, version, tenant) rows that were current before this commit and are
    replaced now; ``purges`` are ids whose content is erased in every stored version (the
    body hash of each stays, so the chain still verifies: see `seals`).
    """

    commit: Commit
    tenants: list[str | None]  # per change of the commit: the tenant it touched
    versions: Sequence[Memory] = field(default_factory=list)
    ended: list[bool] = field(default_factory=list)
    closes: list[tuple[str, int, str]] = field(default_factory=list)
    purges: list[str] = field(default_factory=list)
    traces: list[TraceRow] = field(default_factory=list)
    #: Per version, the (salt, erased body hash) to seal it with; None: fresh salts. An
    #: import passes the exported ones, so every digest and hash comes out as exported.
    seals: Sequence[tuple[str | None, str | None]] | None = None
    #: (tenant, id) of memories whose content this commit changes or erases: their stored
    #: vectors no longer embed it and are deleted with the commit.
    unembed: list[tuple[str, str]] = field(default_factory=list)

    def purged_tenants(self) -> set[str]:
        """The tenants of the memories this batch purges (what `Backend.scrub` cleans)."""
        changes = self.commit.changes
        return {t for c, t in zip(changes, self.tenants, strict=True) if c.op == "purge" and t}


@runtime_checkable
class Sequencer(Protocol):
    """A backend that can order a commit as it lands, so writers wait for its server only.

    `begin_unordered` opens a commit without the writers' lock, on the newest commit
    this process knows; once the store has made its plans from that, `order_on_read`
    gives the function that orders it, which the backend calls before any read the
    block makes. `order` takes the lock and reads the tip under it. A block that stays
    unordered and only adds (`sequences`) is sent whole and ordered by the server
    under the lock: `landed` then says where it went.
    """

    def writes_in(self, tenant: str | None) -> None:
        """The next commit (`begin` or `begin_unordered`) writes in ``tenant`` only (a
        tenant's view), or anywhere (None): what it may write is locked before the order."""

    def begin_unordered(self) -> None:
        """Open a commit on the newest commit this process knows, without the lock."""

    def order_on_read(self, order: Callable[[], None]) -> None:
        """Call ``order`` before the open commit's first read of the store."""

    def order(self) -> None:
        """Take the writers' lock for the open commit; `Backend.tip` then reads under it."""

    def sequences(self, batch: Batch) -> bool:
        """Whether the server can order ``batch`` itself (else the store calls `order` first)."""

    def landed(self) -> tuple[int, str, str | None, datetime]:
        """Where the commit just landed unordered went: its seq, id, parent and time."""


class Backend(Protocol):
    """Storage of commits, memory versions, traces, use counts and small state."""

    #: Where the store is, for messages and ``repr``: a path, or a URL without its password.
    target: str

    @property
    def reads_beside_commits(self) -> bool:
        """Whether a thread's reads run beside another thread's open commit without seeing
        it (each on a connection of its own): then they need not wait for it (`Core.reading`)."""

    def begin(self) -> None:
        """Start the write transaction of one commit and take the writers' lock."""

    def begin_read(self) -> None:
        """Start the calling thread's read-only snapshot: its later reads (outside its own
        commits) agree with each other, and writers (in other threads too) do not wait for
        it. Refused inside the thread's own commit.

        End it with `rollback` from the same thread.
        """

    def write(self, batch: Batch) -> None:
        """Apply every row write of a commit inside the open transaction."""

    def commit(self) -> None:
        """Make the open transaction durable."""

    def rollback(self) -> None:
        """Drop the open transaction."""

    def commits(
        self,
        *,
        seqs: Sequence[int] | None = None,
        after: int = 0,
        upto: int | None = None,
        newest_first: bool = True,
        limit: int | None = None,
        changes: bool = True,
    ) -> list[tuple[Commit, list[str | None]]]:
        """Commits by seq or range ``after < seq <= upto``, each with the tenant of each change.

        With ``changes=False`` the commits come without their changes (cheap).
        """

    def tip(self) -> tuple[int, str] | None:
        """(seq, id) of the newest commit, or None for an empty store (read once per commit)."""

    def commit_seq(self, commit_id: str) -> int | None:
        """The seq of a commit id, or None."""

    def seq_at(self, time: datetime) -> int:
        """The highest seq whose commit time is at or before ``time`` (0 if none)."""

    def memories(self, query: MemoryQuery) -> list[Memory]:
        """Memory versions matching ``query`` as the store stood at ``query.as_of``."""

    def versions(self, ids: Sequence[str]) -> dict[str, int]:
        """The current version number of each id that exists (one read, no row decoding)."""

    def history(self, memory_id: str) -> list[Memory]:
        """Every version of one memory, oldest first."""

    def traces(
        self,
        *,
        ids: Sequence[str] | None = None,
        tenant: str | None = None,
        as_of: int | None = None,
        status: str | None = None,
        unmarked: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[TraceRow]:
        """Traces begun at or before ``as_of`` (their latest state), ordered by (started_seq, id).

        ``status`` keeps the traces in that state at ``as_of`` (one that ended
        later was still "open"); ``unmarked`` keeps those whose root, at
        ``as_of``, has no top-level metadata key of that name; ``after`` (a trace
        id) starts the listing just past that trace, for paging with ``limit``.
        """

    def tenants(self, as_of: int | None = None) -> list[str]:
        """Tenants that have at least one memory, sorted."""

    def tier_counts(
        self, tiers: Sequence[str] | None, tenant: str | None, always: bool | None
    ) -> dict[tuple[str, str, str], int]:
        """Current memories per (tier, tenant, scope) in one GROUP BY; ``always`` set: only that."""

    def record_uses(self, ids: Sequence[str]) -> dict[str, Usage]:
        """Count one use per id on the logical clock (one tick per use), in one transaction."""

    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        """Use counts for ``ids`` (every counted memory when None)."""

    def state_get(self, namespace: str, key: str) -> str | None:
        """The JSON text stored under (namespace, key), or None."""

    def state_set(self, namespace: str, key: str, value: str) -> None:
        """Store JSON text under (namespace, key)."""

    def state_delete(self, namespace: str, key: str) -> None:
        """Remove the value under (namespace, key), if there is one."""

    def state_items(self, namespace: str | None = None) -> list[tuple[str, str, str]]:
        """Every (namespace, key, JSON text) of the small state, sorted (to copy a store).

        With ``namespace``, only that namespace's (a listing, by its index).
        """

    def scrub(self, tenants: Collection[str] | None = None) -> bool:
        """Remove copies of erased content kept outside the live rows; False if held back.

        Run after a commit that purged: SQLite's write-ahead log, PostgreSQL's
        dead row versions. ``tenants`` are the tenants the purges were in (a
        backend that keeps tenants apart cleans only theirs); None: every tenant.
        False when a reader still holds them (try again later).
        """

    def hashes(self, seqs: Sequence[int]) -> list[tuple[int, str | None]]:
        """(seq, stored chain hash) of each of ``seqs`` that is stored."""

    def seals(self, memory_id: str) -> list[tuple[str | None, str | None, str | None]]:
        """(salt, digest, erased body hash) of every version of one memory, oldest first."""

    def chain(self, *, after: int = 0, progress: Callable[[int, int], None] | None = None) -> Walk:
        """Verify the hash chain after commit ``after`` (`memcommit.store.backends.chain`)."""

    def check(self, *, full: bool = False) -> list[str]:
        """Problems found in the stored data (empty when every invariant holds).

        Every row is read back; ``full`` adds the backend's slowest page checks.
        """

    # -- vectors (memcommit.store.backends.vectors) -------------------------------------

    def vector_dims(self, embedder: str, *, tenant: str | None = None) -> int | None:
        """The size of the vectors stored under ``embedder`` (None: it has none), of
        ``tenant``'s vectors when given, else of any tenant's."""

    def put_vectors(self, rows: Sequence[VectorRow]) -> None:
        """Insert or replace (tenant, id, embedder, version, dims, vector) rows, in the open
        transaction."""

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

        ``ids`` keeps those only; ``after`` (an id) and ``limit`` page through them.
        """

    def unembedded(
        self, embedder: str, *, tenant: str | None, after: str | None, limit: int
    ) -> list[tuple[str, str, str]]:
        """(id, tenant, content) of current unpurged memories without a vector, by id."""

    def count_unembedded(self, embedder: str, *, tenant: str | None) -> int:
        """How many current unpurged memories have no vector by ``embedder``."""

    def embedders(self) -> list[tuple[str, int, int]]:
        """(embedder, dims, vectors stored) of every embedder the store holds vectors of."""

    def vector_rows(self, *, after: tuple[str, str, str] | None, limit: int) -> list[VectorRow]:
        """Every vector row in (tenant, id, embedder) order, a page at a time (to copy a store)."""

    def cache_dir(self, name: str, key: str) -> Path | None:
        """Where this host keeps derived data ``name`` of the store whose identity is ``key``.

        The backend chooses, since only it knows where its data lives: beside
        its file for an embedded database, in the user's cache (`user_cache`)
        for a server, None for a store that keeps nothing on disk (in memory).
        """

    def close(self) -> None:
        """Release the connection."""


def user_cache(name: str, key: str) -> Path | None:
    """``<user cache>/memcommit/<name>/<key>``: derived data of a store that is not a local file.

    The user cache is ``$XDG_CACHE_HOME``, else ``~/.cache``; None when the
    user has no home either. ``key`` names the store by its identity, never by
    how its target was spelled, so every spelling of one address shares one folder.
    """
    cache = os.environ.get("XDG_CACHE_HOME")
    if not cache:
        home = os.path.expanduser("~")
        if home == "~":
            return None
        cache = os.path.join(home, ".cache")
    return Path(cache) / "memcommit" / name / key
