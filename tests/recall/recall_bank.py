"""A small hand-made memory bank in a real SQLite file, after the seed's teaching bank.

Team A and Team B share one store. Ages are hours before the fixed ``now``.
Words are counted as the seed does (whitespace-separated); the comments give
each record's count where a test depends on it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

import memcommit
from memcommit.recall import Context, Row

#        id     tenant    kind         session  age  key           content
BANK = [
    ("M1", "team-a", "fact", "s2", 72, "db.timeout", "The database timeout is set to 30 seconds."),
    (
        "M3",
        "team-a",
        "event",
        "s1",
        48,
        None,
        "Incident: database timeout at checkout after the connection pool ran dry.",
    ),
    ("M6", "team-b", "fact", "s1", 40, None, "Team B database timeout is 90 seconds."),
    (
        "M4",
        "team-a",
        "procedure",
        "s1",
        30,
        None,  # 11 words
        "Database timeout procedure: check the connection pool, then restart the service.",
    ),
    (
        "M8",
        "team-b",
        "procedure",
        "s1",
        25,
        None,
        "Database timeout runbook: check logs, restart service, page the owner.",
    ),
    ("M2", "team-a", "fact", "s1", 20, "db.timeout", "The database timeout is now 60 seconds."),
    (
        "M7",
        "team-a",
        "procedure",
        "s2",
        2,
        None,  # 10 words, shares only "logs" with Q_PROCEDURE
        "Deployment checklist: run the tests, tag the release, watch logs",
    ),
    (
        "M5",
        "team-a",
        "working",
        "s2",
        1,
        None,
        "Current ticket: investigating the database timeout alerts right now.",
    ),
    ("M9", "team-a", "working", "s2", 0.5, None, "Lunch order: two pizzas for the on-call crew."),
    (
        "M10",
        "team-b",
        "event",
        "s2",
        0.25,
        None,
        "Team B incident review about the checkout outage.",
    ),
]

Q_PROCEDURE = "Which steps fix a database timeout? Check the logs."
Q_INCIDENT = "What happened in the database timeout incident?"


def build_bank(path: str, now: datetime, records=BANK) -> memcommit.Store:
    """A SQLite file holding ``records``, each added by its own commit at its own time."""
    return fill_bank(memcommit.open(path), now, records)


def fill_bank(store: memcommit.Store, now: datetime, records=BANK) -> memcommit.Store:
    """Add ``records`` to ``store``, each by its own commit at its own time."""
    for mid, tenant, kind, session, age, key, content in sorted(records, key=lambda r: -r[4]):
        with store.commit(message=f"add {mid}", now=now - timedelta(hours=age)) as tx:
            tx.add(content, id=mid, tenant=tenant, kind=kind, session=session, key=key)
    return store


def selected(ctx: Context) -> list[str]:
    """Ids of the selected memories in render order."""
    return [m.id for m in ctx.selected]


def row(ctx: Context, memory_id: str) -> Row:
    """The row of one memory."""
    found = [r for r in ctx.rows if r.memory.id == memory_id]
    assert len(found) == 1, memory_id
    return found[0]
