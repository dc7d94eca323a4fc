"""What the workbench looks at: the teaching bank, or a real store (read-only).

Both run memcommit's own recall() and hand its Context to ``view``; they differ
only in where the memories come from and which controls the page offers.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections import Counter, OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import datetime, timezone
from typing import Any, Protocol

from memcommit.errors import InvalidInput
from memcommit.model import KINDS, TIERS
from memcommit.recall import recall
from memcommit.store import StoreLike, TenantViewLike, ViewLike
from memcommit.tiers.stats import Counts, TierStats
from memcommit.workbench import bank
from memcommit.workbench.api import (
    DEFAULT_PAGE_SIZE,
    SCORERS,
    Defaults,
    RecallRequest,
    choice,
    integer,
    parse_bank,
    parse_live,
    recall_options,
)
from memcommit.workbench.view import (
    ExplainedTable,
    RowTable,
    Table,
    natural_key,
    other_tenant_row,
    rows_json,
    selection_json,
)

Params = Mapping[str, Sequence[str]]

#: Where the page starts over the bank: the first walkthrough with room for both procedures.
BANK_DEFAULTS = Defaults(
    tenant="team-a",
    store="procedural",
    previous=True,
    max_age=168,
    latest=False,
    recency=0.0,
    budget=40,
    max_records=3,
    question=bank.QUESTIONS[0].id,
    scorer="tfidf",  # the seed's formula, which the bank's walkthroughs explain
)


class WorkbenchSource(Protocol):
    """Answers the page's API calls."""

    mode: str

    def config(self, params: Params) -> dict[str, Any]: ...
    def recall(self, params: Params) -> dict[str, Any]: ...
    def rows(self, params: Params) -> dict[str, Any]: ...
    def log(self, params: Params) -> dict[str, Any]: ...
    def tiers(self, params: Params) -> dict[str, Any]: ...
    def close(self) -> None: ...


def run_recall(
    store: ViewLike, request: RecallRequest, *, session: str | None, now: datetime
) -> Any:
    """memcommit's recall() with the page's settings: the one place ranking happens."""
    return recall(store, request.query, recall_options(request, session=session, now=now))


def config_json(mode: str, tenants: Sequence[Mapping[str, str]], defaults: Defaults) -> dict:
    """What the page needs to draw its controls."""
    return {
        "mode": mode,
        "tenants": list(tenants),
        "defaults": asdict(defaults),
        "kinds": list(KINDS),
        "tiers": list(TIERS),
        "scorers": list(SCORERS),
    }


@dataclass
class Computed:
    """One recall() and, once the table asked, its table."""

    context: Any
    now: datetime
    recall_ms: float
    table: Table | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class RecallSource(ABC):
    """Runs recall() for the page and keeps the last few Contexts, so paging never recomputes.

    One lock serializes recall() and the cache. The table (counts over every
    memory, then a page of rows) runs under its Context's own lock instead: a
    new selection never waits for an older table. Both only read.
    """

    mode = "bank"
    CACHE_SIZE = 4

    def __init__(self, store: StoreLike) -> None:
        self.store = store
        self.cache: OrderedDict[RecallRequest, Computed] = OrderedDict()
        self.lock = threading.RLock()
        self.tenants = list(store.tenants())
        self.seen = store.tip
        # recall() follows the store's commits; so does everything cached here.
        self.unsubscribe = store.on_commit(self.forget)

    def forget(self, commit: Any = None) -> None:
        """Drop cached Contexts and tenants: a commit landed."""
        with self.lock:
            self.cache.clear()
            self.tenants = list(self.store.tenants())
            self.seen = self.store.tip

    def follow(self) -> None:
        """`forget` when another process or host committed since (``on_commit`` hears only
        this Store's commits), or a commit seen was lost and its seq taken again: a cached
        Context must not show what a purge erased."""
        with self.lock:
            if self.store.tip != self.seen:
                self.forget()

    @abstractmethod
    def config(self, params: Params) -> dict[str, Any]:
        """The controls, tenants and defaults the page starts from."""

    @abstractmethod
    def parse(self, params: Params) -> RecallRequest:
        """The checked request (InvalidInput names a bad field)."""

    @abstractmethod
    def now(self) -> datetime:
        """The time ages are measured at."""

    def session(self, request: RecallRequest) -> str | None:
        return request.session

    def labels(self) -> Mapping[str, str]:
        return {}

    def supporting(self, request: RecallRequest) -> tuple[str, ...] | None:
        return None

    def table(self, request: RecallRequest, context: Any) -> Table:
        """The table of one recall: its explanation, in recall's order (selected first)."""
        return ExplainedTable(context.explanation)

    def computed(self, request: RecallRequest) -> Computed:
        with self.lock:
            return self._computed(request)

    def _computed(self, request: RecallRequest) -> Computed:
        key = replace(request, offset=0, limit=DEFAULT_PAGE_SIZE, outcome="all")
        found = self.cache.get(key)
        if found is not None:
            self.cache.move_to_end(key)
            return found
        now = self.now()
        started = time.perf_counter()
        context = run_recall(self.store, request, session=self.session(request), now=now)
        found = Computed(context, now, (time.perf_counter() - started) * 1000)
        self.cache[key] = found
        while len(self.cache) > self.CACHE_SIZE:
            self.cache.popitem(last=False)
        return found

    def recall(self, params: Params) -> dict[str, Any]:
        with self.lock:
            self.follow()
            request = self.parse(params)
        done = self.computed(request)
        return selection_json(
            done.context,
            done.now,
            self.labels(),
            elapsed_ms=done.recall_ms,
            supporting=self.supporting(request),
        )

    def rows(self, params: Params) -> dict[str, Any]:
        with self.lock:
            self.follow()
            request = self.parse(params)
        done = self.computed(request)
        started = time.perf_counter()
        with done.lock:
            if done.table is None:
                done.table = self.table(request, done.context)
            body = rows_json(request, done.table, done.now, self.labels())
        body["elapsed_ms"] = (time.perf_counter() - started) * 1000  # counts and this page
        return body

    def log(self, params: Params) -> dict[str, Any]:
        with self.lock:
            return log_json(self.tenant_view(params), params)

    def tiers(self, params: Params) -> dict[str, Any]:
        with self.lock:
            return tiers_json(self.tenant_view(params))

    def tenant_view(self, params: Params) -> Any:
        """The store restricted to the required ``tenant`` parameter (one the store has)."""
        self.follow()
        if not self.tenants:
            raise InvalidInput("tenant", None, "the store has no tenants yet")
        return self.store.tenant(choice(params, "tenant", self.tenants))

    def close(self) -> None:
        self.unsubscribe()
        self.cache.clear()
        self.store.close()


