"""A LangGraph ``BaseStore`` whose every write is a memcommit commit.

    import memcommit
    from memcommit.integrations.langgraph import MemcommitStore

    store = MemcommitStore(memcommit.open("memory.db"), tenant="acme")
    store.put(("user_1", "memories"), "food", {"text": "likes ramen"})
    store.search(("user_1",), query="what food does the user like")   # recall, scored
    store.history(("user_1", "memories"), "food")                       # every version
    store.as_of(commit).get(("user_1", "memories"), "food")            # the past

One store is one memcommit tenant (hard isolation); a namespace is a scope
(`memcommit.integrations.namespaces`); an item is a memory whose metadata holds
its key and value. A put is a commit: an overwrite is a new version of the same
memory, a delete invalidates it (it stays in history; `purge` erases it for
good). ``ttl`` sets the memory's ``valid_to``; a read that refreshes TTLs moves
it on, in a commit of its own. Search with a query goes through
`memcommit.recall` and reports its score (BM25 relevance in [0, 1], or the cosine
of the embedding configured with ``index=``). Needs ``memcommit[langgraph]``.
"""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import memcommit
from memcommit.errors import InvalidInput
from memcommit.integrations import filters, namespaces, needs
from memcommit.integrations.marks import mark_of
from memcommit.model import Commit, Memory
from memcommit.recall import RecallOptions

with needs("langgraph", __name__):  # the framework: a clear error without its extra
    from langgraph.store.base import (
        BaseStore,
        GetOp,
        IndexConfig,
        Item,
        ListNamespacesOp,
        Op,
        PutOp,
        Result,
        SearchItem,
        SearchOp,
        TTLConfig,
        ensure_embeddings,
        get_text_at_path,
        tokenize_path,
        validate_op_namespace,
    )
    from langgraph.store.base.batch import AsyncBatchedBaseStore

#: The metadata key of a LangGraph item's own fields (key, value, indexed, ttl, vectors).
MARK = "langgraph"
#: How many selected rows of a recall, or memories of a listing, a search reads at a time.
_PAGE = 100


def _mark(memory: Memory) -> Mapping[str, Any] | None:
    """The item fields of ``memory``, or None when it is not an item of this adapter."""
    return mark_of(
        memory,
        MARK,
        key="key",
        required={"key": str, "value": Mapping, "indexed": bool},
        optional={"ttl": (int, float), "vectors": list},
    )


def _utc_now() -> datetime:
    return datetime.now(timezone.utc)


@dataclass(frozen=True)
class _Stored:
    """One item as its memory holds it."""

    memory: Memory
    namespace: tuple[str, ...]
    key: str
    value: dict[str, Any]
    indexed: bool
    ttl: float | None
    vectors: list[list[float]]

    @classmethod
    def of(cls, memory: Memory) -> _Stored | None:
        mark = _mark(memory)
        if mark is None or memory.status == "purged":
            return None
        return cls(
            memory,
            namespaces.namespace_of(memory.scope),
            mark["key"],
            dict(mark["value"]),
            mark["indexed"],
            mark.get("ttl"),
            mark.get("vectors") or [],
        )

    def item(self, score: float | None = None, *, search: bool = False) -> Item:
        m = self.memory
        if search:
            return SearchItem(
                self.namespace, self.key, self.value, m.created_at, m.updated_at, score
            )
        return Item(
            value=self.value,
            key=self.key,
            namespace=self.namespace,
            created_at=m.created_at,
            updated_at=m.updated_at,
        )


