"""One commit in the making: every change is checked when called, written when the block ends.

The transaction holds the writers' lock from the start, so what it reads is
what it will write over, the sequence number is known up front, and new versions
are buffered and written in one batch (fast for bulk adds).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from memcommit import inputs
from memcommit.errors import Conflict, InvalidInput, NotFound, Purged
from memcommit.model import Commit, Memory
from memcommit.store import validate as v
from memcommit.store.backends.base import Backend, Batch, MemoryQuery, TraceRow
from memcommit.store.ids import new_id
from memcommit.store.provenance import derived
from memcommit.store.records import change, fields_of, memory
from memcommit.store.records import commit as make_commit

TRACE_ENDINGS = ("finished", "failed")


@dataclass(frozen=True)
class Pending:
    """The commit a transaction will land: known before any change is made."""

    seq: int
    id: str
    parent: str | None
    time: datetime
    author: str
    message: str


class Transaction:
    """The ``tx`` of ``with store.commit(...) as tx``; ``tx.result`` is the landed Commit.

    ``tx.result`` stays None when the block changed nothing: no commit landed.
    """

    def __init__(
        self, backend: Backend, pending: Pending, *, tenant: str | None, max_content_bytes: int
    ) -> None:
        self._only = tenant  # set for a tenant view: every read and write stays in it
        self._backend = backend
        self._limit = max_content_bytes
        self.pending = pending
        self.result: Commit | None = None
        # Buffers hold each version's field dict (see `_frozen`) and each change as a
        # tuple, not objects: atomic-valued dicts and tuples are untracked by the garbage
        # collector, so a bulk commit of 100,000 memories does not make every collection
        # walk them all.
        self._latest: dict[str, dict[str, Any]] = {}  # id -> newest version, stored or pending
        self._base: dict[str, int] = {}  # id -> version current before this commit
        self._versions: list[dict[str, Any]] = []
        self._changes: list[tuple[str, str, int | None, dict[str, Any] | None]] = []
        self._tenants: list[str | None] = []
        self._purges: list[str] = []
        self._stored_metadata: dict[
            str, dict[str, Mapping[str, Any]]
        ] = {}  # tenant -> id -> metadata
        self._traces: dict[str, TraceRow] = {}
        self.deferred: list[Callable[[], Any]] = []
        self.closed = False  # set when the block ends: later calls would be lost

    @property
    def message(self) -> str:
        """The commit's message; assign ``tx.message = ...`` inside the block to change it."""
        return self.pending.message

    @message.setter
    def message(self, value: str) -> None:
        self._check_open()
        self.pending = replace(self.pending, message=inputs.message(value))

    # -- adding ------------------------------------------------------------------

    def add(
        self,
        content: str,
        *,
        kind: str = "fact",
        scope: str = "shared",
        tenant: str | None = None,
        session: str | None = None,
        key: str | None = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
        project: str | None = None,
        always: bool = False,
        token_count: int | None = None,
        metadata: Mapping[str, Any] | None = None,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        id: str | None = None,
        tier: str = "short",
    ) -> Memory:
        """Add a new memory (version 1) and return it; ``tenant`` defaults to "default"."""
        m = self._new_memory(
            content,
            kind=kind,
            scope=scope,
            tenant=tenant,
            session=session,
            key=key,
            importance=importance,
            tags=tags,
            project=project,
            always=always,
            token_count=token_count,
            metadata=metadata,
            valid_from=valid_from,
            valid_to=valid_to,
            id=id,
            tier=tier,
        )
        self._record(m, "add", None)
        return m

    def _new_memory(
        self,
        content: Any,
        *,
        kind: Any = "fact",
        scope: Any = "shared",
        tenant: Any = None,
        session: Any = None,
        key: Any = None,
        importance: Any = 0.5,
        tags: Any = (),
        project: Any = None,
        always: Any = False,
        token_count: Any = None,
        metadata: Any = None,
        valid_from: Any = None,
        valid_to: Any = None,
        id: Any = None,
        tier: Any = "short",
        trace_id: str | None = None,
        step: int | None = None,
    ) -> Memory:
        """Version 1 of a new memory, every field checked (the arguments are the caller's)."""
        p = self.pending
        if valid_from is not None or valid_to is not None:
            valid_from = v.moment("valid_from", valid_from)
            valid_to = v.moment("valid_to", valid_to)
            v.window(valid_from, valid_to)
        if id is None:
            id = new_id()
        else:
            v.text("id", id)
            if self._only is not None:  # ids are global: a view's answer would reveal others'
                raise InvalidInput(
                    "id", id, "a tenant view chooses ids itself; pass ids through the store"
                )
            if id in self._latest or self._stored(id) is not None:
                raise InvalidInput("id", id, "a memory with this id already exists")
        return memory(
            {
                "id": id,
                "content": v.content(content, self._limit),
                "kind": v.kind(kind),
                "scope": v.text("scope", scope),
                "tenant": self._tenant_of(tenant),
                "session": None if session is None else v.text("session", session),
                "key": None if key is None else v.text("key", key),
                "importance": v.importance(importance),
                "tags": v.tags(tags),
                "project": None if project is None else v.text("project", project),
                "always": v.flag("always", always),
                "token_count": None if token_count is None else v.count("token_count", token_count),
                "trace_id": trace_id,
                "step": step,
                "metadata": {} if metadata is None else v.metadata(metadata),
                "valid_from": valid_from,
                "valid_to": valid_to,
                "superseded_by": None,
                "status": "active",
                "tier": v.tier(tier),
                "version": 1,
                "created_at": p.time,
                "created_commit": p.seq,
                "updated_at": p.time,
                "updated_commit": p.seq,
            }
        )

    # -- changing ----------------------------------------------------------------

    def update(self, id: str, *, expected_version: int | None = None, **fields: Any) -> Memory:
        """A new version with ``fields`` changed; `Conflict` if ``expected_version`` moved on."""
        cur = self._current(id, writable=True)
        if expected_version is not None:
            v.count("expected_version", expected_version, optional=False)
            if expected_version != cur.version:
                raise Conflict(id, expected_version, cur.version)
        if not fields:
            raise InvalidInput("fields", fields, f"name at least one of {', '.join(v.UPDATABLE)}")
        new = self._checked_fields(cur, fields)
        changed = {name: value for name, value in new.items() if getattr(cur, name) != value}
        if not changed:
            return cur  # every field already holds its value: no new version
        return self._next(cur, "update", {"fields": sorted(changed)}, changed)

    def _checked_fields(self, cur: Memory, fields: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, value in fields.items():
            if name not in v.UPDATABLE:
                raise InvalidInput(
                    name, value, f"cannot be updated; allowed: {', '.join(v.UPDATABLE)}"
                )
            if name == "content":
                out[name] = v.content(value, self._limit)
            elif name == "kind":
                out[name] = v.kind(value)
            elif name == "scope":
                out[name] = v.text("scope", value)
            elif name in ("session", "key", "project"):
                out[name] = v.optional_text(name, value)
            elif name == "importance":
                out[name] = v.importance(value)
            elif name == "tags":
                out[name] = v.tags(value)
            elif name == "always":
                out[name] = v.flag("always", value)
            elif name == "token_count":
                out[name] = v.count("token_count", value)
            elif name == "metadata":
                out[name] = v.metadata(value)
            elif name in ("valid_from", "valid_to"):
                out[name] = v.moment(name, value)
            else:
                out[name] = v.tier(value)
        v.window(out.get("valid_from", cur.valid_from), out.get("valid_to", cur.valid_to))
        return out

    def invalidate(self, id: str, at: datetime | None = None) -> Memory:
        """The memory no longer holds from ``at`` (default: this commit's time)."""
        cur = self._current(id, writable=True)
        at = v.moment("at", at) or self.pending.time
        if cur.valid_from is not None and at < cur.valid_from:
            raise InvalidInput("at", at, f"is before the memory's valid_from={cur.valid_from}")
        status = "invalidated" if at <= self.pending.time else cur.status
        return self._next(
            cur, "invalidate", {"at": at.isoformat()}, {"valid_to": at, "status": status}
        )

    def supersede(self, old_id: str, new_id: str) -> Memory:
        """``old_id`` is replaced by ``new_id``: it gets superseded_by and stops holding."""
        old = self._current(old_id, writable=True, field="old_id")
        new = self._current(new_id, field="new_id")
        if old_id == new_id:
            raise InvalidInput("new_id", new_id, "a memory cannot supersede itself")
        if new.tenant != old.tenant:
            raise NotFound("new_id", new_id)
        return self._next(
            old, "supersede", {"by": new_id}, {"superseded_by": new_id, "status": "superseded"}
        )

    def move(self, id: str, tier: str) -> Memory:
        """Move to another tier (a new version); moving to the current tier changes nothing."""
        return self._to_tier(id, v.tier(tier), "move")

    def archive(self, id: str) -> Memory:
        """Move to the archive tier."""
        return self._to_tier(id, "archive", "archive")

    def restore(self, id: str, tier: str = "short") -> Memory:
        """Bring an archived memory back to ``tier`` (nothing happens if it is not archived)."""
        v.tier(tier)
        if tier == "archive":
            raise InvalidInput("tier", tier, "restore to short, mid or long")
        cur = self._current(id, writable=True)
        return cur if cur.tier != "archive" else self._to_tier(id, tier, "restore")

    def page_in(self, id: str) -> Memory:
        """Bring an archived memory back to the short tier, recorded as a page-in."""
        cur = self._current(id, writable=True)
        return cur if cur.tier != "archive" else self._to_tier(id, "short", "page_in")

    def move_many(self, items: Iterable[str | Memory], tier: str) -> Sequence[Memory]:
        """`move` each of ``items`` (ids, or memories as read: see `read`), read in one query."""
        return self._many_to_tier(self._load(items), v.tier(tier), "move")

    def archive_many(self, items: Iterable[str | Memory]) -> Sequence[Memory]:
        """`archive` each of ``items`` (ids, or memories as read: see `read`), read in one query."""
        return self._many_to_tier(self._load(items), "archive", "archive")

    def _many_to_tier(self, ids: list[str], tier: str, op: str) -> Sequence[Memory]:
        """`_to_tier` for many ids already in the buffer, without a Memory per step between."""
        self._check_open()
        p = self.pending
        latest = self._latest
        out = []
        for id in ids:
            cur = latest[id]
            if cur["status"] == "purged":
                raise Purged(id)
            if cur["tier"] != tier:
                version = cur["version"] + 1
                detail = {"from": cur["tier"], "to": tier}
                cur = {
                    **cur, "tier": tier, "version": version, "updated_at": p.time,
                    "updated_commit": p.seq, "metadata": cur["metadata"] or None,
                }  # fmt: skip
                latest[id] = cur
                self._versions.append(cur)
                self._changes.append((op, id, version, detail))
                self._tenants.append(cur["tenant"])
            out.append(cur)
        return _Versions(out)

    def _to_tier(self, id: str, tier: str, op: str) -> Memory:
        cur = self._current(id, writable=True)
        if cur.tier == tier:
            return cur
        return self._next(cur, op, {"from": cur.tier, "to": tier}, {"tier": tier})

    def purge(self, id: str) -> Memory:
        """Erase the content, tags and metadata from every version; a tombstone stays.

        Every memory of the tenant derived from it (a summary of its trace, and
        summaries of that: see `memcommit.store.provenance`) is purged in the same
        commit, its change's detail naming the id it was ``derived_from``.
        """
        cur = self._current(id)
        if cur.status == "purged":
            return cur
        purged = self._erase(cur, {})
        for derived_id, source in derived([id], self._metadata_of(cur.tenant)):
            self._erase(self._current(derived_id), {"derived_from": source})
        return purged

    def _erase(self, cur: Memory, detail: dict[str, Any]) -> Memory:
        self._check_open()
        id = cur.id
        erased = {"content": "", "tags": (), "metadata": {}}
        erased_fields = {**erased, "metadata": None}
        self._versions = [{**f, **erased_fields} if f["id"] == id else f for f in self._versions]
        self._purges.append(id)
        return self._next(cur, "purge", detail, {**erased, "status": "purged", "token_count": None})

    def _metadata_of(self, tenant: str) -> Iterator[tuple[str, Mapping[str, Any] | None]]:
        """(id, metadata) of each of ``tenant``'s memories as this commit leaves them."""
        if tenant not in self._stored_metadata:  # read once per commit: writers wait on us
            found = self._backend.memories(MemoryQuery(tenant=tenant, with_metadata=True))
            self._stored_metadata[tenant] = {m.id: m.metadata for m in found if m.metadata}
        pending = {i: f["metadata"] for i, f in self._latest.items() if f["tenant"] == tenant}
        yield from {**self._stored_metadata[tenant], **pending}.items()

    # -- traces ------------------------------------------------------------------

    def begin_trace(
        self,
        task: str,
        *,
        tenant: str | None = None,
        scope: str = "shared",
        session: str | None = None,
        kind: str = "event",
        metadata: Mapping[str, Any] | None = None,
    ) -> str:
        """Start a trace; its root memory holds the task, with trace_id set and step 0."""
        root = self._new_memory(
            task, kind=kind, scope=scope, tenant=tenant, session=session, metadata=metadata, step=0
        )
        trace_id = root.id  # the trace is named after its root memory
        root = memory({**fields_of(root), "trace_id": trace_id})
        p = self.pending
        self._traces[trace_id] = TraceRow(
            id=trace_id,
            tenant=root.tenant,
            scope=root.scope,
            session=root.session,
            status="open",
            last_step=0,
            started_seq=p.seq,
            started_at=p.time,
        )
        self._record(root, "begin_trace", None)
        return trace_id

    def step(
        self,
        trace_id: str,
        content: str,
        *,
        kind: str = "event",
        metadata: Mapping[str, Any] | None = None,
        importance: float = 0.5,
        tags: Iterable[str] = (),
    ) -> Memory:
        """Append the next step (1, 2, ...) to an open trace."""
        trace = self._open_trace(trace_id)
        n = trace.last_step + 1
        m = self._new_memory(
            content,
            kind=kind,
            scope=trace.scope,
            tenant=trace.tenant,
            session=trace.session,
            importance=importance,
            tags=tags,
            metadata=metadata,
            trace_id=trace_id,
            step=n,
        )
        self._traces[trace_id] = replace(trace, last_step=n)
        self._record(m, "step", {"trace": trace_id, "step": n})
        return m

    def finish(self, trace_id: str, status: str = "finished") -> None:
        """Close an open trace as "finished" or "failed"."""
        if status not in TRACE_ENDINGS:
            raise InvalidInput("status", status, f"must be one of {', '.join(TRACE_ENDINGS)}")
        trace = self._open_trace(trace_id)
        self._check_open()
        p = self.pending
        self._traces[trace_id] = replace(trace, status=status, ended_seq=p.seq, ended_at=p.time)
        self._changes.append(("finish_trace", trace_id, None, {"status": status}))
        self._tenants.append(trace.tenant)

    def _open_trace(self, trace_id: str) -> TraceRow:
        v.text("trace_id", trace_id)
        trace = self._traces.get(trace_id)
        if trace is None:
            rows = self._backend.traces(ids=[trace_id])
            if not rows or not self._visible(rows[0].tenant):
                raise NotFound("trace_id", trace_id)
            trace = rows[0]
        if trace.status != "open":
            raise InvalidInput("trace_id", trace_id, f"trace is already {trace.status}")
        return trace

    # -- bookkeeping -------------------------------------------------------------

    def _visible(self, tenant: str) -> bool:
        return self._only is None or tenant == self._only

    def _tenant_of(self, tenant: Any) -> str:
        if tenant is None:
            return self._only or "default"
        checked = v.text("tenant", tenant)
        if self._only is not None and checked != self._only:
            raise InvalidInput("tenant", checked, f"this view writes only tenant {self._only!r}")
        return checked

    def read(self, items: Iterable[str | Memory]) -> Sequence[Memory]:
        """The newest version (pending or stored) of each id, reading many in one query.

        Items are ids or memories read from this store earlier (outside the
        commit, say). A memory whose version is still the current one is used
        as it is, so only its version is read back; any other is read whole.
        Later changes in this commit to these ids read nothing more. NotFound
        names the first id that does not exist (or is another tenant's). The
        result is a sequence whose Memory values are made as they are looked at.
        """
        return _Versions([self._latest[i] for i in self._load(items)])

    def _load(self, items: Iterable[str | Memory]) -> list[str]:
        """The ids of ``items``, each with its newest version in the buffer (see `read`)."""
        latest = self._latest
        ids: list[str] = []
        given: dict[str, Memory] = {}
        for item in items:
            if isinstance(item, Memory):
                id = item.id
                if id not in latest:
                    given[id] = item
            elif isinstance(item, str) and item in latest:
                id = item
            else:
                id = v.text("id", item)
            ids.append(id)
        wanted = [i for i in dict.fromkeys(ids) if i not in latest]
        if wanted:
            known = self._backend.versions([i for i in wanted if i in given]) if given else {}
            reused = [given[i] for i in wanted if i in given and known.get(i) == given[i].version]
            fresh = set(wanted) - {m.id for m in reused}
            loaded = self._backend.memories(MemoryQuery(ids=sorted(fresh))) if fresh else []
            for m in (*reused, *loaded):
                if self._visible(m.tenant):
                    latest[m.id] = m.__dict__  # held as read: no copy per memory
                    self._base[m.id] = m.version
            missing = next((i for i in wanted if i not in latest), None)
            if missing is not None:
                raise NotFound("id", missing)
        return ids

    def _stored(self, id: str) -> Memory | None:
        found = self._backend.memories(MemoryQuery(ids=[id], tenant=self._only))
        return found[0] if found else None

    def _current(self, id: Any, *, writable: bool = False, field: str = "id") -> Memory:
        """The newest version of ``id`` (pending or stored); NotFound/Purged as fits."""
        known = self._latest.get(id) if isinstance(id, str) else None
        cur = None if known is None else _thawed(known)
        if cur is None:
            v.text(field, id)
            cur = self._stored(id)
            if cur is None or not self._visible(cur.tenant):
                raise NotFound(field, id)
            self._latest[id] = _frozen(cur)
            self._base[id] = cur.version
        if writable and cur.status == "purged":
            raise Purged(id)
        return cur

    def _next(
        self, cur: Memory, op: str, detail: dict[str, Any], changes: dict[str, Any]
    ) -> Memory:
        p = self.pending
        m = memory(
            {
                **fields_of(cur),
                **changes,
                "version": cur.version + 1,
                "updated_at": p.time,
                "updated_commit": p.seq,
            }
        )
        self._record(m, op, detail)
        return m

    @property
    def changed(self) -> bool:
        """Whether the block changed anything so far (if not, leaving it lands no commit)."""
        return bool(self._changes)

    def _check_open(self) -> None:
        if self.closed:
            raise InvalidInput("tx", self.pending.id, "this commit's block has ended")

    def _record(self, m: Memory, op: str, detail: dict[str, Any] | None) -> None:
        self._check_open()
        fields = _frozen(m)
        self._latest[m.id] = fields
        self._versions.append(fields)
        self._changes.append((op, m.id, m.version, detail))
        self._tenants.append(m.tenant)

    def batch(self) -> Batch:
        """Every row write of this commit, for `Backend.write`."""
        p = self.pending
        latest = self._latest
        changes = tuple(
            change(op, mid, version, detail or {}) for op, mid, version, detail in self._changes
        )
        commit = make_commit(
            seq=p.seq,
            id=p.id,
            parent=p.parent,
            time=p.time,
            author=p.author,
            message=p.message,
            changes=changes,
        )
        return Batch(
            commit=commit,
            tenants=self._tenants,
            versions=_Versions(self._versions),
            ended=[latest[f["id"]] is not f for f in self._versions],
            closes=[
                (mid, version, latest[mid]["tenant"])
                for mid, version in self._base.items()
                if latest[mid]["version"] != version
            ],
            purges=self._purges,
            traces=list(self._traces.values()),
        )


class _Versions(Sequence[Memory]):
    """Buffered versions, made into Memory values one at a time as they are read.

    A list of 100,000 Memory objects would make every garbage collection during
    the write walk them all; the field dicts they wrap are not tracked.
    """

    def __init__(self, fields: list[dict[str, Any]]) -> None:
        self._fields = fields

    def __len__(self) -> int:
        return len(self._fields)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [_thawed(f) for f in self._fields[i]]
        return _thawed(self._fields[i])

    def __iter__(self) -> Iterator[Memory]:
        return map(_thawed, self._fields)


def _frozen(m: Memory) -> dict[str, Any]:
    """The fields of ``m`` as buffered: empty metadata as None, so the dict holds only
    atomic values and the garbage collector stops tracking it."""
    fields = m.__dict__
    return fields if fields["metadata"] else {**fields, "metadata": None}


def _thawed(fields: dict[str, Any]) -> Memory:
    """The Memory a buffered field dict stands for (the inverse of `_frozen`)."""
    return memory(fields if fields["metadata"] is not None else {**fields, "metadata": {}})