class BankSource(RecallSource):
    """The seed's teaching bank in an in-memory store, at its fixed ``now``."""

    mode = "bank"

    def __init__(self, now: datetime = bank.BANK_NOW) -> None:
        super().__init__(bank.build_bank(now))
        self.fixed_now = now
        self.memories = self.store.find()
        self.questions = {q.id: q for q in bank.QUESTIONS}

    def config(self, params: Params) -> dict[str, Any]:
        tenants = [{"id": t, "label": label} for t, label in bank.TENANTS.items()]
        out = config_json("bank", tenants, BANK_DEFAULTS)
        out["questions"] = [
            {"id": q.id, "label": q.label, "text": q.text, "supporting": list(q.supporting)}
            for q in bank.QUESTIONS
        ]
        return out

    def parse(self, params: Params) -> RecallRequest:
        texts = {q.id: q.text for q in bank.QUESTIONS}
        return parse_bank(params, texts, list(bank.TENANTS), BANK_DEFAULTS)

    def now(self) -> datetime:
        return self.fixed_now

    def session(self, request: RecallRequest) -> str | None:
        return bank.CURRENT_SESSION[request.tenant]

    def labels(self) -> Mapping[str, str]:
        return bank.TENANTS

    def supporting(self, request: RecallRequest) -> tuple[str, ...] | None:
        return self.questions[request.question].supporting

    def table(self, request: RecallRequest, context: Any) -> Table:
        # Every record stays visible: the other tenant's records are listed, never ranked.
        others = [other_tenant_row(m) for m in self.memories if m.tenant != request.tenant]
        return RowTable(sorted([*context.rows, *others], key=natural_key))


class StoreSource(RecallSource):
    """A real store, read-only: recall, the commit log and tier counts."""

    mode = "live"

    def __init__(
        self, store: StoreLike, clock: Callable[[], datetime] = lambda: datetime.now(timezone.utc)
    ) -> None:
        super().__init__(store)
        self.clock = clock

    def defaults(self) -> Defaults:
        return Defaults(tenant=self.tenants[0] if self.tenants else "")

    def config(self, params: Params) -> dict[str, Any]:
        self.follow()
        tenants = [{"id": t, "label": t} for t in self.tenants]
        return config_json("live", tenants, self.defaults())

    def parse(self, params: Params) -> RecallRequest:
        return parse_live(params, self.tenants, self.defaults())

    def now(self) -> datetime:
        return self.clock()


def log_json(view: ViewLike, params: Params) -> dict[str, Any]:
    """The newest commits of one tenant (a store view), read-only.

    A view's log holds only the commits that changed its tenant, each with only
    its own changes.
    """
    limit = integer(params, "limit", 50, low=1, high=1000)
    commits = view.log(limit=limit)
    return {
        "commits": [
            {
                "seq": c.seq,
                "id": c.id,
                "time": c.time.isoformat(),
                "author": c.author,
                "message": c.message,
                "changes": len(c.changes),
            }
            for c in commits
        ]
    }


def tiers_json(view: TenantViewLike) -> dict[str, Any]:
    """One tenant's memories per scope and tier, with the tiers' hit counters, read-only."""
    tenant = view.name
    counts: dict[tuple[str, str], Counter[str]] = {}
    for memory in view.find(tiers=TIERS):
        counts.setdefault((memory.tenant, memory.scope), Counter())[memory.tier] += 1
    stats = TierStats()
    stats.load(view)  # the counters TieredMemory persisted for this tenant, if it ever ran
    partitions = {p: c for p, c in stats.partitions.items() if p[0] == tenant}
    rows = []
    for partition in sorted(set(counts) | set(partitions)):
        hits = partitions.get(partition, Counts())
        rows.append(
            {
                "partition": " / ".join(partition),
                "counts": dict(counts.get(partition, {})),
                "hits": hits.hits,
                "warm_hits": hits.warm_hits,
                "misses": hits.misses,
                "hit_ratio": hits.hit_ratio,
            }
        )
    return {"partitions": rows}