class _Embedder:
    """The ``index=`` configuration: which fields to embed, and the embedding."""

    def __init__(self, index: IndexConfig) -> None:
        if not isinstance(index, Mapping) or "embed" not in index:
            raise InvalidInput("index", index, "must be a mapping with 'embed' (and 'dims')")
        self.config = dict(index)
        self.embeddings = ensure_embeddings(index["embed"])
        self.fields = list(index.get("fields") or ["$"])

    def texts(self, value: dict[str, Any], index: Sequence[str] | None) -> list[str]:
        paths = self.fields if index is None else list(index)
        texts: list[str] = []
        for path in paths:
            texts += get_text_at_path(value, path if path == "$" else tokenize_path(path))
        return [t for t in texts if t]

    def vectors(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [list(map(float, v)) for v in self.embeddings.embed_documents(texts)]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _leaves(value: Any) -> Iterator[str]:
    """Every string in a JSON value, depth first (what lexical search reads)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for inner in value.values():
            yield from _leaves(inner)
    elif isinstance(value, (list, tuple)):
        for inner in value:
            yield from _leaves(inner)


class _Items:
    """What both stores do with a batch of ops, over one tenant of a memcommit store."""

    def __init__(
        self,
        store: memcommit.Store,
        *,
        tenant: str,
        index: IndexConfig | None,
        clock: Callable[[], datetime] | None,
        author: str,
        kind: str,
        as_of: Any = None,
    ) -> None:
        if not isinstance(store, memcommit.Store):
            raise InvalidInput("store", store, "must be a memcommit.Store (memcommit.open(...))")
        self.store = store
        self.view = store.tenant(tenant)
        self.embedder = None if index is None else _Embedder(index)
        self.clock = clock
        self.author = author
        self.kind = kind
        self.as_of = as_of

    # -- reading -------------------------------------------------------------------

    def now(self) -> datetime:
        """The moment reads are at: the as_of commit's time, or the clock's."""
        if isinstance(self.as_of, datetime):
            return self.as_of
        if self.as_of is not None:
            return self.store.show(self.as_of).time
        return (self.clock or _utc_now)()

    def live(self, now: datetime, **where: Any) -> list[_Stored]:
        """Items that hold at ``now`` (the tenant's, or those ``where`` selects)."""
        found = self.view.find(live=False, as_of=self.as_of, **where)
        return [s for s in map(_Stored.of, found) if s is not None and s.memory.holds(now)]

    def current(self, namespace: tuple[str, ...], key: str, now: datetime) -> _Stored | None:
        found = self.live(now, scopes=[namespaces.scope_of(namespace)], key=key)
        return found[0] if found else None

    def run(self, ops: Iterable[Op]) -> list[Result]:
        """Every op's result, in order; puts land first, in one commit, then the reads.

        Every op is checked, and every query embedded, before anything is
        written, so a batch with one bad op (of any caller, in the async store)
        writes nothing.
        """
        ops = list(ops)
        for op in ops:
            self.check(op)
        vectors = self.embedded(ops)
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
        if puts:
            self.write(list(puts.values()))
        now = self.now()
        results: list[Result] = []
        refresh: dict[str, _Stored] = {}
        for op in ops:
            if isinstance(op, GetOp):
                found = self.current(op.namespace, op.key, now)
                results.append(None if found is None else found.item())
                if found is not None and op.refresh_ttl:
                    refresh[found.memory.id] = found
            elif isinstance(op, SearchOp):
                hits = self.search(op, now, vectors)
                results.append([s.item(score, search=True) for s, score in hits])
                if op.refresh_ttl:
                    refresh.update((s.memory.id, s) for s, _ in hits)
            elif isinstance(op, ListNamespacesOp):
                results.append(self.namespaces(op, now))
            else:
                results.append(None)
        self.refresh([s for s in refresh.values() if s.ttl is not None])
        return results

    def embedded(self, ops: list[Op]) -> dict[str, list[float]]:
        """The embedding of each search query of ``ops`` ({} without ``index=``)."""
        if self.embedder is None:
            return {}
        queries = {op.query for op in ops if isinstance(op, SearchOp) and _asks(op)}
        embed = self.embedder.embeddings.embed_query
        return {query: list(map(float, embed(query))) for query in sorted(queries)}

    def check(self, op: Op) -> None:
        """Refuse ``op`` (InvalidInput naming the field) if any of its fields is wrong."""
        validate_op_namespace(op)
        if isinstance(op, PutOp):
            self.writable()
            _text("key", op.key)
            if op.value is not None:
                self.fields(op)
        elif isinstance(op, GetOp):
            _text("key", op.key)
        elif isinstance(op, SearchOp):
            filters.check(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInput("query", op.query, "must be text or None")
            _count("limit", op.limit)
            _count("offset", op.offset)
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                if condition.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(
                        "match_type", condition.match_type, "allowed: prefix, suffix"
                    )
            if op.max_depth is not None:
                _count("max_depth", op.max_depth, least=1)
            _count("limit", op.limit)
            _count("offset", op.offset)
        else:
            raise InvalidInput("ops", op, "must be GetOp, PutOp, SearchOp or ListNamespacesOp")

    def search(
        self, op: SearchOp, now: datetime, vectors: Mapping[str, list[float]]
    ) -> list[tuple[_Stored, float | None]]:
        """One page of the items under the prefix that pass the filter.

        With a query, the items recall selects come first, highest score first;
        the others follow unscored, in id order, as in LangGraph. Only as many
        memories are read as the page needs: the ranked ones through recall's
        index, the rest a listing page at a time.
        """
        wanted = filters.check(op.filter)
        prefix = tuple(op.namespace_prefix)
        scopes = self.scopes(prefix)
        need = op.offset + op.limit

        def fits(s: _Stored | None) -> bool:
            return (
                s is not None
                and s.memory.holds(now)
                and namespaces.has_prefix(s.namespace, prefix)
                and filters.matches(s.value, wanted)
            )

        hits: list[tuple[_Stored, float | None]] = []
        scored: set[str] = set()
        if _asks(op) and scopes != []:
            query = op.query or ""
            for s, score in self.ranked(scopes, query, now, vectors.get(query), need):
                if len(hits) >= need:
                    break
                if s.indexed and fits(s):
                    hits.append((s, score))
                    scored.add(s.memory.id)
        after = None
        while len(hits) < need and scopes != []:
            page = self.view.find(live=False, scopes=scopes, as_of=self.as_of, limit=_PAGE,
                                  after=after)  # fmt: skip
            for s in map(_Stored.of, page):
                if len(hits) < need and s is not None and s.memory.id not in scored and fits(s):
                    hits.append((s, None))
            if len(page) < _PAGE:
                break
            after = page[-1].id
        return hits[op.offset : need]

    def scopes(self, prefix: tuple[str, ...]) -> list[str] | None:
        """The tenant's scopes under ``prefix`` (None: all of them, or unknown as of a commit).

        Read from the per-scope counts (one GROUP BY), never from the items.
        """
        if not prefix or self.as_of is not None:
            return None
        found = {scope for _, _, scope in self.view.tier_counts()}
        return sorted(
            scope
            for scope in found
            if namespaces.has_prefix(namespaces.namespace_of(scope), prefix)
        )

    def ranked(
        self,
        scopes: list[str] | None,
        query: str,
        now: datetime,
        vector: list[float] | None,
        first: int,
    ) -> Iterator[tuple[_Stored, float | None]]:
        """The items recall selects for ``query`` in ``scopes``, highest score first.

        Recall packs at most ``first`` at once (at least one page), then four
        times as many while the caller reads on: the ranking is the same at every
        cap, so each round only adds the rows after the last one. A search that
        fills its page early reads no more memories than it shows.
        """
        scorer = None
        if vector is not None:

            def scorer(memory: Memory, _query: Any) -> float | None:
                vectors = (_mark(memory) or {}).get("vectors") or []
                return max((_cosine(vector, v) for v in vectors), default=None)

        cap, done = max(first, _PAGE), 0
        options = RecallOptions(
            scopes=tuple(scopes) if scopes is not None else None,
            tiers=None,
            scorer=scorer,
            latest_per_key=False,  # the key is the item's, versions are the memory's own
            max_records=cap,
            as_of=self.as_of,
            now=now,
        )
        while True:
            ctx = self.view.recall(query, options)
            for row in ctx.explanation.page(done, None, outcome="selected"):
                stored = _Stored.of(row.memory)
                if stored is not None:
                    yield stored, row.score
            if len(ctx.selected) < cap:
                return
            cap, done = cap * 4, len(ctx.selected)
            options = options.replace(max_records=cap)

    def namespaces(self, op: ListNamespacesOp, now: datetime) -> list[tuple[str, ...]]:
        found = {s.namespace for s in self.live(now)}
        for condition in op.match_conditions or ():
            at_end = condition.match_type == "suffix"
            found = {ns for ns in found if namespaces.matches(ns, condition.path, at_end=at_end)}
        return namespaces.listing(found, max_depth=op.max_depth, limit=op.limit, offset=op.offset)

    # -- writing -------------------------------------------------------------------

    def writable(self) -> None:
        if self.as_of is not None:
            raise InvalidInput("as_of", self.as_of, "a store read as of a commit cannot write")

    def write(self, puts: list[PutOp]) -> None:
        """Every put and delete of a batch in one commit (none when nothing changes).

        The items are read inside the commit, under the writers' lock, so a
        concurrent writer's put of the same key is seen, never duplicated.
        """
        self.writable()
        fields = {(op.namespace, op.key): self.fields(op) for op in puts if op.value is not None}
        with self.view.commit(message=_message(puts), author=self.author,
                              now=self._moment()) as tx:  # fmt: skip
            at = tx.pending.time
            found = self.newest({namespaces.scope_of(op.namespace) for op in puts})
            for op in puts:
                scope = namespaces.scope_of(op.namespace)
                old = found.get((scope, op.key))
                if op.value is None:
                    if old is not None and old.memory.holds(at):
                        tx.invalidate(old.memory.id)
                    continue
                content, mark = fields[(op.namespace, op.key)]
                valid_to = None if op.ttl is None else _expiry(at, op.ttl)
                if old is None or old.memory.status != "active":
                    tx.add(content, kind=self.kind, scope=scope, key=op.key,
                           metadata={MARK: mark}, valid_to=valid_to)  # fmt: skip
                else:
                    tx.update(old.memory.id, content=content, metadata={MARK: mark},
                              valid_to=valid_to)  # fmt: skip

    def newest(self, scopes: set[str]) -> dict[tuple[str, str], _Stored]:
        """The newest memory of each item in ``scopes``, whatever its state."""
        found = self.view.find(live=False, scopes=sorted(scopes))
        return {(s.memory.scope, s.key): s for s in map(_Stored.of, found) if s is not None}

    def fields(self, op: PutOp) -> tuple[str, dict[str, Any]]:
        """The memory content and metadata that hold ``op``'s item."""
        if not isinstance(op.value, Mapping):
            raise InvalidInput("value", op.value, "must be a mapping (a JSON object) or None")
        if op.ttl is not None and (
            isinstance(op.ttl, bool)
            or not isinstance(op.ttl, (int, float))
            or not math.isfinite(op.ttl)
            or op.ttl <= 0
        ):
            raise InvalidInput("ttl", op.ttl, "must be finite minutes > 0, or None")
        if op.ttl is not None:
            _expiry(self.now(), op.ttl)
        _text("key", op.key)
        value = dict(op.value)
        try:
            json.dumps(value)
        except TypeError as error:
            raise InvalidInput("value", op.value, f"must be JSON: {error}") from None
        indexed = op.index is not False
        mark: dict[str, Any] = {"key": op.key, "value": value, "indexed": indexed, "ttl": op.ttl}
        if self.embedder is not None:
            texts = self.embedder.texts(value, None if op.index in (None, False) else op.index)
            if indexed:
                mark["vectors"] = self.embedder.vectors(texts)
        else:
            texts = list(_leaves(value))
        content = "\n".join(t for t in texts if t.strip()) or json.dumps(
            value, sort_keys=True, ensure_ascii=False
        )
        return content, mark

    def refresh(self, items: list[_Stored]) -> None:
        """Move the expiry of items read with refresh_ttl, in one commit (none if none moves).

        The items are read again inside the commit: one that a concurrent writer
        changed or deleted since the read is left as that writer made it.
        """
        if not items or self.as_of is not None:
            return
        with self.view.commit(message="langgraph: refresh ttl", author=self.author,
                              now=self._moment()) as tx:  # fmt: skip
            at = tx.pending.time
            newest = self.newest({s.memory.scope for s in items})
            for s in items:
                now = newest.get((s.memory.scope, s.key))
                if now is None or now.memory.id != s.memory.id or now.ttl is None:
                    continue
                if now.memory.version != s.memory.version or not now.memory.holds(at):
                    continue
                tx.update(s.memory.id, valid_to=_expiry(at, now.ttl, clamp=True))

    def purge(self, namespace: tuple[str, ...], key: str) -> None:
        """Erase every memory that ever held the item (tombstones stay in history)."""
        self.writable()
        found = self.view.find(live=False, scopes=[namespaces.scope_of(namespace)], key=key)
        mine = [m for m in found if _mark(m) is not None]
        if not mine:
            return
        with self.view.commit(message=f"langgraph: purge {_where(namespace, key)}",
                              author=self.author, now=self._moment()) as tx:  # fmt: skip
            for m in mine:
                tx.purge(m.id)

    def _moment(self) -> datetime | None:
        return None if self.clock is None else self.clock()

    # -- history -------------------------------------------------------------------

    def history(self, namespace: tuple[str, ...], key: str) -> list[tuple[Memory, Item]]:
        _text("key", key)
        found = self.view.find(live=False, scopes=[namespaces.scope_of(namespace)], key=key)
        out = []
        for m in found:
            if _mark(m) is None and m.status != "purged":
                continue
            for version in self.view.history(m.id, as_of=self.as_of):
                stored = _Stored.of(version)
                if stored is not None:
                    out.append((version, stored.item()))
        return out

    def log(self, prefix: Sequence[str], limit: int | None) -> list[Commit]:
        if limit is not None:
            _count("limit", limit)
        ids = {
            m.id
            for m in self.view.find(live=False, as_of=self.as_of)
            if (_mark(m) is not None or m.status == "purged")
            and namespaces.has_prefix(namespaces.namespace_of(m.scope), prefix)
        }
        out = []
        for commit in self.view.log(as_of=self.as_of):
            changes = tuple(ch for ch in commit.changes if ch.memory_id in ids)
            if changes:
                out.append(
                    Commit(commit.seq, commit.id, commit.parent, commit.time, commit.author,
                           commit.message, changes)
                )  # fmt: skip
                if limit is not None and len(out) >= limit:
                    break
        return out


def _asks(op: SearchOp) -> bool:
    """True when the search has a query to rank by (not None, not blank)."""
    return bool(op.query and op.query.strip())


def _text(field: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(field, value, "must be non-empty text")


def _count(field: str, value: Any, *, least: int = 0) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise InvalidInput(field, value, f"must be an int >= {least}")


#: The latest expiry a datetime can hold; a refresh past it stops there.
_LAST = datetime.max.replace(tzinfo=timezone.utc)


def _expiry(at: datetime, ttl: float, *, clamp: bool = False) -> datetime:
    """``at`` plus ``ttl`` minutes; InvalidInput past the last datetime (unless ``clamp``)."""
    try:
        return at + timedelta(minutes=ttl)
    except OverflowError:
        if clamp:
            return _LAST
        raise InvalidInput(
            "ttl", ttl, "must be finite minutes that end before year 10000"
        ) from None


def _where(namespace: tuple[str, ...], key: str) -> str:
    return f"{namespaces.scope_of(namespace)}/{key}"


def _message(puts: list[PutOp]) -> str:
    if len(puts) == 1:
        op = puts[0]
        verb = "delete" if op.value is None else "put"
        return f"langgraph: {verb} {_where(op.namespace, op.key)}"
    deletes = sum(op.value is None for op in puts)
    return f"langgraph: {len(puts) - deletes} puts, {deletes} deletes"


class _MemcommitExtras:
    """What LangGraph's own stores lack: history, the log of a namespace, reads as of a commit."""

    _items: _Items

    def history(self, namespace: tuple[str, ...], key: str) -> list[Item]:
        """Every version of the item, oldest first, across deletes and re-puts."""
        return [item for _, item in self._items.history(tuple(namespace), key)]

    def versions(self, namespace: tuple[str, ...], key: str) -> list[Memory]:
        """The memcommit versions behind `history` (status, validity, commit seq)."""
        return [memory for memory, _ in self._items.history(tuple(namespace), key)]

    def log(self, namespace: Sequence[str] = (), *, limit: int | None = None) -> list[Commit]:
        """Commits that changed items under ``namespace`` (a prefix), newest first.

        Each commit lists only its changes to those items.
        """
        return self._items.log(tuple(namespace), limit)

    def purge(self, namespace: tuple[str, ...], key: str) -> None:
        """Erase the item's content for good, in every version (a delete only invalidates)."""
        self._items.purge(tuple(namespace), key)

    @property
    def memcommit(self) -> memcommit.TenantView:
        """The memcommit tenant view under this store (recall, find, log, tiers)."""
        return self._items.view


def _options(
    store: memcommit.Store,
    tenant: str,
    index: IndexConfig | None,
    clock: Callable[[], datetime] | None,
    author: str,
    kind: str,
) -> dict[str, Any]:
    return {"store": store, "tenant": tenant, "index": index, "clock": clock,
            "author": author, "kind": kind}  # fmt: skip


class MemcommitStore(_MemcommitExtras, BaseStore):
    """A LangGraph store over one tenant of a memcommit store (SQLite or PostgreSQL).

    ``index`` is LangGraph's IndexConfig (``embed``, ``dims``, ``fields``): with it,
    a query's score is the best cosine between the query's embedding and the
    item's; without it, recall's lexical relevance. ``ttl`` is LangGraph's
    TTLConfig (``default_ttl`` in minutes, ``refresh_on_read``). ``clock`` gives
    the time for commits and expiry (inject it in tests; default: UTC now).
    """

    supports_ttl = True

    def __init__(
        self,
        store: memcommit.Store,
        *,
        tenant: str = "default",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        author: str = "langgraph",
        kind: str = "fact",
    ) -> None:
        self._items = _Items(**_options(store, tenant, index, clock, author, kind))
        self.index_config = self._items.embedder.config if self._items.embedder else None
        self.embeddings = self._items.embedder.embeddings if self._items.embedder else None
        self.ttl_config = ttl

    @classmethod
    @contextmanager
    def from_conn_string(cls, target: Any, **kw: Any) -> Iterator[MemcommitStore]:
        """Open the memcommit store at ``target`` (path or postgresql:// URL) for the block."""
        options = {k: kw.pop(k) for k in ("schema",) if k in kw}
        with memcommit.open(target, **options) as store:
            yield cls(store, **kw)

    def setup(self) -> None:
        """Nothing to do: memcommit migrates its schema when the store opens."""

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops: every put and delete in one commit, then the reads, results in order."""
        return self._items.run(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread, so the event loop never waits on the database."""
        return await asyncio.to_thread(self._items.run, list(ops))

    def as_of(self, commit: Any) -> MemcommitStore:
        """A read-only store of the items as they stood at ``commit`` (seq, id, Commit, time)."""
        snapshot = object.__new__(type(self))
        snapshot.__dict__.update(self.__dict__)
        items = self._items
        snapshot._items = _Items(
            store=items.store, tenant=items.view.name, index=None,
            clock=items.clock, author=items.author, kind=items.kind, as_of=commit,
        )  # fmt: skip
        snapshot._items.embedder = items.embedder
        return snapshot


class AsyncMemcommitStore(_MemcommitExtras, AsyncBatchedBaseStore):
    """`MemcommitStore` for async graphs: concurrent calls are batched into one commit.

    Create it inside a running event loop. Its synchronous methods refuse to run
    on that loop's thread (they would block it); call them from other threads.
    """

    supports_ttl = True

    def __init__(
        self,
        store: memcommit.Store,
        *,
        tenant: str = "default",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        author: str = "langgraph",
        kind: str = "fact",
    ) -> None:
        super().__init__()
        self._items = _Items(**_options(store, tenant, index, clock, author, kind))
        self.index_config = self._items.embedder.config if self._items.embedder else None
        self.embeddings = self._items.embedder.embeddings if self._items.embedder else None
        self.ttl_config = ttl

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, target: Any, **kw: Any) -> Any:
        """Open the memcommit store at ``target`` for the ``async with`` block."""
        options = {k: kw.pop(k) for k in ("schema",) if k in kw}
        store = await asyncio.to_thread(memcommit.open, target, **options)
        try:
            yield cls(store, **kw)
        finally:
            await asyncio.to_thread(store.close)

    async def setup(self) -> None:
        """Nothing to do: memcommit migrates its schema when the store opens."""

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Run the ops on a worker thread: puts in one commit, then the reads."""
        return await asyncio.to_thread(self._items.run, list(ops))
