"""The records memcommit stores: memories, commits and their changes, traces.

All of them are immutable values. A memory never changes in place: an update is
a new version written by a commit, and the old version stays in history.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: Kinds of memory. The recall "memory stores" map onto the first four.
KINDS = ("fact", "event", "procedure", "working", "decision", "correction", "summary", "note")

#: Memory stores as named in the workbench, and the kinds each one holds.
STORES = {
    "semantic": ("fact",),
    "episodic": ("event",),
    "procedural": ("procedure",),
    "working": ("working",),
}

#: Tiers of the working memory, from hottest to coldest.
TIERS = ("short", "mid", "long", "archive")

#: The tiers a memory is in while working memory holds it: every tier but the archive.
#: Recall reads them by default; each has a capacity; compaction counts them as held.
LIVE_TIERS = TIERS[:-1]

#: Lifecycle of a memory. Only "active" memories hold; the others are history.
STATUSES = ("active", "invalidated", "superseded", "purged")

#: Operations a commit can record.
OPS = (
    "add",
    "update",
    "invalidate",
    "supersede",
    "move",
    "archive",
    "restore",
    "page_in",
    "purge",
    "begin_trace",
    "step",
    "finish_trace",
)


@dataclass(frozen=True)
class Memory:
    """One version of one memory."""

    id: str
    content: str
    kind: str = "fact"
    scope: str = "shared"
    tenant: str = "default"
    session: str | None = None
    key: str | None = None
    importance: float = 0.5
    tags: tuple[str, ...] = ()
    project: str | None = None
    always: bool = False
    token_count: int | None = None
    trace_id: str | None = None
    step: int | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict, hash=False)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    status: str = "active"
    tier: str = "short"
    version: int = 1
    created_at: datetime | None = None
    created_commit: int | None = None
    updated_at: datetime | None = None
    updated_commit: int | None = None

    def holds(self, at: datetime | None = None) -> bool:
        """True while the memory is active and (at ``at``) inside its validity window."""
        if self.status != "active" or self.superseded_by is not None:
            return False
        if at is None:
            return True
        if self.valid_from is not None and at < self.valid_from:
            return False
        return not (self.valid_to is not None and at >= self.valid_to)


@dataclass(frozen=True)
class Change:
    """One change inside a commit: what happened to which memory (or trace)."""

    op: str
    memory_id: str | None
    version: int | None = None
    detail: Mapping[str, Any] = field(default_factory=dict, hash=False)


@dataclass(frozen=True)
class Commit:
    """An atomic, ordered unit of change: the audit trail is the list of these."""

    seq: int
    id: str
    parent: str | None
    time: datetime
    author: str
    message: str
    changes: tuple[Change, ...] = ()


@dataclass(frozen=True)
class Trace:
    """A task: its root memory and its ordered steps, open until finished or failed."""

    id: str
    tenant: str
    scope: str
    status: str  # "open" | "finished" | "failed"
    root: Memory
    steps: tuple[Memory, ...] = ()
    started_at: datetime | None = None
    ended_at: datetime | None = None


@dataclass(frozen=True)
class Usage:
    """How often a memory was used, on the store's logical clock (one tick per use)."""

    count: int
    first_tick: int
    last_tick: int
