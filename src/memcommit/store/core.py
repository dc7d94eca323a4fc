"""The machinery one store and all its tenant views share: backend, lock, clock, open commit.

`Store` and `TenantView` are thin API objects over one `Core`: every read takes
its turn (`reading`), every commit runs through `transaction`, and reads by commit or time
resolve through `seq`. Nothing outside the store package uses it.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

from memcommit import inputs
from memcommit.embedding import Embedder
from memcommit.errors import HookError, InvalidInput, NotFound, StoreClosed
from memcommit.model import Commit, Memory
from memcommit.store import embeddings, scrub_owed
from memcommit.store import validate as v
from memcommit.store.backends.base import Backend, Batch, Sequencer
from memcommit.store.ids import commit_id
from memcommit.store.pending import Buffer
from memcommit.store.transaction import Pending, Transaction


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


def visible_commit(commit: Commit, tenants: list[str | None], only: str | None) -> Commit | None:
    """The commit as a view of tenant ``only`` sees it: its own changes only; None if none."""
    if only is None:
        return commit
    changes = tuple(ch for ch, t in zip(commit.changes, tenants, strict=False) if t == only)
    if not changes:
        return None
    return dataclasses.replace(commit, changes=changes)


class Core:
    """The backend of one store with its lock, clock, hooks and the commit open on it."""

    def __init__(
        self,
        backend: Backend,
        *,
        clock: Callable[[], datetime] | None,
        max_content_bytes: int,
        embedder: Embedder | None = None,
    ) -> None:
        self.backend = backend
        #: The backend's ordering at landing, when it has one (`Sequencer`): PostgreSQL.
        self._sequencer = backend if isinstance(backend, Sequencer) else None
        self.embedder = embedder
        self.clock = clock or _utc_now
        self.max_content_bytes = max_content_bytes
        self.lock = threading.RLock()
        self._tx: Transaction | None = None
        self._tx_thread: int | None = None
        self._subscribers: list[tuple[Callable[[Commit], Any], str | None]] = []
        self.closed = False
        self._landed: tuple[tuple[int, str], datetime] | None = None  # (tip, time) we landed
        self._written: tuple[int, Sequence[Memory]] = (0, ())  # the commit whose hooks run
        #: ``purging(tx)`` at the end of a block that purged, inside its transaction: what must
        #: go with the purge or not at all (set by the Store)
        self.purging: Callable[[Transaction], None] | None = None
        self._owed_seen = False  # whether this process has read the scrubs owed (`_scrub_owed`)

    def close(self) -> None:
        """Close the backend once; later calls raise `StoreClosed`."""
        with self.lock:
            if not self.closed:
                self.closed = True
                self.backend.close()

    @contextmanager
    def reading(self) -> Iterator[None]:
        """A read's turn. Where the backend reads beside another thread's open commit
        without seeing it (PostgreSQL, on pooled connections), no wait: a commit held up
        (a tenant's lock, a purge's rewrite) stalls no other thread's reads. Else under
        the store's lock (SQLite's one connection would show a commit half made)."""
        if not self.backend.reads_beside_commits:
            with self.lock:
                self.check_open()
                yield
            return
        self.check_open()
        try:
            yield
        except Exception as exc:
            if self.closed:  # closed by another thread while this read ran
                raise StoreClosed("the store was closed while this read ran") from exc
            raise

    def check_open(self) -> None:
        if self.closed:
            raise StoreClosed("the store is closed; open it again with memcommit.open()")

    def now(self) -> datetime:
        return v.moment("clock()", self.clock(), optional=False)

    def in_my_commit(self) -> bool:
        return self._tx is not None and self._tx_thread == threading.get_ident()

    @contextmanager
    def transaction(
        self, message: Any, author: Any, now: Any, tenant: str | None
    ) -> Iterator[Transaction]:
        self.check_open()
        inputs.message(message)
        v.text("author", author)
        now = v.moment("now", now)
        if self.in_my_commit():
            raise InvalidInput("commit", message, "a commit is already open on this store")
        with self.lock:
            self.check_open()
            # a commit at the clock's time may be ordered by the server as it lands
            late = self._sequencer if now is None else None
            if self._sequencer is not None:  # what it may write is locked before the order
                self._sequencer.writes_in(tenant)
            if late is not None:
                late.begin_unordered()
            else:
                self.backend.begin()
            tx = None
            try:
                tip = self.tip()  # unordered: the newest this process knows of
                seq = (tip[0] if tip else 0) + 1
                pending = Pending(
                    seq=seq,
                    id=commit_id(seq),
                    parent=tip[1] if tip else None,
                    time=self._commit_time(now, tip),
                    author=author,
                    message=message,
                )
                tx = Transaction(
                    self.backend,
                    pending,
                    tenant=tenant,
                    max_content_bytes=self.max_content_bytes,
                    order=None if late is None else self._order,
                )
                self._tx, self._tx_thread = tx, threading.get_ident()
                if late is not None:  # from here a read inside the block orders it first
                    late.order_on_read(self._order_open)
                yield tx
                if tx.purged and self.purging is not None:
                    self.purging(tx)
                batch = tx.batch()
                if late is not None and tx.unordered and not late.sequences(batch):
                    self._order(tx)
                    batch = tx.batch()
                if batch.purges:  # owed until a scrub covers it, even if this process dies
                    scrub_owed.record(self.backend, batch.purged_tenants())
                if batch.commit.changes:  # a block that changed nothing lands nothing
                    self.backend.write(batch)
                self.backend.commit()  # state written inside the block (state_set) is kept
                if late is not None and tx.unordered and batch.commit.changes:
                    seq, id, parent, time = late.landed()  # where the server put it
                    tx.ordered(
                        dataclasses.replace(tx.draft, seq=seq, id=id, parent=parent, time=time)
                    )
                    batch = tx.batch()
            except BaseException:
                self.backend.rollback()
                raise
            finally:
                self._tx = self._tx_thread = None
                if tx is not None:
                    tx.closed = True
        if not batch.commit.changes:
            self._after_nothing(tx.deferred)
            return
        tx.result = batch.commit
        self._landed = ((batch.commit.seq, batch.commit.id), batch.commit.time)
        self._written = (batch.commit.seq, batch.versions)
        deferred = tx.deferred
        if batch.purges or not self._owed_seen:
            deferred = [functools.partial(self._scrub_owed, batch.purged_tenants()), *deferred]
        try:
            self._after(batch.commit, batch.tenants, deferred, self._embedding(batch))
        finally:
            self._written = (0, ())  # for the hooks only: a bulk commit's versions are let go

    def _order_open(self) -> None:
        """`_order` for the commit open in this thread (a read inside it asks)."""
        if self._tx is not None and self.in_my_commit():
            self._order(self._tx)

    def _order(self, tx: Buffer) -> None:
        """Order unordered commit ``tx`` now: the writers' lock, and the tip under it.

        Commits other writers landed since its tip was read put it after them: its
        seq, id and parent move on, and its time too if theirs is later.
        """
        late = self._sequencer
        if tx is not self._tx or not tx.unordered or late is None:
            return  # its block has ended (or another thread's is open): nothing to order
        late.order()
        p, tip = tx.draft, self.tip()
        seq = (tip[0] if tip else 0) + 1
        if seq != p.seq:
            newest = self.time_of(tip[0]) if tip else p.time
            parent = tip[1] if tip else None
            p = dataclasses.replace(
                p, seq=seq, id=commit_id(seq), parent=parent, time=max(p.time, newest)
            )
        tx.ordered(p)

    def written(self, commit: Commit) -> Sequence[Memory] | None:
        """The versions ``commit`` wrote, while its hooks run (None for any other commit)."""
        seq, versions = self._written
        return versions if commit.seq == seq else None

    def scrub(self, tenants: Collection[str] | None = None) -> bool:
        """`Store.scrub`: the backend's removal of purged content beyond the live rows.

        ``tenants``: only theirs; None: all. The scrubs owed to the tenants it
        covers are settled when it succeeds (`scrub_owed`).
        """
        with self.lock:
            self.check_open()
            if self.in_my_commit():
                raise InvalidInput(
                    "scrub", "inside a commit", "runs after a commit, not inside one"
                )
            return self._scrubbed(tenants, scrub_owed.owed(self.backend))

    def _scrub_owed(self, purged: Collection[str]) -> bool:
        """After a commit: scrub the tenants it purged in and those owed from before.

        What is owed is read after a purge, and after this process's first commit
        (a process that died as its purge landed left it), not after every commit.
        """
        with self.lock:
            self.check_open()
            self._owed_seen = True
            owed = scrub_owed.owed(self.backend)
            tenants = {*purged, *owed}
            return self._scrubbed(tenants, owed) if tenants else True

    def _scrubbed(self, tenants: Collection[str] | None, owed: dict[str, int]) -> bool:
        """Scrub ``tenants`` (None: all), then settle what of ``owed`` (read before) it covered."""
        covered = owed if tenants is None else {t: n for t, n in owed.items() if t in tenants}
        clean = self.backend.scrub(tenants)
        if clean and covered:
            with self.writing() as backend:
                scrub_owed.settle(backend, covered)
        return clean

    def _commit_time(self, now: datetime | None, tip: tuple[int, str] | None) -> datetime:
        """The time of the next commit: never earlier than the newest one's.

        An explicit ``now`` earlier than that is refused (as-of reads by time
        need times in commit order); a clock reading earlier than that (the
        clock stepped back) is raised to it.
        """
        if tip is None:
            return now or self.now()
        if self._landed is not None and self._landed[0] == tip:
            newest = self._landed[1]
        else:  # first commit of this Store, or another writer landed one since
            newest = self.time_of(tip[0])
        if now is None:
            return max(self.now(), newest)
        if now < newest:
            raise InvalidInput(
                "now", now, f"is earlier than the newest commit's time {newest.isoformat()}"
            )
        return now

    def _after_nothing(self, deferred: list[Callable[[], Any]]) -> None:
        """A block that changed nothing: no commit, no subscriber told; deferred work still runs.

        Its failures raise a `HookError` without a commit (``err.commit`` is None).
        """
        errors = _run_all(deferred)
        if errors:
            raise HookError(None, errors) from errors[0]

    def _embedding(self, batch: Batch) -> list[Callable[[], Any]]:
        """The work of embedding what a landed commit added, when an embedder is configured.

        It runs outside the lock, before the hooks (which may want the vectors); if
        the embedder fails, the commit has landed all the same (a `HookError`), and
        `Store.embed` fills the vectors later.
        """
        embedder = self.embedder
        items = embeddings.landed(batch) if embedder is not None else []
        if embedder is None or not items:
            return []
        return [functools.partial(embeddings.embed_items, self, embedder, items)]

    def _after(
        self,
        commit: Commit,
        tenants: list[str | None],
        deferred: list[Callable[[], Any]],
        first: Sequence[Callable[[], Any]] = (),
    ) -> None:
        """Run ``first``, subscribers, then deferred work; every one runs even if one raised.

        Failures are raised together afterwards as a `HookError`: the commit landed.
        """
        errors: list[BaseException] = _run_all(list(first))
        for fn, only in list(self._subscribers):
            seen = visible_commit(commit, tenants, only)
            if seen is None:
                continue
            errors += _run_all([functools.partial(fn, seen)])
        errors += _run_all(deferred)
        if errors:
            raise HookError(commit, errors) from errors[0]

    @contextmanager
    def writing(self) -> Iterator[Backend]:
        """The backend inside a write transaction: the open commit's, or a fresh one."""
        self.check_open()
        if self.in_my_commit():
            yield self.backend
            return
        with self.lock:
            self.check_open()
            self.backend.begin()
            try:
                yield self.backend
                self.backend.commit()
            except BaseException:
                self.backend.rollback()
                raise

    def defer(self, fn: Callable[[], Any]) -> None:
        self.check_open()
        if not callable(fn):
            raise InvalidInput("fn", fn, "must be callable with no arguments")
        if self.in_my_commit():
            assert self._tx is not None
            self._tx.deferred.append(fn)
        else:
            fn()

    def subscribe(self, fn: Callable[[Commit], Any], only: str | None) -> Callable[[], None]:
        self.check_open()
        if not callable(fn):
            raise InvalidInput("fn", fn, "must be callable with one argument (the commit)")
        entry = (fn, only)
        self._subscribers.append(entry)

        def unsubscribe() -> None:
            if entry in self._subscribers:
                self._subscribers.remove(entry)

        return unsubscribe

    def seq(self, ref: Any, *, field: str = "as_of", moments: bool = True) -> int | None:
        """The commit seq a reference names: None stays None (the present)."""
        if ref is None:
            return None
        if isinstance(ref, Commit):
            ref = ref.id
        if isinstance(ref, bool):
            raise InvalidInput(field, ref, "must be a commit seq, id, Commit or datetime")
        if isinstance(ref, int):
            tip = self.tip()
            if ref < 0 or ref > (tip[0] if tip else 0):
                raise NotFound(field, ref)
            return ref
        if isinstance(ref, str):
            seq = self.backend.commit_seq(ref)
            if seq is None:
                raise NotFound(field, ref)
            return seq
        if moments and isinstance(ref, datetime):
            return self.backend.seq_at(v.moment(field, ref, optional=False))
        raise InvalidInput(field, ref, "must be a commit seq, id, Commit or datetime")

    def time_of(self, seq: int) -> datetime:
        """The time of commit ``seq`` (the read moment of an as_of read)."""
        if seq == 0:
            return datetime.min.replace(tzinfo=timezone.utc)
        return self.backend.commits(seqs=[seq], changes=False)[0][0].time

    def tip(self) -> tuple[int, str] | None:
        """(seq, id) of the newest commit, without reading its changes (a read's turn, as
        every read: SQLite's one connection must not run it beside a scrub's checkpoint)."""
        with self.reading():
            return self.backend.tip()


def _run_all(work: list[Callable[[], Any]]) -> list[BaseException]:
    """Run every callable even after one raised; what they raised, in order."""
    errors: list[BaseException] = []
    for run in work:
        try:
            run()
        except Exception as exc:
            errors.append(exc)
    return errors
