"""Work run in separate processes by the concurrency tests (importable by spawned children)."""

from __future__ import annotations

from typing import Any

import memcommit


def commit_many(target: str, options: dict[str, Any], worker: int, count: int) -> int:
    """Land ``count`` commits of one memory each, as writer ``worker``; the number landed."""
    with memcommit.open(target, **options) as store:
        for i in range(count):
            with store.commit(message=f"w{worker}-{i}", author=f"worker-{worker}") as tx:
                tx.add(f"worker {worker} item {i}", key=f"w{worker}-{i}")
    return count


def update_expecting(target: str, options: dict[str, Any], memory_id: str, version: int,
                     worker: int, barrier: Any) -> str:  # fmt: skip
    """Update one memory expecting ``version``, after every rival is ready: "won" or "conflict"."""
    with memcommit.open(target, **options) as store:
        barrier.wait()
        try:
            with store.commit(message=f"rival {worker}") as tx:
                # new text every round: a rival rewriting what already holds would change nothing
                tx.update(memory_id, expected_version=version,
                          content=f"written by {worker} over version {version}")  # fmt: skip
        except memcommit.errors.Conflict:
            return "conflict"
    return "won"


def maintain_once(target: str, options: dict[str, Any], capacity: int, barrier: Any) -> dict:
    """Run one tier maintenance pass, started together with the rivals; what it reported."""
    from datetime import datetime, timezone

    from memcommit.tiers import AccessCount
    from memcommit.tiers.memory import TieredMemory

    now = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
    with memcommit.open(target, **options) as store:
        tiers = TieredMemory(store, capacity=capacity, promotion=AccessCount(3), auto=False)
        barrier.wait()
        result = tiers.maintain(now)
        tiers.close()
    return {"evicted": result.evicted, "promoted": result.promoted}
