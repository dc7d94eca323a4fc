"""`Store`: memories changed only by atomic commits, over any backend."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from memcommit.embedding import Embedder, resolve
from memcommit.errors import InvalidInput
from memcommit.model import Change, Commit, Memory
from memcommit.store import embeddings
from memcommit.store import validate as v
from memcommit.store import verify as verification
from memcommit.store.backends import open_backend
from memcommit.store.backends.base import Backend
from memcommit.store.check import CheckReport
from memcommit.store.core import Core
from memcommit.store.operations import StoreApi
from memcommit.store.protocols import CommitRef, ViewLike
from memcommit.store.tenant import TenantView
from memcommit.store.transaction import Transaction
from memcommit.store.verify import VerifyReport, Witness

#: The default byte budget of a store's recall index cache in one process (`open`).
DEFAULT_RECALL_CACHE_BYTES = 64 * 2**20


def open(
    target: Any = "memcommit.db",
    *,
    clock: Callable[[], datetime] | None = None,
    max_content_bytes: int = v.DEFAULT_MAX_CONTENT_BYTES,
    embedder: str | Embedder | None = None,
    recall_cache_bytes: int = DEFAULT_RECALL_CACHE_BYTES,
    keep_snapshots: bool = True,
    **options: Any,
) -> Store:
    """Open (creating and migrating if needed) the store at ``target``.

    ``target`` is a SQLite path, ``":memory:"`` or a ``postgresql://`` URL;
    ``clock`` returns the aware "now" used for commit times (a reading earlier
    than the newest commit's time is raised to it: commit times never go
    backwards); ``options`` go to the backend (SQLite: ``synchronous``,
    ``busy_timeout`` in seconds; PostgreSQL: ``schema``, ``connect_timeout``,
    ``lock_timeout``, ``pool_size``, ``partitions``; both: ``read_only=True`` opens an existing,
    migrated store that refuses every write, and ``progress(done, total)`` is told
    while the open hashes a history written before the hash chain, once: see
    docs/verification.md); an option the backend does not take is an
    InvalidInput naming it. ``embedder`` (a name such as ``"local"`` or ``"hash"``, or
    an `memcommit.embedding.Embedder`) makes every commit embed what it adds, right
    after it lands, and recall rank by meaning too (docs/embeddings.md); a store
    holding vectors of another size under the embedder's name is refused.
    ``recall_cache_bytes`` bounds the memory this process spends on the store's
    tenant indexes: past it, the least recently recalled tenants are let go
    (reopened from their snapshot or the store when next recalled; docs/recall.md,
    "Many tenants"). ``keep_snapshots=False``: this process's commits never keep recall's
    snapshots current (`memcommit.upkeep`), so no commit pays for one (about a second on
    a 100,000-memory tenant, once every twentieth of it); run ``memcommit index`` (or
    `memcommit.recall.index.prepare.prepare`) from another process instead. (A purge
    still rewrites the snapshot of a tenant this process has open, to erase.)
    """
    if clock is not None and not callable(clock):
        raise InvalidInput("clock", clock, "must be a zero-argument callable returning a datetime")
    v.count("max_content_bytes", max_content_bytes, optional=False, least=1)
    v.count("recall_cache_bytes", recall_cache_bytes, optional=False, least=1)
    v.flag("keep_snapshots", keep_snapshots)
    chosen = None if embedder is None else resolve(embedder)
    backend = open_backend(target, **options)
    try:
        if chosen is not None:
            embeddings.check_dims(backend, chosen)
        store = Store(backend, clock=clock, max_content_bytes=max_content_bytes, embedder=chosen)
    except BaseException:
        backend.close()
        raise
    store.recall_cache_bytes = recall_cache_bytes
    store.keep_snapshots = keep_snapshots
    return store


class Store(StoreApi):
    """Every tenant's memories; use `tenant` for a view restricted to one.

    A store is safe to share between threads (calls are serialized); each
    process opens its own. Use it as a context manager to close it.
    """

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Callable[[], datetime] | None = None,
        max_content_bytes: int = v.DEFAULT_MAX_CONTENT_BYTES,
        embedder: Embedder | None = None,
    ) -> None:
        self._core = Core(
            backend, clock=clock, max_content_bytes=max_content_bytes, embedder=embedder
        )
        self._only = None
        self._recall_cache_bytes = DEFAULT_RECALL_CACHE_BYTES
        #: Whether this store's commits keep recall's snapshots current (see `open`).
        self.keep_snapshots = True
        self._core.subscribe(self._after_purge, None)
        self._core.subscribe(self._after_landed, None)
        self._core.purging = self._purging

    #: ``fn(store, commit)`` after each landed commit that purged a memory: derived data
    #: kept outside the store (recall's index snapshots) erases it too. Connected by the
    #: package top, like `StoreApi.connect_recall`.
    _purge_hooks: ClassVar[list[Callable[[Store, Commit], object]]] = []

    #: ``fn(store, purged)`` inside every commit that purges, before it lands, with the
    #: (tenant, id) of each memory purged: state that must go with the purge, in its
    #: transaction (a crash never lands one without the other). Connected by the package top.
    _purging_hooks: ClassVar[list[Callable[[Store, list[tuple[str, str]]], object]]] = []

    @staticmethod
    def connect_purging(fn: Callable[[Store, list[tuple[str, str]]], object]) -> None:
        """Call ``fn(store, purged)`` inside every commit that purges, before it lands."""
        if fn not in Store._purging_hooks:
            Store._purging_hooks.append(fn)

    def _purging(self, tx: Transaction) -> None:
        for hook in Store._purging_hooks:
            hook(self, tx.purged)

    @staticmethod
    def connect_purge(fn: Callable[[Store, Commit], object]) -> None:
        """Call ``fn(store, commit)`` after every landed commit that purged memories."""
        if fn not in Store._purge_hooks:
            Store._purge_hooks.append(fn)

    #: ``fn(store, commit)`` after each commit this Store lands: derived data kept outside
    #: the store (recall's snapshots) kept current by the writer. Connected by the package top.
    _landed_hooks: ClassVar[list[Callable[[Store, Commit], object]]] = []

    @staticmethod
    def connect_landed(fn: Callable[[Store, Commit], object]) -> None:
        """Call ``fn(store, commit)`` after every commit a Store lands (``written`` answers)."""
        if fn not in Store._landed_hooks:
            Store._landed_hooks.append(fn)

    @property
    def recall_cache_bytes(self) -> int:
        """The byte budget of this store's recall index cache in this process (see `open`).

        Set it on a running store to change the budget: the next recall lets the least
        recently used tenants go until what is held fits (InvalidInput below 1).
        """
        return self._recall_cache_bytes

    @recall_cache_bytes.setter
    def recall_cache_bytes(self, value: int) -> None:
        v.count("recall_cache_bytes", value, optional=False, least=1)
        self._recall_cache_bytes = value

    def _after_landed(self, commit: Commit) -> None:
        """Tell the landed hooks (`connect_landed`) of a commit this Store landed."""
        for hook in Store._landed_hooks:
            hook(self, commit)

    def written(self, commit: Commit) -> Sequence[Memory] | None:
        """The memory versions ``commit`` wrote, while this Store runs its hooks.

        For a commit hook (`on_commit`) keeping derived data current: what the
        commit wrote, without reading it back. None for any other commit, or
        once the hooks have run (another Store's or process's: read `diff`).
        """
        return self._core.written(commit)

    def _after_purge(self, commit: Commit) -> None:
        """Tell the purge hooks (`connect_purge`) of a landed commit that purged: every one,
        even after one raised (each erases its own copies), then the first error."""
        if any(change.op == "purge" for change in commit.changes):
            failed: list[Exception] = []
            for hook in Store._purge_hooks:
                try:
                    hook(self, commit)
                except Exception as exc:
                    failed.append(exc)
            if failed:
                raise failed[0]

    def __repr__(self) -> str:
        state = "closed" if self._core.closed else "open"
        return f"<memcommit.Store {self._core.backend.target!r} {state}>"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tenants, integrity, lifetime ---------------------------------------------------

    def tenant(self, name: str) -> TenantView:
        """A view restricted to tenant ``name``: same API, nothing of other tenants."""
        self._core.check_open()
        return TenantView(self, self._core, v.text("tenant", name))

    def tenants(self, *, as_of: CommitRef | None = None) -> list[str]:
        """Tenants that have at least one memory, sorted."""
        core = self._core
        with core.reading():
            return core.backend.tenants(core.seq(as_of))

    def check(self, *, full: bool = False) -> CheckReport:
        """Verify the stored invariants and read every row back; ``report.ok`` when none fails.

        ``full=True`` runs the backend's slowest page checks too (SQLite's
        ``integrity_check`` instead of ``quick_check``).
        """
        v.flag("full", full)
        with self._core.reading():
            return CheckReport(tuple(self._core.backend.check(full=full)))

    def verify(
        self,
        *,
        since: int | Witness | str | None = None,
        expect: Witness | str | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> VerifyReport:
        """Walk the hash chain: is every stored commit and version the one that was written?

        Recomputes each version's digest from its fields and each commit's hash
        from its fields, its parent's hash and its versions' digests; the report
        names the first commit or version that does not match and how (edited,
        missing, reordered, inserted). ``since`` (a seq, or a witness verified
        before) checks only the commits after it; ``expect`` (a `Witness`, or its
        text) also refuses a store behind it or forked from it. Reads one
        snapshot, so commits landing meanwhile (other processes go on writing)
        are not seen. ``progress(done, total)`` is told as rows are checked.
        See docs/verification.md.
        """
        core = self._core
        core.check_open()
        if core.in_my_commit():
            raise InvalidInput("verify", "inside a commit", "runs outside a commit")
        # its own snapshot (`Backend.begin_read`): commits in other threads do not wait
        return verification.verify(core.backend, since=since, expect=expect, progress=progress)

    def witness(self) -> Witness:
        """The newest commit's (seq, id, hash), to keep outside the store: ``str(w)`` is a line.

        Hand it back as ``verify(expect=w)`` later: a store rolled back behind
        it, or rewritten from it on, fails.
        """
        with self._core.reading():
            return verification.witness(self._core.backend)

    def scrub(self, tenants: str | Iterable[str] | None = None) -> bool:
        """Remove the copies of purged content the database keeps beyond the live rows.

        Runs by itself after every commit that purges. SQLite: checkpoints the
        write-ahead log into the file (freed space is zeroed: ``secure_delete``)
        and truncates it. PostgreSQL: ``VACUUM FULL`` of the partitions of the
        versions and vectors tables, one at a time, which drops the old row
        versions an update leaves behind (after a purge, only the partitions of its tenants). False
        when a reader still held them (a long read, an open transaction
        elsewhere): call it again later. ``tenants`` (a name or several) limits
        it to the partitions of those tenants; SQLite, one file, has none.
        """
        chosen = v.names("tenants", tenants)
        return self._core.scrub(None if chosen is None else set(chosen))

    def close(self) -> None:
        """Close the store; later calls raise `StoreClosed`. Closing twice is harmless."""
        if self._core.in_my_commit():
            raise InvalidInput("close", self, "a commit is open; leave its block first")
        self._core.close()

    # -- for derived data kept outside the store ----------------------------------------

    def commit_id(self, seq: int) -> str | None:
        """The id of commit ``seq`` (None when there is none), read without its changes.

        ``commit_id(1)`` is the store's identity: the first commit's id is random,
        so no other store has it, and a copy (export, migrate) keeps it.
        """
        v.count("seq", seq, optional=False)
        with self._core.reading():
            found = self._core.backend.commits(seqs=[seq], changes=False)
        return found[0][0].id if found else None

    def tenant_changes(self, after: int, upto: int) -> list[tuple[str | None, Change]]:
        """Every change of commits ``after`` + 1 .. ``upto``, in order, with its memory's tenant.

        For derived data kept per tenant outside the store (recall's indexes): what
        other writers changed, told apart by tenant without reading the memories.
        """
        v.count("after", after, optional=False)
        v.count("upto", upto, optional=False)
        with self._core.reading():
            found = self._core.backend.commits(after=after, upto=upto, newest_first=False)
        return [
            (tenant, change)
            for commit, tenants in found
            for change, tenant in zip(commit.changes, tenants, strict=True)
        ]

    def cache_dir(self, name: str, *, root: str | Path | None = None) -> Path | None:
        """The folder of this host for derived data ``name`` (say "recall") of this store.

        The backend chooses it: beside a SQLite file (``<file>.<name>/``), in
        the user's cache for PostgreSQL (``~/.cache/memcommit/<name>/<key>/``);
        ``root`` moves it to ``<root>/<key>/``. ``key`` is a digest of the
        store's identity (`commit_id` of 1), never of how its target was
        spelled, so every spelling of one store shares one folder. None when
        the store keeps nothing on disk (in memory) or has no commit yet.
        """
        if not isinstance(name, str) or not name.isascii() or not name.isalnum():
            raise InvalidInput("name", name, "must be ASCII letters and digits (it names a folder)")
        identity = self.commit_id(1)
        if identity is None:
            return None
        key = hashlib.sha256(identity.encode()).hexdigest()[:16]
        chosen = self._core.backend.cache_dir(name, key)
        if chosen is None or root is None:
            return chosen
        return Path(root) / key

    @property
    def backend(self) -> Backend:
        """The storage backend under this store: the low-level escape hatch.

        It stores rows and answers queries with no validation, tenants or
        hooks (see `memcommit.store.Backend`). It is for copying a store
        exactly, commit ids and sequence numbers included, as
        `memcommit.store.transfer` and `memcommit.store.migrate` do; everything
        else should go through the store's API. Calls on it bypass the store's
        lock, so do not share the store with other threads while using it.
        """
        self._core.check_open()
        return self._core.backend

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        return self._core.closed

    @property
    def max_content_bytes(self) -> int:
        """The largest content a memory may hold, in UTF-8 bytes (set by `open`)."""
        return self._core.max_content_bytes


def backing_store(source: ViewLike) -> Store:
    """The Store behind a tenant view, or the Store itself; InvalidInput for anything else.

    For memcommit's own code that keeps state per store, such as recall's live
    index, which every view of one store shares. Not for handing a view's
    holder the store: reads through it are not restricted.
    """
    whole = source._store if isinstance(source, TenantView) else source
    if isinstance(whole, Store):
        return whole
    raise InvalidInput("store", source, "must be a memcommit Store or one of its tenant views")
