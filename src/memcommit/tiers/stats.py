"""Hits, warm hits, misses and tier moves, per partition and in total, persisted in the store."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

#: Namespace and key of the persisted counters (store.state_get / state_set).
NAMESPACE, KEY = "tiers", "stats"


@dataclass
class Counts:
    """Counters of one partition (or of all of them)."""

    hits: int = 0
    warm_hits: int = 0
    misses: int = 0
    page_ins: int = 0
    evictions: int = 0
    promotions: int = 0
    consolidations: int = 0

    @property
    def requests(self) -> int:
        """Touches counted: hits, warm hits and misses."""
        return self.hits + self.warm_hits + self.misses

    @property
    def hit_ratio(self) -> float:
        """Hits over requests; warm hits count as misses of short-term memory."""
        return self.hits / self.requests if self.requests else 0.0

    def add(self, other: Counts) -> None:
        """Add ``other``'s counters to these."""
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))


class TierStats:
    """Counts by partition ``(tenant, scope)``; ``total`` adds them up."""

    def __init__(self, partitions: dict[tuple[str, str], Counts] | None = None) -> None:
        self.partitions: dict[tuple[str, str], Counts] = partitions or {}

    def of(self, partition: tuple[str, str]) -> Counts:
        """The counters of one partition (created at zero)."""
        counts = self.partitions.get(partition)
        if counts is None:
            counts = self.partitions[partition] = Counts()
        return counts

    @property
    def total(self) -> Counts:
        """All partitions added up."""
        total = Counts()
        for counts in self.partitions.values():
            total.add(counts)
        return total

    def to_json(self) -> dict[str, Any]:
        """Plain JSON: a list of partitions with their counters, and the total."""
        rows = [
            {"tenant": t, "scope": s, **asdict(c)} for (t, s), c in sorted(self.partitions.items())
        ]
        return {"partitions": rows, "total": asdict(self.total)}

    @classmethod
    def from_json(cls, data: Any) -> TierStats:
        """The inverse of ``to_json`` (unknown keys are ignored)."""
        names = {f.name for f in fields(Counts)}
        partitions = {}
        for row in (data or {}).get("partitions", []):
            counts = Counts(**{k: int(v) for k, v in row.items() if k in names})
            partitions[(row["tenant"], row["scope"])] = counts
        return cls(partitions)

    def load(self, store: Any) -> None:
        """Replace these counters with the ones persisted in ``store``."""
        self.partitions = TierStats.from_json(store.state_get(NAMESPACE, KEY)).partitions

    def save(self, store: Any) -> None:
        """Persist these counters in ``store``."""
        store.state_set(NAMESPACE, KEY, self.to_json())
