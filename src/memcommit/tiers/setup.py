"""What every touch and maintenance of one TieredMemory works with, and what is over capacity.

A ``Setup`` is made from the TieredMemory's settings at the start of each call
and handed to the call's own objects (``Touch``, ``Maintenance``), which keep
the call's time and result; nothing of a call is left on the TieredMemory.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memcommit.store import ViewLike
from memcommit.tiers.cache import TierCache
from memcommit.tiers.partitions import Partitions
from memcommit.tiers.stats import StoreOrView, tenant_store


@dataclass(frozen=True)
class Setup:
    """The store, what is known of it, the policies, the capacities and the plug-ins."""

    store: StoreOrView
    cache: TierCache
    partitions: Partitions
    capacity: int
    mid_capacity: int | None
    long_capacity: int | None
    heat_threshold: float
    summarizer: Callable[[Any], Any]
    compactor: Any

    def io(self, tenant: str) -> ViewLike:
        """The store restricted to ``tenant``: commits, uses and state through it stay in it."""
        return tenant_store(self.store, tenant)

    @property
    def evict_to(self) -> str:
        """Where short-term evictions go: mid-term when there is one, else the archive."""
        return "mid" if self.mid_capacity else "archive"

    def sizes(self, tier: str) -> Counter[Any]:
        """Evictable memories of ``tier`` per partition (short) or per tenant (mid, long)."""
        sizes: Counter[Any] = Counter()
        for (t, tenant, scope), n in self.cache.counts().items():
            if t == tier and n > 0:
                sizes[(tenant, scope) if tier == "short" else tenant] += n
        return sizes

    def over_capacity(self) -> bool:
        """Whether a short-term partition, or mid- or long-term of a tenant, is over capacity."""
        limits = {"short": self.capacity, "mid": self.mid_capacity, "long": self.long_capacity}
        return any(
            limit is not None and any(n > limit for n in self.sizes(tier).values())
            for tier, limit in limits.items()
        )
