"""A commit's buffer: what a transaction holds between its first change and its write.

`Buffer` keeps each id's newest version (stored or pending), the versions and
changes made so far, and turns them into one `Batch` when the block ends. It
reads stored memories through the backend once per id, and holds every version
as a plain field dict (`frozen`), so a bulk commit of 100,000 memories costs the
garbage collector nothing. The operations on top live in `transaction`,
`tier_moves` and `trace_steps`.
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
from memcommit.store.records import change, fields_of, memory
from memcommit.store.records import commit as make_commit


@dataclass(frozen=True)
class Pending:
    """The commit a transaction will land: its place in the store's order, and its words.

    Known before any change is made, except in an unordered commit (`Buffer.pending`),
    where the seq, id, parent and time are as this process expects them until the
    commit is ordered.
    """

    seq: int
    id: str
    parent: str | None
    time: datetime
    author: str
    message: str


#: The most new memories a block makes before it is ordered: past them a bulk commit takes
#: the writers' lock, rather than keep every memory it returned (`Buffer.ordered`).
UNORDERED_MOST = 64


class Buffer:
    """The state of one commit in the making, and the lookups every operation shares."""

    def __init__(
        self,
        backend: Backend,
        pending: Pending,
        *,
        tenant: str | None,
        max_content_bytes: int,
        order: Callable[[Buffer], None] | None = None,
    ) -> None:
        self._only = tenant  # set for a tenant view: every read and write stays in it
        self._backend = backend
        self._limit = max_content_bytes
        self._pending = pending
        # An unordered commit (see `pending`): ``order`` takes the writers' lock, and the
        # memories its adds returned are kept until then, to take the final seq and time.
        self._order = order
        self._made: list[Memory] = []
        self.result: Commit | None = None
        # Buffers hold each version's field dict (see `frozen`) and each change as a
        # tuple, not objects: atomic-valued dicts and tuples are untracked by the garbage
        # collector, so a bulk commit of 100,000 memories does not make every collection
        # walk them all.
        self._latest: dict[str, dict[str, Any]] = {}  # id -> newest version, stored or pending
        self._base: dict[str, int] = {}  # id -> version current before this commit
        self._versions: list[dict[str, Any]] = []
        self._changes: list[tuple[str, str, int | None, dict[str, Any] | None]] = []
        self._tenants: list[str | None] = []
        self._purges: list[str] = []
        self._unembed: dict[tuple[str, str], None] = {}  # (tenant, id): content changed
        self._stored_metadata: dict[
            str, dict[str, Mapping[str, Any]]
        ] = {}  # tenant -> id -> metadata
        self._traces: dict[str, TraceRow] = {}
        self.deferred: list[Callable[[], Any]] = []
        self.closed = False  # set when the block ends: later calls would be lost

    @property
    def pending(self) -> Pending:
        """The commit this block lands: its seq, id, parent and time.

        An unordered commit (PostgreSQL, no ``now=``: `Core.transaction`) is ordered
        by the server as it lands, after whatever other writers landed first; asking
        for its seq or time inside the block orders it at once instead (the writers'
        lock, as every read of the store inside the block does).
        """
        self._order_first()
        return self._pending

    @pending.setter
    def pending(self, value: Pending) -> None:
        self._pending = value

    def _order_first(self) -> None:
        """Order the commit if it is still unordered: before it changes a memory that
        exists (stored, or added in this block), so the new version carries the final
        seq from the start, or before its seq is asked for. After its block has ended
        the store orders nothing (`Core._order`)."""
        if self._order is not None:
            self._order(self)

    @property
    def unordered(self) -> bool:
        """Whether the commit's place in the store's order is still to be given."""
        return self._order is not None

    @property
    def draft(self) -> Pending:
        """The commit as it stands, without ordering it (`pending` orders it)."""
        return self._pending

    def ordered(self, pending: Pending) -> None:
        """Give the commit its place: the versions made so far take its seq and time.

        Until it is ordered a block only adds (anything else asks for `pending` or
        reads the store, which orders it first), so every version made so far is a
        new memory's first, whose commit fields are all this commit's; the memories
        `add` returned take them too (they are the caller's: a memory held in a set
        or as a dict key inside an unordered block may change its hash here).
        """
        old, self._pending, self._order = self._pending, pending, None
        made, self._made = self._made, []
        if (old.seq, old.time) == (pending.seq, pending.time):
            return
        moved = {
            "created_at": pending.time,
            "created_commit": pending.seq,
            "updated_at": pending.time,
            "updated_commit": pending.seq,
        }
        for fields in self._versions:
            fields.update(moved)
        for m in made:
            m.__dict__.update(moved)

    @property
    def message(self) -> str:
        """The commit's message; assign ``tx.message = ...`` inside the block to change it."""
        return self._pending.message

    @message.setter
    def message(self, value: str) -> None:
        self._check_open()
        self._pending = replace(self._pending, message=inputs.message(value))

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
        """Version 1 of a new memory, every field checked (the arguments are the caller's).

        Made with the commit as it stands: only `add` makes one before the commit is
        ordered (`pending`), so only its memories are kept to take the final seq.
        """
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
        p = self._pending  # after the read above, which orders the commit
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

    # -- bookkeeping -------------------------------------------------------------

    def _visible(self, tenant: str) -> bool:
        return self._only is None or tenant == self._only

    def _tenant_of(self, tenant: Any) -> str:
        """The tenant a new memory is written to (a view's own, unless named)."""
        if tenant is None:
            return v.tenant_name(self._only or "default")
        checked = v.tenant_name(tenant)
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
        return Versions([self._latest[i] for i in self._load(items)])

    def read_unchanged(self, memories: Iterable[Memory]) -> Sequence[Memory]:
        """`read` for memories a commit builds on as they were read (outside the commit).

        A summary written from them must carry only text that still stands: the
        version of each that was current before this commit must be the one
        given. Purged names the first one another writer purged since it was
        read, Conflict the first one changed otherwise; all are read in one query.
        """
        given = list(memories)
        ids = self._load(given)
        for m in given:
            fields = self._latest[m.id]
            current = self._base.get(m.id, fields["version"])
            if current != m.version:
                if fields["status"] == "purged":
                    raise Purged(m.id)
                raise Conflict(m.id, m.version, current)
        return Versions([self._latest[i] for i in ids])

    def _load(self, items: Iterable[str | Memory]) -> list[str]:
        """The ids of ``items``, each with its newest version in the buffer (see `read`)."""
        self._order_first()
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
        self._order_first()
        known = self._latest.get(id) if isinstance(id, str) else None
        cur = None if known is None else thawed(known)
        if cur is None:
            v.text(field, id)
            cur = self._stored(id)
            if cur is None or not self._visible(cur.tenant):
                raise NotFound(field, id)
            self._latest[id] = frozen(cur)
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
    def purged(self) -> list[tuple[str, str]]:
        """(tenant, id) of each memory the block has purged so far, in order."""
        return [(str(self._latest[id]["tenant"]), id) for id in self._purges]

    @property
    def changed(self) -> bool:
        """Whether the block changed anything so far (if not, leaving it lands no commit)."""
        return bool(self._changes)

    def _check_open(self) -> None:
        if self.closed:
            raise InvalidInput("tx", self._pending.id, "this commit's block has ended")

    def _record(self, m: Memory, op: str, detail: dict[str, Any] | None) -> None:
        self._check_open()
        fields = frozen(m)
        if self._order is not None:  # only adds run unordered (`_order_first`)
            self._made.append(m)
        self._latest[m.id] = fields
        self._versions.append(fields)
        self._changes.append((op, m.id, m.version, detail))
        self._tenants.append(m.tenant)

    def batch(self) -> Batch:
        """Every row write of this commit, for `Backend.write`."""
        p = self._pending
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
            versions=Versions(self._versions),
            ended=[latest[f["id"]] is not f for f in self._versions],
            closes=[
                (mid, version, latest[mid]["tenant"])
                for mid, version in self._base.items()
                if latest[mid]["version"] != version
            ],
            purges=self._purges,
            traces=list(self._traces.values()),
            unembed=list(self._unembed),
        )


class Versions(Sequence[Memory]):
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
            return [thawed(f) for f in self._fields[i]]
        return thawed(self._fields[i])

    def __iter__(self) -> Iterator[Memory]:
        return map(thawed, self._fields)


def frozen(m: Memory) -> dict[str, Any]:
    """The fields of ``m`` as buffered: empty metadata as None, so the dict holds only
    atomic values and the garbage collector stops tracking it."""
    fields = m.__dict__
    return fields if fields["metadata"] else {**fields, "metadata": None}


def thawed(fields: dict[str, Any]) -> Memory:
    """The Memory a buffered field dict stands for (the inverse of `frozen`)."""
    return memory(fields if fields["metadata"] is not None else {**fields, "metadata": {}})
