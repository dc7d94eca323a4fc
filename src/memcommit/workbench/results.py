"""What the workbench keeps between requests, and how it follows the store it reads.

Recall results (a Context, and its table once asked) and the log and tier
counts of a tenant are kept until a commit changes that tenant: a commit of
another tenant, the common case in a store many agents write to, leaves them
be, so paging a table never reruns recall. Every request first catches up with
the commits landed since the last one (`Follower.follow`, which also hears
other processes' commits: it compares the store's tip), and asks the store
which tenants they touched.

Each recall result has an id. A page of the table names the result it belongs
to; a result no longer held (its tenant changed, or newer ones pushed it out)
is answered with `ResultGone`, so the page recalls again instead of mixing rows
of two results.

Locks: ``Results.lock`` guards only the dictionaries (held for no store read);
``Follower.following`` lets one thread at a time read what changed.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.store import StoreLike
from memcommit.workbench.view import Table

#: Past this many commits since the last request, everything kept is dropped rather
#: than reading which tenants each commit touched.
FOLLOW_LIMIT = 500

#: A tenant's epoch: (drops of everything, drops of this tenant). A result computed while
#: it changed is not kept (it may show what the commit changed).
Epoch = tuple[int, int]


class ResultGone(InvalidInput):
    """A page of the table asked for a recall result no longer held: recall again."""


@dataclass
class Computed:
    """One recall() and, once the table asked, its table."""

    context: Any
    now: datetime
    recall_ms: float
    seq: int  # the store's newest commit when recall ran (the tip the workbench followed)
    result: str  # the id a page of the table names it by
    table: Table | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class Results:
    """The last few recall results by request, and read-only views by key, per tenant."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.lock = threading.Lock()
        self.computed: OrderedDict[tuple[str, Hashable], Computed] = OrderedDict()
        self.views: dict[tuple[str, Hashable], Any] = {}
        self.epochs: Counter[str] = Counter()
        self.generation = 0
        self.ids = itertools.count(1)

    def epoch(self, tenant: str) -> Epoch:
        """What a result of ``tenant`` must still match to be kept (see `keep`)."""
        with self.lock:
            return self.generation, self.epochs[tenant]

    def next_id(self, seq: int) -> str:
        """A new result id: the commit seq it saw, and a number no other result has."""
        return f"{seq}-{next(self.ids)}"

    def get(self, tenant: str, key: Hashable) -> Computed | None:
        """The result kept for ``key`` of ``tenant``, now the most recently used."""
        with self.lock:
            found = self.computed.get((tenant, key))
            if found is not None:
                self.computed.move_to_end((tenant, key))
            return found

    def keep(self, tenant: str, key: Hashable, done: Computed, epoch: Epoch) -> None:
        """Keep ``done`` unless ``tenant`` changed since ``epoch`` (the oldest go past ``size``)."""
        with self.lock:
            if (self.generation, self.epochs[tenant]) != epoch:
                return
            self.computed[(tenant, key)] = done
            while len(self.computed) > self.size:
                self.computed.popitem(last=False)

    def view(self, tenant: str, key: Hashable, read: Callable[[], Any]) -> Any:
        """The kept view ``key`` of ``tenant``, else ``read()`` (outside the lock) and kept."""
        with self.lock:
            if (tenant, key) in self.views:
                return self.views[(tenant, key)]
            epoch = self.generation, self.epochs[tenant]
        value = read()
        with self.lock:
            if (self.generation, self.epochs[tenant]) == epoch:
                self.views[(tenant, key)] = value
        return value

    def drop(self, tenants: set[str] | None) -> None:
        """Forget what was kept of ``tenants`` (None: of every tenant)."""
        with self.lock:
            if tenants is None:
                self.generation += 1
                self.computed.clear()
                self.views.clear()
                return
            self.epochs.update(tenants)
            for kept in (self.computed, self.views):
                for held in [k for k in kept if k[0] in tenants]:
                    del kept[held]


class Follower:
    """The commit the kept results reflect, the store's tenants, and catching up with both."""

    def __init__(self, store: StoreLike, results: Results) -> None:
        self.store = store
        self.results = results
        self.following = threading.Lock()
        self.tenants = list(store.tenants())
        self.seen = store.tip

    def follow(self) -> None:
        """Drop what commits since the last request changed (this process's or another's).

        The tenants list is read again only when a commit touched a tenant it
        lacks (reading it scans the store).
        """
        with self.following:
            tip = self.store.tip
            if tip == self.seen:
                return
            changed = self.changed(tip)
            tenants = self.tenants
            if changed is None or not changed <= set(tenants):
                tenants = list(self.store.tenants())
            self.results.drop(changed)
            self.tenants, self.seen = tenants, tip

    def changed(self, tip: tuple[int, str | None]) -> set[str] | None:
        """The tenants commits after the one last seen up to ``tip`` touched; None: all.

        None too when the commit last seen is gone (a crash lost it and the
        next commit took its seq, or a restore): what changed cannot be told.
        """
        seq, seen_id = self.seen
        if tip[0] <= seq or tip[0] - seq > FOLLOW_LIMIT:
            return None
        if seq and self.store.commit_id(seq) != seen_id:
            return None
        touched = {tenant for tenant, _ in self.store.tenant_changes(seq, tip[0])}
        return None if None in touched else {t for t in touched if t is not None}
