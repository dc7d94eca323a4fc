"""What one ``touch`` or ``maintain`` did: the ids by what happened to them, and the commits."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memcommit.model import Commit


@dataclass(frozen=True)
class ConsolidationError:
    """A segment left in mid-term because its summary could not be made or kept."""

    segment: str
    tenant: str
    reason: str


@dataclass
class TouchResult:
    """What one ``touch`` did."""

    hits: list[str] = field(default_factory=list)
    warm_hits: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    paged_in: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    #: The last commit made; a touch paging in for several tenants makes one per tenant.
    commit: Commit | None = None
    commits: list[Commit] = field(default_factory=list)


@dataclass
class MaintenanceResult:
    """What one ``maintain`` did, step by step."""

    compacted: Any = None
    promoted: list[str] = field(default_factory=list)
    evicted: list[str] = field(default_factory=list)
    to_mid: list[str] = field(default_factory=list)
    segments_promoted: list[str] = field(default_factory=list)
    consolidated: list[str] = field(default_factory=list)
    trimmed: list[str] = field(default_factory=list)
    commits: list[Commit] = field(default_factory=list)
    #: Segments left in mid-term because their summary failed (counted in stats too).
    errors: list[ConsolidationError] = field(default_factory=list)
