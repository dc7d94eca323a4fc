"""One history touching every operation, and everything the public API reads of a store."""

from __future__ import annotations

import re
from dataclasses import asdict
from datetime import timedelta
from typing import Any

_GENERATED = re.compile(r"\b[0-9a-f]{32}\b")


def scenario(store, now) -> None:
    """A history with adds, updates, traces, tiers, supersede, invalidate and purge."""

    def at(hours: float):
        return now - timedelta(hours=hours)

    with store.commit(message="seed", author="tester", now=at(72)) as tx:
        tx.add(
            "The database timeout is set to 30 seconds.",
            id="m1",
            tenant="team-a",
            key="db.timeout",
            session="s1",
            tags=("db", "config"),
            metadata={"b": [1, 2], "a": None, "ü": "ß"},
            importance=0.7,
        )
        tx.add(
            "Incident: database timeout at checkout after the pool ran dry.",
            id="m2",
            tenant="team-a",
            kind="event",
            session="s1",
        )
        tx.add("Team B database timeout is 90 seconds.", id="m3", tenant="team-b")
        tx.add(
            "Always answer in English.", id="m4", tenant="team-a", kind="correction", always=True
        )
        tx.add(
            "Procedure: check the connection pool, then restart the database.",
            id="m5",
            tenant="team-a",
            kind="procedure",
            scope="planner",
            valid_to=at(1),
        )
        tx.add("Zebra ordering check: uppercase id", id="M0", tenant="team-a", session="s2")
    with store.commit(message="update", now=at(48)) as tx:
        tx.update("m1", content="The database timeout is now 60 seconds.", expected_version=1)
        tx.move("m2", "mid")
        trace = tx.begin_trace("fix the database timeout", tenant="team-a", session="s2")
        tx.step(trace, "looked at the logs of the database", metadata={"tool": "grep"})
    with store.commit(message="more", now=at(24)) as tx:
        tx.step(trace, "restarted the database service")
        tx.finish(trace)
        tx.add(
            "Database timeout runbook: restart, then page the owner.",
            id="m6",
            tenant="team-a",
            kind="procedure",
            key="db.timeout",
        )
        tx.supersede("m5", "m6")
        tx.invalidate("m3")
    with store.commit(message="tiers", now=at(2)) as tx:
        tx.archive("m2")
        tx.page_in("m2")
        tx.move("m4", "long")
        tx.add("a secret to forget", id="m7", tenant="team-a")
        tx.purge("m7")
    store.record_uses(["m1", "m2", "m1"])
    store.state_set("tiers", "stats", {"hits": 1, "misses": [2, 3]})  # fmt: skip


def renamer(store):
    """A function replacing every generated id in a value by a stable name."""
    names: dict[str, str] = {}
    for commit in reversed(store.log()):
        names.setdefault(commit.id, f"commit-{commit.seq}")
        for change in commit.changes:
            if change.memory_id is not None:
                names.setdefault(change.memory_id, f"mem-{len(names)}")

    def rename(value: Any) -> Any:
        if isinstance(value, str):  # whole ids, and generated ids inside messages
            value = names.get(value, value)
            return _GENERATED.sub(lambda m: names.get(m.group(), m.group()), value)
        if isinstance(value, dict):
            return {rename(k): rename(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [rename(v) for v in value]
        return value

    return rename


def everything(store) -> Any:
    """All the public API reads, ids renamed."""
    ids = [m.id for m in store.find(live=False)]
    head = store.head
    return renamer(store)(
        {
            "log": [asdict(c) for c in store.log()],
            "head": asdict(head) if head else None,
            "histories": {i: [asdict(m) for m in store.history(i)] for i in ids},
            "traces": [asdict(t) for t in store.traces()],
            # (no commit at all when every block changed nothing)
            "as_of_1": [asdict(m) for m in store.find(live=False, as_of=1)] if head else None,
            "live": [asdict(m) for m in store.find()],
            "usage": {k: asdict(u) for k, u in store.usage().items()},
            "state": store.state_get("tiers", "stats"),
            "tenants": store.tenants(),
            "diff": [asdict(c) for c in store.diff(1, head.seq)] if head else None,
        }
    )
