"""What a policy sees of one memory: the memory, where it is, and its use counts.

Use counts are on the store's logical clock (one tick per use), so policies
rank by ticks, never by wall time, and replaying the same touches gives the
same choices.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import NamedTuple

from memcommit.model import Memory


class Candidate(NamedTuple):
    """One memory as offered to an eviction or promotion policy.

    A named tuple rather than a dataclass: policies are offered every resident
    of a partition at each eviction, and tuples are several times cheaper to make.
    """

    memory: Memory
    tier: str
    status: str
    uses: int = 0
    first_tick: int | None = None
    last_tick: int | None = None
    tick: int = 0  # the logical clock now
    entered: int = 0  # tick at which the memory entered its current tier
    #: Which cache the memory is offered for: ``(tenant, scope)`` for a short-term
    #: partition, ``(tenant, None)`` for a tenant's long-term memory, None outside
    #: TieredMemory (the simulator). One policy instance serves every partition;
    #: a policy with a queue per cache keys it by this (the classics do).
    partition: Hashable = None

    @property
    def id(self) -> str:
        """The memory's id."""
        return self.memory.id

    @property
    def recent(self) -> int:
        """Tick of the last use, or of entering the tier when that came later."""
        last = self.last_tick
        return self.entered if last is None or last < self.entered else last


def frequency_level(uses: int) -> int:
    """Frequency on a log scale: 0 unused, 1 once, 2 for 2-3 uses, 3 for 4-7, ...

    Policies that weigh frequency use this level rather than the raw count, so a
    memory used 10,000 times does not drown recency, and memories of one level
    can be kept in recency order (which keeps the simulator fast and exact).
    """
    return uses.bit_length()
