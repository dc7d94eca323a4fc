"""Mid-term segments: evicted memories grouped by trace, with MemoryOS's heat.

Heat = α·visits + β·length + γ·exp(−Δhours/24), where visits counts warm hits
on the segment, length is how many of its memories are in mid-term, and Δhours
is the time since the last visit (or since it entered mid-term). A hot segment
is promoted whole; the coldest is consolidated when mid-term is over capacity.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from memcommit.model import Memory, Trace


def segment_id(memory: Memory) -> str:
    """The segment a memory belongs to: its trace, or itself when untraced."""
    return memory.trace_id or memory.id


@dataclass(frozen=True)
class Segment:
    """Memories of one segment in mid-term, and its visit record."""

    id: str
    memories: tuple[Memory, ...]
    visits: int = 0
    last_visit: datetime | None = None

    @property
    def tenant(self) -> str:
        """The tenant of the segment (a segment never spans tenants)."""
        return self.memories[0].tenant

    def since(self) -> datetime | None:
        """The last visit, or when the newest member entered mid-term."""
        if self.last_visit is not None:
            return self.last_visit
        times = [t for m in self.memories if (t := m.updated_at or m.created_at) is not None]
        return max(times) if times else None

    def heat(
        self, now: datetime, *, alpha: float = 1.0, beta: float = 1.0, gamma: float = 1.0
    ) -> float:
        """MemoryOS's heat at ``now``."""
        since = self.since()
        hours = max((now - since).total_seconds() / 3600.0, 0.0) if since else math.inf
        return alpha * self.visits + beta * len(self.memories) + gamma * math.exp(-hours / 24.0)

    def as_trace(self) -> Trace:
        """The segment as a trace, for a summarizer (members in step, then id, order)."""
        members = sorted(self.memories, key=lambda m: (m.step or 0, m.id))
        root, steps = members[0], tuple(members[1:])
        return Trace(
            id=self.id,
            tenant=root.tenant,
            scope=root.scope,
            status="finished",
            root=root,
            steps=steps,
        )


def segments(
    memories: Iterable[Memory], visits: Mapping[str, tuple[int, datetime | None]]
) -> list[Segment]:
    """Group mid-term memories into segments, in order of segment id."""
    groups: dict[str, list[Memory]] = {}
    for m in memories:
        groups.setdefault(segment_id(m), []).append(m)
    out = []
    for sid in sorted(groups):
        count, last = visits.get(sid, (0, None))
        out.append(Segment(sid, tuple(groups[sid]), count, last))
    return out
