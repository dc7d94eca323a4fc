"""`Store`: memories changed only by atomic commits, over any backend."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from memcommit import inputs
from memcommit.errors import HookError, InvalidInput, NotFound, StoreClosed
from memcommit.model import Commit
from memcommit.store import validate as v
from memcommit.store.backends import open_backend
from memcommit.store.backends.base import Backend
from memcommit.store.check import CheckReport
from memcommit.store.ids import commit_id
from memcommit.store.operations import StoreApi, visible_commit
from memcommit.store.tenant import TenantView
from memcommit.store.transaction import Pending, Transaction


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def open(
    target: Any = "memcommit.db",
    *,
    clock: Callable[[], datetime] | None = None,
    max_content_bytes: int = v.DEFAULT_MAX_CONTENT_BYTES,
    **options: Any,
) -> Store:
    """Open (creating and migrating if needed) the store at ``target``.

    ``target`` is a SQLite path, ``":memory:"`` or a ``postgresql://`` URL;
    ``clock`` returns the aware "now" used for commit times (a reading earlier
    than the newest commit's time is raised to it: commit times never go
    backwards); ``options`` go to the backend (SQLite: ``synchronous``,
    ``busy_timeout`` in seconds; PostgreSQL: ``schema``, ``connect_timeout``,
    ``lock_timeout``, ``pool_size``; both: ``read_only=True`` opens an existing,
    migrated store that refuses every write); an option the backend does not
    take is an InvalidInput naming it.
    """
    if clock is not None and not callable(clock):
        raise InvalidInput("clock", clock, "must be a zero-argument callable returning a datetime")
    if not v.count("max_content_bytes", max_content_bytes, optional=False):
        raise InvalidInput("max_content_bytes", max_content_bytes, "must be at least 1")
    return Store(open_backend(target, **options), clock=clock, max_content_bytes=max_content_bytes)


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
    ) -> None:
        self._store = self
        self._only = None
        self._backend = backend
        self._clock = clock or _utc_now
        self.max_content_bytes = max_content_bytes
        self._lock = threading.RLock()
        self._tx: Transaction | None = None
        self._tx_thread: int | None = None
        self._subscribers: list[tuple[Callable[[Commit], Any], str | None]] = []
        self._closed = False
        self._landed: tuple[tuple[int, str], datetime] | None = None  # (tip, time) we landed

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<memcommit.Store {getattr(self._backend, 'target', '?')!r} {state}>"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tenants, integrity, lifetime ---------------------------------------------------

    def tenant(self, name: str) -> TenantView:
        """A view restricted to tenant ``name``: same API, nothing of other tenants."""
        self._check_open()
        return TenantView(self, v.text("tenant", name))

    def tenants(self, *, as_of: Any = None) -> list[str]:
        """Tenants that have at least one memory, sorted."""
        with self._lock:
            self._check_open()
            return self._backend.tenants(self._seq(as_of))

    def check(self, *, full: bool = False) -> CheckReport:
        """Verify the stored invariants and read every row back; ``report.ok`` when none fails.

        ``full=True`` runs the backend's slowest page checks too (SQLite's
        ``integrity_check`` instead of ``quick_check``).
        """
        v.flag("full", full)
        with self._lock:
            self._check_open()
            return CheckReport(tuple(self._backend.check(full=full)))

    def scrub(self) -> bool:
        """Remove the copies of purged content the database keeps beyond the live rows.

        Runs by itself after every commit that purges. SQLite: checkpoints the
        write-ahead log into the file (freed space is zeroed: ``secure_delete``)
        and truncates it. PostgreSQL: ``VACUUM versions``, which drops the old
        row versions an update leaves behind. False when a reader still held
        them (a long read, an open transaction elsewhere): call it again later.
        """
        with self._lock:
            self._check_open()
            if self._in_my_commit():
                raise InvalidInput("scrub", self, "runs after a commit, not inside one")
            return self._backend.scrub()

    def close(self) -> None:
        """Close the store; later calls raise `StoreClosed`. Closing twice is harmless."""
        if self._in_my_commit():
            raise InvalidInput("close", self, "a commit is open; leave its block first")
        with self._lock:
            if not self._closed:
                self._closed = True
                self._backend.close()

    @property
    def backend(self) -> Backend:
        """The storage backend under this store: the low-level escape hatch.

        It stores rows and answers queries with no validation, tenants or
        hooks (see `memcommit.store.Backend`). It is for copying a store
        exactly, commit ids and sequence numbers included, as
        `memcommit.store.transfer` and `memcommit.store.migrate` do; everything else should
        go through the store's API. Calls on it bypass the store's lock, so do
        not share the store with other threads while using it.
        """
        self._check_open()
        return self._backend

    @property
    def closed(self) -> bool:
        """True once `close` was called."""
        return self._closed

    # -- machinery shared with tenant views ---------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosed("the store is closed; open it again with memcommit.open()")

    def _now(self) -> datetime:
        return v.moment("clock()", self._clock(), optional=False)

    def _in_my_commit(self) -> bool:
        return self._tx is not None and self._tx_thread == threading.get_ident()

    @contextmanager
    def _transaction(
        self, message: Any, author: Any, now: Any, tenant: str | None
    ) -> Iterator[Transaction]:
        self._check_open()
        inputs.message(message)
        v.text("author", author)
        now = v.moment("now", now)
        if self._in_my_commit():
            raise InvalidInput("commit", message, "a commit is already open on this store")
        with self._lock:
            self._check_open()
            self._backend.begin()
            tx = None
            try:
                tip = self._tip()
                seq = (tip[0] if tip else 0) + 1
                pending = Pending(
                    seq=seq,
                    id=commit_id(seq),
                    parent=tip[1] if tip else None,
                    time=self._commit_time(now, tip),
                    author=author,
                    message=message,
                )
                tx = Transaction(self, pending, tenant)
                self._tx, self._tx_thread = tx, threading.get_ident()
                yield tx
                batch = tx.batch()
                self._backend.write(batch)
                self._backend.commit()
            except BaseException:
                self._backend.rollback()
                raise
            finally:
                self._tx = self._tx_thread = None
                if tx is not None:
                    tx.closed = True
        tx.result = batch.commit
        self._landed = ((batch.commit.seq, batch.commit.id), batch.commit.time)
        deferred = [self.scrub, *tx.deferred] if batch.purges else tx.deferred
        self._after(batch.commit, batch.tenants, deferred)

    def _commit_time(self, now: datetime | None, tip: tuple[int, str] | None) -> datetime:
        """The time of the next commit: never earlier than the newest one's.

        An explicit ``now`` earlier than that is refused (as-of reads by time
        need times in commit order); a clock reading earlier than that (the
        clock stepped back) is raised to it.
        """
        if tip is None:
            return now or self._now()
        if self._landed is not None and self._landed[0] == tip:
            newest = self._landed[1]
        else:  # first commit of this Store, or another writer landed one since
            newest = self._time_of(tip[0])
        if now is None:
            return max(self._now(), newest)
        if now < newest:
            raise InvalidInput(
                "now", now, f"is earlier than the newest commit's time {newest.isoformat()}"
            )
        return now

    def _after(self, commit: Commit, tenants: list[str | None], deferred: list) -> None:
        """Run subscribers, then deferred work; every hook runs even if an earlier one raised.

        Failures are raised together afterwards as a `HookError`: the commit landed.
        """
        errors: list[BaseException] = []
        for fn, only in list(self._subscribers):
            seen = visible_commit(commit, tenants, only)
            if seen is None:
                continue
            try:
                fn(seen)
            except Exception as exc:
                errors.append(exc)
        for fn in deferred:
            try:
                fn()
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise HookError(commit, errors) from errors[0]

    @contextmanager
    def _writing(self) -> Iterator[Backend]:
        """The backend inside a write transaction: the open commit's, or a fresh one."""
        self._check_open()
        if self._in_my_commit():
            yield self._backend
            return
        with self._lock:
            self._check_open()
            self._backend.begin()
            try:
                yield self._backend
                self._backend.commit()
            except BaseException:
                self._backend.rollback()
                raise

    def _defer(self, fn: Callable[[], Any]) -> None:
        self._check_open()
        if not callable(fn):
            raise InvalidInput("fn", fn, "must be callable with no arguments")
        if self._in_my_commit():
            assert self._tx is not None
            self._tx.deferred.append(fn)
        else:
            fn()

    def _subscribe(self, fn: Callable[[Commit], Any], only: str | None) -> Callable[[], None]:
        self._check_open()
        if not callable(fn):
            raise InvalidInput("fn", fn, "must be callable with one argument (the commit)")
        entry = (fn, only)
        self._subscribers.append(entry)

        def unsubscribe() -> None:
            if entry in self._subscribers:
                self._subscribers.remove(entry)

        return unsubscribe

    def _seq(self, ref: Any, *, field: str = "as_of", moments: bool = True) -> int | None:
        """The commit seq a reference names: None stays None (the present)."""
        if ref is None:
            return None
        if isinstance(ref, Commit):
            ref = ref.id
        if isinstance(ref, bool):
            raise InvalidInput(field, ref, "must be a commit seq, id, Commit or datetime")
        if isinstance(ref, int):
            tip = self._tip()
            if ref < 0 or ref > (tip[0] if tip else 0):
                raise NotFound(field, ref)
            return ref
        if isinstance(ref, str):
            seq = self._backend.commit_seq(ref)
            if seq is None:
                raise NotFound(field, ref)
            return seq
        if moments and isinstance(ref, datetime):
            return self._backend.seq_at(v.moment(field, ref, optional=False))
        raise InvalidInput(field, ref, "must be a commit seq, id, Commit or datetime")

    def _time_of(self, seq: int) -> datetime:
        """The time of commit ``seq`` (the read moment of an as_of read)."""
        if seq == 0:
            return datetime.min.replace(tzinfo=timezone.utc)
        return self._backend.commits(seqs=[seq], changes=False)[0][0].time

    def _tip(self) -> tuple[int, str] | None:
        """(seq, id) of the newest commit, without reading its changes."""
        return self._backend.tip()
