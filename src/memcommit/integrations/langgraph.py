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
`memcommit.recall` and reports its score (BM25 relevance in [0, 1]); with
``index=`` the items' vectors are stored in the store under the embedding's name,
recall is hybrid, and the score is LangGraph's cosine. Needs ``memcommit[langgraph]``.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from datetime import datetime
from typing import Any

import memcommit
from memcommit.embedding.vectors import embedded as checked
from memcommit.errors import InvalidInput
from memcommit.integrations import filters, namespaces, needs
from memcommit.model import Commit, Memory
from memcommit.recall import RecallOptions, Row
from memcommit.recall.scoring.fusion import fused_scorer
from memcommit.recall.scoring.registry import DEFAULT_SCORER, make_scorer

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
        SearchOp,
        TTLConfig,
        validate_op_namespace,
    )
    from langgraph.store.base.batch import AsyncBatchedBaseStore

from memcommit.integrations.langgraph_items import (
    MARK,
    Stored,
    asks,
    check_count,
    check_text,
    cosine,
    item_mark,
)
from memcommit.integrations.langgraph_writes import ItemWriter

#: How many selected rows of a recall, or memories of a listing, a search reads at a time.
_PAGE = 100


class _Items(ItemWriter):
    """What both stores do with a batch of ops, over one tenant of a memcommit store."""

    def live(self, now: datetime, **where: Any) -> list[Stored]:
        """Items that hold at ``now`` (the tenant's, or those ``where`` selects)."""
        found = self.view.find(live=False, as_of=self.as_of, **where)
        return [s for s in map(Stored.of, found) if s is not None and s.memory.holds(now)]

    def current(self, namespace: tuple[str, ...], key: str, now: datetime) -> Stored | None:
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
        refresh: dict[str, Stored] = {}
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
        """The embedding of each search query of ``ops`` ({} without ``index=``), checked.

        Checked as recall checks a query's (`memcommit.embedding.vectors.embedded`:
        the index's size, finite, scaled to unit length, which leaves the cosine as
        it was) here, before the batch writes: a bad answer fails the batch whole.
        """
        if self.embedder is None:
            return {}
        queries = sorted({op.query for op in ops if isinstance(op, SearchOp) and asks(op)})
        matrix = checked(self.embedder.memcommit, queries, "query")
        return {query: list(map(float, row)) for query, row in zip(queries, matrix, strict=True)}

    def check(self, op: Op) -> None:
        """Refuse ``op`` (InvalidInput naming the field) if any of its fields is wrong."""
        validate_op_namespace(op)
        if isinstance(op, PutOp):
            self.writable()
            check_text("key", op.key)
            if op.value is not None:
                self.fields(op)
        elif isinstance(op, GetOp):
            check_text("key", op.key)
        elif isinstance(op, SearchOp):
            filters.check(op.filter)
            if op.query is not None and not isinstance(op.query, str):
                raise InvalidInput("query", op.query, "must be text or None")
            check_count("limit", op.limit)
            check_count("offset", op.offset)
        elif isinstance(op, ListNamespacesOp):
            for condition in op.match_conditions or ():
                if condition.match_type not in ("prefix", "suffix"):
                    raise InvalidInput(
                        "match_type", condition.match_type, "allowed: prefix, suffix"
                    )
            if op.max_depth is not None:
                check_count("max_depth", op.max_depth, least=1)
            check_count("limit", op.limit)
            check_count("offset", op.offset)
        else:
            raise InvalidInput("ops", op, "must be GetOp, PutOp, SearchOp or ListNamespacesOp")

    def search(
        self, op: SearchOp, now: datetime, vectors: Mapping[str, list[float]]
    ) -> list[tuple[Stored, float | None]]:
        """One page of the items under the prefix that pass the filter.

        With a query, the items recall selects come first, highest score first;
        the others follow unscored, in id order, as in LangGraph. Only as many
        memories are read as the page needs: the ranked ones through recall's
        index, the rest a listing page at a time. With ``index=``, hybrid recall
        picks the candidates (by words or meaning), every one is read, and they
        are shown by LangGraph's score, its cosine (recall's order breaks ties).
        """
        wanted = filters.check(op.filter)
        prefix = tuple(op.namespace_prefix)
        scopes = self.scopes(prefix)
        need = op.offset + op.limit

        def fits(s: Stored | None) -> bool:
            return (
                s is not None
                and s.memory.holds(now)
                and namespaces.has_prefix(s.namespace, prefix)
                and filters.matches(s.value, wanted)
            )

        hits: list[tuple[Stored, float | None]] = []
        scored: set[str] = set()
        if asks(op) and scopes != []:
            query = op.query or ""
            vector = vectors.get(query)
            for s, score in self.ranked(scopes, query, now, vector, need):
                if vector is None and len(hits) >= need:
                    break
                if s.indexed and fits(s):
                    hits.append((s, score))
                    scored.add(s.memory.id)
            if vector is not None:  # every candidate read: LangGraph's order, best cosine first
                hits.sort(key=lambda hit: -hit[1] if hit[1] is not None else math.inf)
        after = None
        while len(hits) < need and scopes != []:
            page = self.view.find(live=False, scopes=scopes, as_of=self.as_of, limit=_PAGE,
                                  after=after)  # fmt: skip
            for s in map(Stored.of, page):
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
    ) -> Iterator[tuple[Stored, float | None]]:
        """The items recall selects for ``query`` in ``scopes``, highest score first.

        Recall packs at most ``first`` at once (at least one page), then four
        times as many while the caller reads on: the ranking is the same at every
        cap, so each round only adds the rows after the last one. A search that
        fills its page early reads no more memories than it shows.
        """
        scorer = None
        if self.embedder is not None:
            scorer = fused_scorer(self.embedder.memcommit, make_scorer(DEFAULT_SCORER))
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
                stored = Stored.of(row.memory)
                if stored is not None:
                    yield stored, row.score if vector is None else similarity(stored, row, vector)
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

    # -- history -------------------------------------------------------------------

    def history(self, namespace: tuple[str, ...], key: str) -> list[tuple[Memory, Item]]:
        check_text("key", key)
        found = self.view.find(live=False, scopes=[namespaces.scope_of(namespace)], key=key)
        out = []
        for m in found:
            if item_mark(m) is None and m.status != "purged":
                continue
            for version in self.view.history(m.id, as_of=self.as_of):
                stored = Stored.of(version)
                if stored is not None:
                    out.append((version, stored.item()))
        return out

    def log(self, prefix: Sequence[str], limit: int | None) -> list[Commit]:
        if limit is not None:
            check_count("limit", limit)
        ids = {
            m.id
            for m in self.view.find(live=False, as_of=self.as_of)
            if (item_mark(m) is not None or m.status == "purged")
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
    puts store vectors, hybrid recall picks a query's candidates, and the score
    is the best cosine between the query's embedding and the item's; without it,
    recall's lexical relevance. ``ttl`` is LangGraph's
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


def similarity(stored: Stored, row: Row, vector: list[float]) -> float | None:
    """LangGraph's score of a ranked item: its best cosine with the query's embedding.

    An item of several texts keeps a vector per text, as LangGraph scores them; an
    item of one text has only its stored vector, whose cosine is the dense part of
    the row (None: no vector yet, the item was found by its words).
    """
    if stored.vectors:
        return max(cosine(vector, v) for v in stored.vectors)
    dense = (row.components or {}).get("dense")
    return None if dense is None else float(dense)


__all__ = ["MARK", "AsyncMemcommitStore", "MemcommitStore"]
