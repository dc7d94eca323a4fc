"""Crafted traces for the compaction tests: plain model values, no store needed."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from memcommit.model import Memory, Trace

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def make_trace(
    trace_id: str,
    *,
    steps: int = 3,
    status: str = "finished",
    ended: datetime | None = None,
    tenant: str = "default",
    scope: str = "shared",
    task: str | None = None,
    lines: list[str] | None = None,
) -> Trace:
    """A trace of ``steps`` steps, one minute apart, that ended at ``ended``."""
    start = T0
    root = Memory(
        id=f"{trace_id}-root",
        content=task or f"task {trace_id}",
        kind="event",
        scope=scope,
        tenant=tenant,
        trace_id=trace_id,
        step=0,
        created_at=start,
    )
    texts = lines or [f"step {i} of {trace_id}" for i in range(1, steps + 1)]
    members = tuple(
        Memory(
            id=f"{trace_id}-s{i}",
            content=texts[i - 1],
            kind="event",
            scope=scope,
            tenant=tenant,
            trace_id=trace_id,
            step=i,
            created_at=start + timedelta(minutes=i),
        )
        for i in range(1, len(texts) + 1)
    )
    end = None if status == "open" else ended or start + timedelta(minutes=len(members) + 1)
    return Trace(trace_id, tenant, scope, status, root, members, start, end)
