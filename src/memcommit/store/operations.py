"""The read/write API shared by the store and its tenant views.

`Store` is this API over every tenant; `TenantView` is the same API with
``_only`` set, which restricts every read and write to one tenant.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any, ClassVar, TypeVar

from memcommit.embedding import Embedder
from memcommit.errors import InvalidInput, NotFound
from memcommit.model import KINDS, TIERS, Change, Commit, Memory, Trace, Usage
from memcommit.store import embeddings
from memcommit.store import validate as v
from memcommit.store.backends.base import MemoryQuery, TraceRow
from memcommit.store.core import Core, visible_commit
from memcommit.store.embeddings import EmbedReport, StoredVectors
from memcommit.store.protocols import CommitRef
from memcommit.store.transaction import TRACE_ENDINGS, Transaction

TRACE_STATUSES = ("open", *TRACE_ENDINGS)
F = TypeVar("F", bound=Callable[..., Any])
_LOG_PAGE = 500
_TRACE_PAGE = 1000  # traces whose members one read loads


def _reading(fn: F) -> F:
    """Run a read under the store's lock (a commit in another thread is never half seen)."""

    @functools.wraps(fn)
    def wrapper(self: StoreApi, *args: Any, **kwargs: Any) -> Any:
        core = self._core
        with core.lock:
            core.check_open()
            return fn(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


class StoreApi:
    """Commits, reads, hooks, use counts and state; see `memcommit.store.Store`."""

    _core: Core
    _only: str | None

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

    def on_commit(self, fn: Callable[[Commit], Any]) -> Callable[[], None]:
        """Call ``fn(commit)`` after every commit this store lands; returns an unsubscriber.

        Commits landed by other processes on the same database are not announced.
        If ``fn`` raises, the commit has landed all the same: the block raises
        `memcommit.errors.HookError` once every hook ran.
        """
        return self._core.subscribe(fn, self._only)

    def record_uses(
        self, ids: Iterable[str], *, state: Mapping[tuple[str, str], Any] | None = None
    ) -> dict[str, Usage]:
        """Count one use of each id (repeats count again), one logical tick per use.

        No new memory version is written: uses are bookkeeping for the tiers.
        ``state`` ({(namespace, key): JSON value}) is stored as `state_set` would,
        in the same transaction: counters kept beside the uses land with them. A
        value may be a callable instead, from the stored value (None if none) to
        the new one, called inside the write: concurrent increments are never lost.
        """
        counted = v.names("ids", ids)
        if counted is None:
            raise InvalidInput("ids", ids, "must be a list of memory ids")
        if not isinstance(state, Mapping | None) or any(
            not isinstance(name, tuple) or len(name) != 2 for name in state or ()
        ):
            raise InvalidInput("state", state, "must map (namespace, key) pairs to JSON values")
        writes = [
            (
                self._namespace(namespace),
                v.text("key", key),
                value if callable(value) else v.json_value("value", value),
            )
            for (namespace, key), value in (state or {}).items()
        ]
        self._require(set(counted))
        with self._core.writing() as backend:
            for namespace, key, text in writes:
                if callable(text):  # an update of the stored value, under the write lock
                    old = backend.state_get(namespace, key)
                    text = v.json_value("value", text(None if old is None else json.loads(old)))
                backend.state_set(namespace, key, text)
            return backend.record_uses(counted)

    @_reading
    def usage(self, ids: Iterable[str] | None = None) -> dict[str, Usage]:
        """Use counts by id (every counted memory when ``ids`` is None)."""
        ids = v.names("ids", ids)
        found = self._core.backend.usage(ids)
        if self._only is not None and found:
            mine = self._core.backend.memories(MemoryQuery(ids=list(found), tenant=self._only))
            keep = {m.id for m in mine}
            found = {k: u for k, u in found.items() if k in keep}
        return found

    @_reading
    def state_get(self, namespace: str, key: str, default: Any = None) -> Any:
        """The JSON value stored under (namespace, key), or ``default``."""
        text = self._core.backend.state_get(self._namespace(namespace), v.text("key", key))
        return default if text is None else json.loads(text)

    def state_set(self, namespace: str, key: str, value: Any) -> None:
        """Store a JSON value under (namespace, key); it survives reopening.

        A namespace is text without "/". A tenant view's state is its own: no
        other view reads or writes it, whatever the names.
        """
        ns = self._namespace(namespace)
        v.text("key", key)
        text = v.json_value("value", value)
        with self._core.writing() as backend:
            backend.state_set(ns, key, text)

    def state_delete(self, namespace: str, key: str) -> None:
        """Remove the value under (namespace, key), if any: state a caller keeps bounded."""
        ns = self._namespace(namespace)
        v.text("key", key)
        with self._core.writing() as backend:
            backend.state_delete(ns, key)

    def _namespace(self, namespace: str) -> str:
        """The stored namespace: a view's is ``tenant:<name>/<namespace>``, one per pair.

        Namespaces hold no "/" (`validate.namespace`), so the last "/" splits the
        stored name back into its tenant and namespace: no view reaches another's.
        """
        v.namespace(namespace)
        return namespace if self._only is None else f"tenant:{self._only}/{namespace}"

    # -- reading memories ----------------------------------------------------------

    @_reading
    def get(self, id: str, *, as_of: CommitRef | None = None) -> Memory:
        """The memory ``id`` (its latest version, or the one current at ``as_of``)."""
        v.text("id", id)
        found = self._core.backend.memories(
            MemoryQuery(ids=[id], tenant=self._only, as_of=self._core.seq(as_of))
        )
        if not found:
            raise NotFound("id", id)
        return found[0]

    @_reading
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

    @_reading
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

    @_reading
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

    @_reading
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
    @_reading
    def head(self) -> Commit | None:
        """The newest commit (this view's newest, for a tenant view), or None."""
        if self._only is None:
            rows = self._core.backend.commits(limit=1)
            return rows[0][0] if rows else None
        newest = self.log(limit=1)
        return newest[0] if newest else None

    @property
    @_reading
    def head_seq(self) -> int:
        """The seq of the store's newest commit (0 when empty): one indexed read, no changes.

        Cheap enough to ask before every operation: a process that caches what it
        read compares it with the seq it last saw to learn that another writer
        (another process, or another Store object) moved on, then reads `diff`.
        A tenant view answers for the whole store.
        """
        tip = self._core.tip()
        return tip[0] if tip else 0

    @_reading
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

    @_reading
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

    # -- traces --------------------------------------------------------------------

    @_reading
    def trace(self, trace_id: str, *, as_of: CommitRef | None = None) -> Trace:
        """A trace with its root and ordered steps, as it stood at ``as_of``."""
        core = self._core
        seq = core.seq(as_of)
        rows = core.backend.traces(ids=[v.text("trace_id", trace_id)], as_of=seq)
        if not rows or not self._visible(rows[0].tenant):
            raise NotFound("trace_id", trace_id)
        return self._trace(rows[0], seq)

    @_reading
    def traces(
        self,
        *,
        tenant: str | None = None,
        status: str | None = None,
        as_of: CommitRef | None = None,
        unmarked: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> list[Trace]:
        """Traces in the order they began, optionally of one tenant and status.

        ``unmarked`` keeps only traces whose root has no metadata key of that
        name (the Compactor marks compacted roots with "compacted_into", so
        ``unmarked="compacted_into"`` lists the traces not compacted yet).
        ``after`` (a trace id) and ``limit`` page through a long listing: pass
        the last trace of one page as ``after`` to get the next. Every filter
        runs in the backend, and the members of a page load in one read.
        """
        core = self._core
        tenant = v.optional_text("tenant", tenant)
        if status is not None and status not in TRACE_STATUSES:
            raise InvalidInput("status", status, f"must be one of {', '.join(TRACE_STATUSES)}")
        if self._only is not None:
            if tenant is not None and tenant != self._only:
                raise InvalidInput("tenant", tenant, f"this view reads only tenant {self._only!r}")
            tenant = self._only
        unmarked = v.optional_text("unmarked", unmarked)
        after = v.optional_text("after", after)
        limit = v.limit(limit)
        seq = core.seq(as_of)
        if after is not None:
            found = core.backend.traces(ids=[after], tenant=tenant)
            if not found:
                raise NotFound("after", after)
        rows = core.backend.traces(
            tenant=tenant, as_of=seq, status=status, unmarked=unmarked, after=after, limit=limit
        )
        out: list[Trace] = []
        for start in range(0, len(rows), _TRACE_PAGE):
            out += self._traces(rows[start : start + _TRACE_PAGE], seq)
        return out

    def _trace(self, row: TraceRow, seq: int | None) -> Trace:
        return self._traces([row], seq)[0]

    def _traces(self, rows: list[TraceRow], seq: int | None) -> list[Trace]:
        """Traces with their root and steps, the members of all of them read at once."""
        if not rows:
            return []
        if len(rows) == 1:
            members = self._core.backend.memories(MemoryQuery(trace=rows[0].id, as_of=seq))
        else:
            members = self._core.backend.memories(
                MemoryQuery(traces=[r.id for r in rows], as_of=seq)
            )
        by_trace: dict[str, list[Memory]] = {r.id: [] for r in rows}
        for m in members:
            by_trace[m.trace_id].append(m)  # type: ignore[index]
        out = []
        for row in rows:
            status, ended = row.status, row.ended_at
            if seq is not None and row.ended_seq is not None and row.ended_seq > seq:
                status, ended = "open", None
            root, *steps = by_trace[row.id]  # in step order: the root (step 0) first
            trace = Trace(
                id=row.id,
                tenant=row.tenant,
                scope=row.scope,
                status=status,
                root=root,
                steps=tuple(steps),
                started_at=row.started_at,
                ended_at=ended,
            )
            out.append(trace)
        return out

    # -- the rest ------------------------------------------------------------------

    # -- vectors -------------------------------------------------------------------------

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

        ``embedder`` is an embedder, a name that resolves to one (``"hash"``), or the
        name its vectors are stored under (default: the store's). ``tenant`` defaults
        to "default" (a view: its own, only). ``ids`` keeps those memories; ``after``
        and ``limit`` page in id order. Only current, unpurged memories that have a
        vector are in it.
        """
        name = embeddings.name_of(embedder, self._core.embedder)
        if self._only is not None and tenant not in (None, self._only):
            raise InvalidInput("tenant", tenant, f"this view reads only tenant {self._only!r}")
        only = self._only or _tenant_or_none(tenant) or "default"
        return embeddings.stored(self._core, name, only, ids=ids, after=after, limit=limit)

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

    def _visible(self, tenant: str) -> bool:
        return self._only is None or tenant == self._only

    @_reading
    def _require(self, ids: set[str]) -> None:
        """NotFound for the first id that is not a memory this API can see."""
        backend = self._core.backend
        if self._only is None:  # existence alone: no row is decoded
            found = set(backend.versions(list(ids)))
        else:
            found = {m.id for m in backend.memories(MemoryQuery(ids=list(ids), tenant=self._only))}
        missing = ids - found
        if missing:
            raise NotFound("ids", sorted(missing)[0])


def _tenant_or_none(tenant: Any) -> str | None:
    return None if tenant is None else v.text("tenant", tenant)
