"""Helpers for compaction tests over a real store: traces written through commits, dumps,
and what still shows a text."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from memcommit.recall import recall

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def add_trace(
    store: Any,
    task: str,
    *,
    steps: int = 3,
    status: str = "finished",
    tenant: str = "default",
    scope: str = "shared",
    at: datetime = T0,
    lines: list[str] | None = None,
    errors: dict[int, str] | None = None,
) -> str:
    """Begin, step and (unless open) finish one trace in one commit at ``at``."""
    texts = lines if lines is not None else [f"{task}: step {i}" for i in range(1, steps + 1)]
    with store.commit(message=f"trace {task}", now=at) as tx:
        trace_id = tx.begin_trace(task, tenant=tenant, scope=scope)
        for n, text in enumerate(texts, 1):
            meta = {"error": errors[n]} if errors and n in errors else None
            tx.step(trace_id, text, metadata=meta)
        if status != "open":
            tx.finish(trace_id, status=status)
    return trace_id


def dump(store: Any) -> dict[str, Any]:
    """Everything the store holds: every version of every memory, every commit, every trace."""
    memories = store.find(live=False)
    seen = {m.id for m in memories}
    return {
        "versions": {mid: store.history(mid) for mid in sorted(seen)},
        "log": store.log(),
        "traces": {t.id: t for t in store.traces()},
    }


def later(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def showing(store: Any, text: str, *, tenant: str, now: datetime) -> list[str]:
    """Ids of the memories that still show ``text`` through find, get or recall."""
    found = store.find(tenant=tenant, live=False)
    fetched = [store.get(m.id) for m in found]
    recalled = [row.memory for row in recall(store, text, tenant=tenant, now=now).rows]
    return sorted(
        {m.id for m in (*found, *fetched, *recalled) if text in f"{m.content}{m.metadata}{m.tags}"}
    )
