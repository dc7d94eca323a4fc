"""What the workbench looks at: the teaching bank, or a real store (read-only).

Both run memcommit's own recall() and hand its Context to ``view``; they differ
only in where the memories come from and which controls the page offers.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from datetime import datetime, timezone
from functools import partial
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
    one,
    parse_bank,
    parse_live,
    recall_options,
)
from memcommit.workbench.results import Computed, Follower, ResultGone, Results
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

#: Why a page of the table is refused: it names a recall result no longer held.
RESULT_GONE = (
    "the store changed (or newer results replaced this one) since it was recalled; recall again"
)

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


def config_json(
    mode: str, tenants: Sequence[Mapping[str, str]], defaults: Defaults, seq: int
) -> dict[str, Any]:
    """What the page needs to draw its controls, and the newest commit they reflect."""
    return {
        "mode": mode,
        "seq": seq,
        "tenants": list(tenants),
        "defaults": asdict(defaults),
        "kinds": list(KINDS),
        "tiers": list(TIERS),
        "scorers": list(SCORERS),
    }


class RecallSource(ABC):
    """Runs recall() for the page and keeps its results, so paging never recomputes.

    recall() runs one at a time (``recalling``); nothing else waits for it: the
    kept results, the log and the tier counts are read under `Results`' own
    short lock, and the table (counts over every memory, then a page of rows)
    under its result's lock. Everything kept for a tenant goes when a commit
    changes that tenant (`Follower`). All of it only reads.
    """

    mode = "bank"
    CACHE_SIZE = 4

    def __init__(self, store: StoreLike) -> None:
        self.store = store
        self.results = Results(self.CACHE_SIZE)
        self.follower = Follower(store, self.results)
        self.recalling = threading.Lock()

    @property
    def tenants(self) -> list[str]:
        """The store's tenants as of the last commit followed."""
        return self.follower.tenants

    def follow(self) -> None:
        """Catch up with the commits landed since the last request (`Follower.follow`)."""
        self.follower.follow()

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
        """The kept result of ``request``'s recall, else recall() run now (and kept)."""
        key = result_key(request)
        found = self.results.get(request.tenant, key)
        if found is not None:
            return found
        with self.recalling:
            found = self.results.get(request.tenant, key)  # (asked meanwhile)
            if found is not None:
                return found
            epoch = self.results.epoch(request.tenant)
            seq = self.follower.seen[0]
            now = self.now()
            started = time.perf_counter()
            context = run_recall(self.store, request, session=self.session(request), now=now)
            elapsed = (time.perf_counter() - started) * 1000
            found = Computed(context, now, elapsed, seq, self.results.next_id(seq))
        self.results.keep(request.tenant, key, found, epoch)
        return found

    def held(self, request: RecallRequest, result: str) -> Computed:
        """The result ``result`` of ``request``, still held; else `ResultGone`."""
        found = self.results.get(request.tenant, result_key(request))
        if found is None or found.result != result:
            raise ResultGone("result", result, RESULT_GONE)
        return found

    def recall(self, params: Params) -> dict[str, Any]:
        self.follow()
        request = self.parse(params)
        done = self.computed(request)
        body = selection_json(
            done.context,
            done.now,
            self.labels(),
            elapsed_ms=done.recall_ms,
            supporting=self.supporting(request),
        )
        return {**body, "result": done.result, "seq": self.seq}

    def rows(self, params: Params) -> dict[str, Any]:
        """A page of the table; with ``result``, of that recall result or `ResultGone`."""
        self.follow()
        request = self.parse(params)
        result = one(params, "result", "")
        done = self.held(request, result) if result else self.computed(request)
        started = time.perf_counter()
        with done.lock:
            if done.table is None:
                done.table = self.table(request, done.context)
            body = rows_json(request, done.table, done.now, self.labels())
        body["elapsed_ms"] = (time.perf_counter() - started) * 1000  # counts and this page
        return {**body, "result": done.result, "seq": self.seq}

    def log(self, params: Params) -> dict[str, Any]:
        view = self.tenant_view(params)
        limit = integer(params, "limit", 50, low=1, high=1000)
        read = partial(log_json, view, limit)
        return {**self.results.view(view.name, ("log", limit), read), "seq": self.seq}

    def tiers(self, params: Params) -> dict[str, Any]:
        view = self.tenant_view(params)
        counts = self.results.view(view.name, "tiers", view.tier_counts)
        return {**tiers_json(view, counts), "seq": self.seq}

    @property
    def seq(self) -> int:
        """The newest commit the answers reflect."""
        return self.follower.seen[0]

    def tenant_view(self, params: Params) -> Any:
        """The store restricted to the required ``tenant`` parameter (one the store has)."""
        self.follow()
        if not self.tenants:
            raise InvalidInput("tenant", None, "the store has no tenants yet")
        return self.store.tenant(choice(params, "tenant", self.tenants))

    def close(self) -> None:
        self.results.drop(None)
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
        out = config_json("bank", tenants, BANK_DEFAULTS, self.seq)
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
        return None if request.question is None else self.questions[request.question].supporting

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
        return config_json("live", tenants, self.defaults(), self.seq)

    def parse(self, params: Params) -> RecallRequest:
        return parse_live(params, self.tenants, self.defaults())

    def now(self) -> datetime:
        return self.clock()


def result_key(request: RecallRequest) -> RecallRequest:
    """What one recall result stands for: the request without its table page."""
    return replace(request, offset=0, limit=DEFAULT_PAGE_SIZE, outcome="all")


def log_json(view: ViewLike, limit: int) -> dict[str, Any]:
    """The newest commits of one tenant (a store view), read-only.

    A view's log holds only the commits that changed its tenant, each with only
    its own changes: it reads them to tell the tenant's commits apart, so
    counting them costs nothing more.
    """
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
            for c in view.log(limit=limit)
        ]
    }


def tiers_json(view: TenantViewLike, counted: Mapping[tuple[str, str, str], int]) -> dict[str, Any]:
    """One tenant's memories per scope and tier (``counted``: the view's `tier_counts`),
    with the tiers' hit counters (read each time: they change without a commit)."""
    tenant = view.name
    counts: dict[tuple[str, str], dict[str, int]] = {}
    for (tier, owner, scope), n in counted.items():
        counts.setdefault((owner, scope), {})[tier] = n
    stats = TierStats()
    stats.load(view)  # the counters TieredMemory persisted for this tenant, if it ever ran
    partitions = {p: c for p, c in stats.partitions.items() if p[0] == tenant}
    rows = []
    for partition in sorted(set(counts) | set(partitions)):
        hits = partitions.get(partition, Counts())
        rows.append(
            {
                "partition": " / ".join(partition),
                "counts": counts.get(partition, {}),
                "hits": hits.hits,
                "warm_hits": hits.warm_hits,
                "misses": hits.misses,
                "hit_ratio": hits.hit_ratio,
            }
        )
    return {"partitions": rows}
