"""Hits, warm hits, misses and tier moves, per partition and in total, persisted in the store.

Each tenant's counters live in that tenant's own state (namespace ``tiers``, key
``stats``, as a view of the tenant names it), whichever way TieredMemory was
opened: a view reads exactly its own partitions, the whole store reads every
tenant's. Updates are increments applied inside the write that lands them, so
TieredMemory objects in several processes never overwrite each other's counts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, fields
from typing import TYPE_CHECKING, Any

from memcommit.errors import InvalidInput
from memcommit.store import StoreLike, TenantViewLike, ViewLike

if TYPE_CHECKING:
    from typing_extensions import TypeIs

#: Namespace and key of a tenant's persisted counters, in its view's state.
NAMESPACE, KEY = "tiers", "stats"

#: What tiers work over: the whole store (every tenant), or one tenant's view of it.
StoreOrView = StoreLike | TenantViewLike


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
    #: Consolidations that failed (the summarizer raised or gave no usable summary).
    consolidation_errors: int = 0

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


def is_view(store: StoreOrView) -> TypeIs[TenantViewLike]:
    """Whether ``store`` is one tenant's view (it names its tenant), not the whole store.

    Told by the attribute: ``isinstance`` against the protocol looks up each of
    its thirty members (about 30 µs), and tiers ask this at every write.
    """
    return isinstance(getattr(store, "name", None), str)


def tenant_of(store: StoreOrView) -> str | None:
    """The tenant a store view is restricted to; None for the whole store."""
    return store.name if is_view(store) else None


def tenant_store(store: StoreOrView, tenant: str) -> ViewLike:
    """``store`` restricted to ``tenant``: itself when it is a view of that tenant."""
    if not is_view(store):
        return store.tenant(tenant)
    if store.name != tenant:
        raise InvalidInput("tenant", tenant, f"this store view holds only tenant {store.name!r}")
    return store


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

    @property
    def tenants(self) -> list[str]:
        """The tenants with counters here, sorted."""
        return sorted({t for t, _ in self.partitions})

    def only(self, tenant: str) -> TierStats:
        """The counters of ``tenant``'s partitions (copies)."""
        return TierStats(
            {p: Counts(**asdict(c)) for p, c in self.partitions.items() if p[0] == tenant}
        )

    def add(self, other: TierStats) -> None:
        """Add ``other``'s counters to these, partition by partition."""
        for partition, counts in other.partitions.items():
            self.of(partition).add(counts)

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

    @classmethod
    def read(cls, store: StoreOrView, *, tenant: str | None = None) -> TierStats:
        """The counters persisted in ``store``: every tenant's, or only ``tenant``'s.

        A tenant view reads its own tenant's partitions only (asking for another
        tenant raises InvalidInput).
        """
        own = tenant_of(store)
        if tenant is not None and not isinstance(tenant, str):
            raise InvalidInput("tenant", tenant, "must be a tenant name")
        wanted = own if tenant is None else tenant
        names = store.tenants() if wanted is None else [wanted]
        out = cls()
        for name in names:
            data = tenant_store(store, name).state_get(NAMESPACE, KEY)
            out.add(cls.from_json(data).only(name))  # a tenant's record holds only its own
        return out

    def load(self, store: StoreOrView, *, tenant: str | None = None) -> None:
        """Replace these counters with the ones persisted in ``store`` (see ``read``)."""
        self.partitions = TierStats.read(store, tenant=tenant).partitions

    def save(self, store: StoreOrView) -> None:
        """Persist these counters in ``store``, replacing those of the tenants they cover.

        For seeding and copying; TieredMemory adds to the persisted counters instead.
        """
        own = tenant_of(store)
        for tenant in self.tenants:
            if own is not None and tenant != own:
                raise InvalidInput("tenant", tenant, f"this store view holds only tenant {own!r}")
        for tenant in self.tenants:
            tenant_store(store, tenant).state_set(NAMESPACE, KEY, self.only(tenant).to_json())


def increment(delta: TierStats, tenant: str) -> Callable[[Any], Any]:
    """An update adding ``delta``'s counters of ``tenant`` to that tenant's stored record.

    For ``record_uses(state=...)``, which calls it inside its write.
    """

    def update(stored: Any) -> dict[str, Any]:
        stats = TierStats.from_json(stored).only(tenant)
        stats.add(delta.only(tenant))
        return stats.to_json()

    return update


def add_stored(io: ViewLike, delta: TierStats, tenant: str) -> None:
    """Add ``delta``'s counters of ``tenant`` to the stored ones of ``io``, the tenant's view.

    Called inside an open commit, which holds the store's write lock, so the read
    and the write are one step.
    """
    if not delta.only(tenant).partitions:
        return
    io.state_set(NAMESPACE, KEY, increment(delta, tenant)(io.state_get(NAMESPACE, KEY)))
