"""TTL: a time to live per kind, then a fallback policy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from memcommit.errors import InvalidInput
from memcommit.tiers import inputs
from memcommit.tiers.candidate import Candidate
from memcommit.tiers.policies.base import check_eviction, notify
from memcommit.tiers.policies.classic import LRU


class TTL:
    """Memories past their kind's time to live go first (oldest expiry first), then the fallback's.

    Age is measured from the memory's ``created_at`` to the injected ``now``;
    kinds without a TTL never expire, and ``ttl`` may name only kinds the store
    knows (`memcommit.model.KINDS`: any other would never expire). The fallback
    (LRU by default) is told of every use, eviction and page-in too.
    """

    def __init__(self, ttl: Mapping[str, timedelta], fallback: Any = None) -> None:
        if not isinstance(ttl, Mapping):
            raise InvalidInput("ttl", ttl, "must be a mapping of kind to timedelta")
        inputs.kinds("ttl", ttl, required=False)
        for kind, life in ttl.items():
            if not isinstance(life, timedelta) or life <= timedelta(0):
                raise InvalidInput(f"ttl[{kind!r}]", life, "must be a timedelta above zero")
        self.ttl = dict(ttl)
        self.fallback = check_eviction(LRU() if fallback is None else fallback, "fallback")

    def expires(self, candidate: Candidate) -> datetime | None:
        """When the candidate's time to live ends, or None when it never does."""
        life = self.ttl.get(candidate.memory.kind)
        created = candidate.memory.created_at
        return None if life is None or created is None else created + life

    def victims(
        self, candidates: Sequence[Candidate], n: int, now: datetime | None = None
    ) -> list[Candidate]:
        if n <= 0:
            return []
        expired = []
        if now is not None:
            for c in candidates:
                end = self.expires(c)
                if end is not None and end <= now:
                    expired.append((end, c.id, c))
        expired.sort(key=lambda e: (e[0], e[1]))
        chosen = [c for _, _, c in expired[:n]]
        if len(chosen) < n:
            gone = {c.id for c in chosen}
            rest = [c for c in candidates if c.id not in gone]
            chosen += self.fallback.victims(rest, n - len(chosen), now)
        return chosen

    def on_use(self, candidate: Candidate, now: datetime | None = None) -> None:
        notify(self.fallback, "on_use", candidate, now)

    def on_evict(self, candidate: Candidate, now: datetime | None = None) -> None:
        notify(self.fallback, "on_evict", candidate, now)

    def on_page_in(self, candidate: Candidate, now: datetime | None = None) -> None:
        notify(self.fallback, "on_page_in", candidate, now)
