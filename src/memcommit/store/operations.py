"""The read/write API shared by the store and its tenant views.

`Store` is this API over every tenant; `TenantView` is the same API with
``_only`` set, which restricts every read and write to one tenant.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar

from memcommit.errors import InvalidInput, NotFound
from memcommit.model import KINDS, TIERS, Change, Commit, Memory
from memcommit.store import scrub_owed
from memcommit.store import validate as v
from memcommit.store.api_part import reading
from memcommit.store.backends.base import MemoryQuery
from memcommit.store.core import visible_commit
from memcommit.store.protocols import CommitRef
from memcommit.store.state_api import UsesAndState
from memcommit.store.trace_reads import TRACE_STATUSES, TraceReads
from memcommit.store.transaction import Transaction
from memcommit.store.vector_api import VectorApi

_LOG_PAGE = 500


class StoreApi(UsesAndState, TraceReads, VectorApi):
    """Commits, reads, hooks, use counts and state; see `memcommit.store.Store`."""

    # -- writing -------------------------------------------------------------------

    def commit(
        self, message: str = "", author: str = "agent", now: datetime | None = None
    ) -> AbstractContextManager[Transaction]:
        """Open an atomic commit: ``with store.commit(message=...) as tx: tx.add(...)``.

        Leaving the block lands every change at once and sets ``tx.result``; a
        block that changed nothing lands nothing (no commit, no seq used, no
        subscriber told; ``tx.result`` stays None); an exception inside rolls
        all of them back and propagates. Commit times
        never go backwards: a ``now`` earlier than the newest commit's time is
        refused (InvalidInput "now"), and the store's clock reading is raised to
        that time if the clock stepped back. If a hook (`on_commit`, `defer`)
        raises afterwards, the block raises `memcommit.errors.HookError`: the
        commit landed (``err.commit``, ``tx.result``), so do not retry it.
        """
        return self._core.transaction(message, author, now, self._only)

    def defer(self, fn: Callable[[], Any]) -> None:
        """Run ``fn()`` after the open commit lands (never if it rolls back); at once if none.

        If it raises, the commit has landed all the same: the block raises
        `memcommit.errors.HookError` once every hook ran.
        """
        self._core.defer(fn)

    @reading
    def scrub_pending(self) -> list[str]:
        """The tenants whose purged content may still be in the database's files, sorted
        (a view: its own tenant, or none).

        A purge's commit records its tenants and a scrub that succeeds clears them:
        one is left when the scrub after a purge returned False (a reader still held
        the copies) or never ran (the process died as the purge landed). The next
        purge, a process's first commit, and `Store.scrub` try again.
        """
        return sorted(t for t in scrub_owed.owed(self._core.backend) if self._visible(t))

    def on_commit(self, fn: Callable[[Commit], Any]) -> Callable[[], None]:
        """Call ``fn(commit)`` after every commit this store lands; returns an unsubscriber.

        Commits landed by other processes on the same database are not announced.
        If ``fn`` raises, the commit has landed all the same: the block raises
        `memcommit.errors.HookError` once every hook ran.
        """
        return self._core.subscribe(fn, self._only)

    # -- reading memories ----------------------------------------------------------

    @reading
    def get(self, id: str, *, as_of: CommitRef | None = None) -> Memory:
        """The memory ``id`` (its latest version, or the one current at ``as_of``)."""
        v.text("id", id)
        found = self._core.backend.memories(
            MemoryQuery(ids=[id], tenant=self._only, as_of=self._core.seq(as_of))
        )
        if not found:
            raise NotFound("id", id)
        return found[0]

    @reading
    def find(
        self,
        *,
        ids: Iterable[str] | None = None,
        tenant: str | None = None,
        kinds: Iterable[str] | None = None,
        scopes: Iterable[str] | None = None,
        sessions: Iterable[str] | None = None,
        key: str | None = None,
        tiers: Iterable[str] | None = None,
        live: bool = True,
        since: datetime | None = None,
        until: datetime | None = None,
        trace: str | None = None,
        as_of: CommitRef | None = None,
        limit: int | None = None,
        after: str | None = None,
    ) -> list[Memory]:
        """Memories matching every given filter, in id order (creation order for generated ids).

        ``ids`` reads those memories in one query (ids not found are left out);
        ``live`` keeps only memories that hold at the read's moment (now, or the
        as_of commit's time); ``since``/``until`` bound the creation time
        (inclusive); with ``trace`` the result is in step order. ``after`` (an
        id) and ``limit`` page through a long listing: pass the last id of one
        page as ``after`` to get the next (not with ``trace``).
        """
        core = self._core
        tenant = v.optional_text("tenant", tenant)
        if self._only is not None:
            if tenant is not None and tenant != self._only:
                raise InvalidInput("tenant", tenant, f"this view reads only tenant {self._only!r}")
            tenant = self._only
        after = v.optional_text("after", after)
        if after is not None and trace is not None:
            raise InvalidInput("after", after, "pages in id order: not with trace (step order)")
        seq = core.seq(as_of)
        live_at = None
        if v.flag("live", live):
            live_at = core.now() if seq is None else core.time_of(seq)
        return core.backend.memories(
            MemoryQuery(
                ids=v.names("ids", ids),
                tenant=tenant,
                kinds=v.names("kinds", kinds, KINDS),
                scopes=v.names("scopes", scopes),
                sessions=v.names("sessions", sessions),
                key=v.optional_text("key", key),
                tiers=v.names("tiers", tiers, TIERS),
                trace=v.optional_text("trace", trace),
                since=v.moment("since", since),
                until=v.moment("until", until),
                live_at=live_at,
                as_of=seq,
                limit=v.limit(limit),
                after=after,
            )
        )

    @reading
    def history(self, memory_id: str, *, as_of: CommitRef | None = None) -> list[Memory]:
        """Every version of one memory, oldest first (those written up to ``as_of``)."""
        versions = self._core.backend.history(v.text("memory_id", memory_id))
        seq = self._core.seq(as_of)
        if seq is not None:
            versions = [m for m in versions if (m.updated_commit or 0) <= seq]
        if not versions or not self._visible(versions[0].tenant):
            raise NotFound("memory_id", memory_id)
        return versions

    # -- reading commits -----------------------------------------------------------

    @reading
    def log(self, *, limit: int | None = None, as_of: CommitRef | None = None) -> list[Commit]:
        """Commits, newest first (up to the as_of commit)."""
        core = self._core
        limit = v.limit(limit)
        upto = core.seq(as_of)
        if self._only is None:
            return [c for c, _ in core.backend.commits(upto=upto, limit=limit)]
        out: list[Commit] = []
        while limit is None or len(out) < limit:
            page = core.backend.commits(upto=upto, limit=_LOG_PAGE)
            out += [c for c in (self._filter(c, t) for c, t in page) if c is not None]
            if len(page) < _LOG_PAGE:
                break
            upto = page[-1][0].seq - 1
        return out[:limit]

    @reading
    def show(self, commit: CommitRef) -> Commit:
        """One commit with its changes, by seq, id or Commit."""
        core = self._core
        seq = core.seq(commit, field="commit", moments=False)
        rows = core.backend.commits(seqs=[seq]) if seq else []
        found = self._filter(*rows[0]) if rows else None
        if found is None:
            raise NotFound("commit", commit)
        return found

    @property
    @reading
    def head(self) -> Commit | None:
        """The newest commit (this view's newest, for a tenant view), or None."""
        if self._only is None:
            rows = self._core.backend.commits(limit=1)
            return rows[0][0] if rows else None
        newest = self.log(limit=1)
        return newest[0] if newest else None

    @property
    @reading
    def head_seq(self) -> int:
        """The seq of the store's newest commit (0 when empty): one indexed read, no changes.

        Cheap enough to ask before every operation: a process that caches what it
        read compares it with the seq it last saw to learn that another writer
        (another process, or another Store object) moved on, then reads `diff`.
        A tenant view answers for the whole store.
        """
        return self.tip[0]

    @property
    def tip(self) -> tuple[int, str | None]:
        """(seq, id) of the store's newest commit ((0, None) when empty), in one indexed read:
        `head_seq` with the id that tells a commit from a later one given the same seq (a
        commit a crash lost before it was durable, then another)."""
        tip = self._core.tip()
        return tip if tip else (0, None)

    @reading
    def tier_counts(
        self, *, tiers: Iterable[str] | None = None, always: bool | None = None
    ) -> dict[tuple[str, str, str], int]:
        """How many memories each (tier, tenant, scope) holds now, counted in one query.

        ``always=False`` leaves out memories marked always (working memory pins
        them: they take no room); ``always=True`` counts only them.
        """
        if always is not None:
            v.flag("always", always)
        return self._core.backend.tier_counts(v.names("tiers", tiers, TIERS), self._only, always)

    @reading
    def diff(self, a: CommitRef, b: CommitRef | None = None) -> list[Change]:
        """Every change after commit ``a`` up to and including commit ``b`` (default: head).

        ``a`` and ``b`` are commits (seq, id, Commit) or times; seq 0 is the empty store.
        """
        core = self._core
        lo = core.seq(a, field="a") or 0
        hi = core.seq(b, field="b")
        if hi is None:
            tip = core.tip()
            hi = tip[0] if tip else 0
        if hi < lo:
            raise InvalidInput("b", b, f"is older than a={a!r}; pass the older commit first")
        out: list[Change] = []
        for c, tenants in core.backend.commits(after=lo, upto=hi, newest_first=False):
            kept = self._filter(c, tenants)
            if kept is not None:
                out += kept.changes
        return out

    def _filter(self, commit: Commit, tenants: list[str | None]) -> Commit | None:
        return visible_commit(commit, tenants, self._only)

    # -- the rest ------------------------------------------------------------------

    def recall(self, query: str, options: Any = None, **kw: Any) -> Any:
        """Recall a bounded context for ``query`` (a `RecallOptions` and/or its fields by name).

        See `memcommit.recall.recall`.
        """
        return StoreApi._recaller(self, query, options, **kw)

    #: ``recall(view, query, options, **kw)``: the recall layer sits above the store, so the store
    #: never imports it; the package top (``memcommit/__init__.py``) connects it here.
    _recaller: ClassVar[Callable[..., Any]]

    @staticmethod
    def connect_recall(recaller: Callable[..., Any]) -> None:
        """Make ``view.recall(query, ...)`` call ``recaller(view, query, ...)``."""
        StoreApi._recaller = recaller


__all__ = ["TRACE_STATUSES", "StoreApi"]
