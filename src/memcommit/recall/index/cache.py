"""The tenant indexes a process holds for one store, within a byte budget, least recently used out.

A serving process recalls in many tenants; keeping every index it ever opened
would grow without bound (each is postings, columns and a vocabulary). The
cache charges each index what it holds (`TenantIndex.nbytes`, measured again
whenever a recall or a commit may have changed it) and, once the total passes
the budget, lets go of the least recently used indexes until it fits. The index
in use is never let go, so a tenant bigger than the whole budget is still
served, alone. A tenant let go is reopened when next recalled, from its
snapshot or from the store, never from anything of another tenant.

Letting go loses nothing: an index is derived data, and its tenant's
snapshot (if it has one) is on disk, caught up from its stamp when reopened.
What is held is anything `Measured` (it says its ``nbytes()``): a tenant's
lexical index, or whatever else derived per tenant shares the budget under its
own key (a vector index, say, as ``"vectors:" + tenant``).
"""

from __future__ import annotations

import types
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar


class Measured(Protocol):
    """What the cache can hold: it says about how many bytes it keeps in memory."""

    def nbytes(self) -> int: ...


_Held = TypeVar("_Held", bound=Measured)


class TenantCache(Generic[_Held]):
    """Tenant name -> its open index, within ``budget`` bytes; ``evicted`` counts those let go.

    Reads (`get`, ``in``, iteration) never reorder; `touch` marks a tenant used
    now. ``on_evict(tenant)`` is told of each tenant let go (the live index drops
    what it keeps beside it).
    """

    def __init__(self, budget: int, on_evict: Callable[[str], None] | None = None) -> None:
        self.budget = budget
        self._held: OrderedDict[str, _Held] = OrderedDict()
        self._charged: dict[str, int] = {}
        self.total = 0  # bytes charged, over every held index
        self.evicted = 0
        self._on_evict = None if on_evict is None else _weakly(on_evict)

    def __len__(self) -> int:
        return len(self._held)

    def __bool__(self) -> bool:
        return bool(self._held)

    def __contains__(self, tenant: object) -> bool:
        return tenant in self._held

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._held))

    def get(self, tenant: str) -> _Held | None:
        """The tenant's index if held (its place in the order unchanged)."""
        return self._held.get(tenant)

    def __getitem__(self, tenant: str) -> _Held:
        return self._held[tenant]

    def __setitem__(self, tenant: str, index: _Held) -> None:
        """Hold ``index`` as the most recently used, charged now (others may be let go)."""
        self._held[tenant] = index
        self._held.move_to_end(tenant)
        self.charge(tenant)

    def pop(self, tenant: str, default: _Held | None = None) -> _Held | None:
        """Stop holding ``tenant``'s index (not an eviction: nobody is told)."""
        self.total -= self._charged.pop(tenant, 0)
        return self._held.pop(tenant, default)

    def evict(self, tenant: str) -> None:
        """Let ``tenant``'s index go as the budget would (its owner is told, it is counted)."""
        if self.pop(tenant) is not None:
            self.evicted += 1
            if self._on_evict is not None:
                self._on_evict(tenant)

    def clear(self) -> None:
        """Hold nothing."""
        self._held.clear()
        self._charged.clear()
        self.total = 0

    def touch(self, tenant: str) -> None:
        """``tenant`` was used now: the last to be let go."""
        if tenant in self._held:
            self._held.move_to_end(tenant)

    def charge(self, tenant: str) -> None:
        """Measure ``tenant``'s index again, then let the least recently used go while over budget.

        ``tenant`` itself is kept even when it alone is over the budget.
        """
        index = self._held.get(tenant)
        if index is None:
            return
        size = index.nbytes()
        self.total += size - self._charged.get(tenant, 0)
        self._charged[tenant] = size
        while self.total > self.budget and len(self._held) > 1:
            oldest = next(iter(self._held))
            if oldest == tenant:  # (only when it was not the newest: keep it, drop the next)
                self._held.move_to_end(tenant)
                continue
            self.evict(oldest)

    def charged(self, tenant: str) -> int:
        """The bytes ``tenant``'s index was last charged (0 when not held)."""
        return self._charged.get(tenant, 0)


def _weakly(method: Callable[[str], None]) -> Callable[[str], None]:
    """``method`` called through a weak reference to its object when it is a bound method
    (nothing once the object is gone): an owner and its cache then make no cycle."""
    if not isinstance(method, types.MethodType):
        return method
    held = weakref.WeakMethod(method)

    def call(tenant: str) -> None:
        found = held()
        if found is not None:
            found(tenant)

    return call
