"""The teaching bank of seed 004: ten synthetic records, two tenants, four fixed questions.

The records are designed so that both walkthroughs of the seed hold exactly under
memcommit's own recall(): M4 (11 words) is the declared procedure and M7 (10 words)
shares only "logs" with the procedure question; M3 is exactly 48 hours old and from a
previous session; M5 is the youngest Team A record that matches the incident question.
Ages are in fixture hours before a fixed ``now``; nothing here reads the real clock.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import memcommit

#: The fixed "now" of the bank: every age is measured back from it.
BANK_NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)

#: Tenant ids and the names the page shows for them.
TENANTS = {"team-a": "Team A", "team-b": "Team B"}

#: The current session of each tenant; "Include previous sessions" off keeps only these.
CURRENT_SESSION = {"team-a": "a-s3", "team-b": "b-s2"}


@dataclass(frozen=True)
class BankRecord:
    """One synthetic memory card of the bank."""

    id: str
    tenant: str
    kind: str
    session: str
    age_hours: int
    content: str
    key: str | None = None


@dataclass(frozen=True)
class Question:
    """A fixed question with the fixture ids declared to support its answer."""

    id: str
    label: str
    text: str
    supporting: tuple[str, ...]


RECORDS: tuple[BankRecord, ...] = (
    BankRecord(
        "M1",
        "team-a",
        "fact",
        "a-s1",
        96,
        "The orders database allows 40 connections per worker.",
        key="db.connection_limit",
    ),
    BankRecord(
        "M2",
        "team-a",
        "fact",
        "a-s0",
        200,
        "Orders database statement timeout is set to 30 seconds.",
        key="db.statement_timeout",
    ),
    BankRecord(
        "M3",
        "team-a",
        "event",
        "a-s2",
        48,
        "Past incident: database timeout during Tuesday release, primary failover took "
        "eleven minutes.",
    ),
    BankRecord(
        "M4",
        "team-a",
        "procedure",
        "a-s1",
        120,
        "Database timeout procedure: read pool logs, restart workers, raise connection limit.",
    ),
    BankRecord(
        "M5",
        "team-a",
        "working",
        "a-s3",
        1,
        "Current ticket: checkout API timeout reported by support this morning.",
    ),
    BankRecord(
        "M6",
        "team-a",
        "working",
        "a-s3",
        2,
        "Working note: connection limit raised to 80 for the orders database.",
        key="db.connection_limit",
    ),
    BankRecord(
        "M7",
        "team-a",
        "procedure",
        "a-s2",
        30,
        "Deployment checklist: run migrations, tag release, watch logs, notify channel.",
    ),
    BankRecord(
        "M8",
        "team-b",
        "procedure",
        "b-s1",
        60,
        "Team B timeout procedure: collect slow query logs, then page the DBA.",
    ),
    BankRecord(
        "M9",
        "team-b",
        "event",
        "b-s2",
        5,
        "Incident review: database timeout caused by a missing index on invoices.",
    ),
    BankRecord(
        "M10",
        "team-b",
        "fact",
        "b-s1",
        150,
        "Invoices database timeout is 15 seconds for Team B.",
        key="db.statement_timeout",
    ),
)

QUESTIONS: tuple[Question, ...] = (
    Question(
        "timeout-procedure",
        "Database-timeout procedure",
        "What is the database timeout procedure, and which logs should I read?",
        ("M4",),
    ),
    Question(
        "timeout-incident",
        "Timeout incident",
        "What happened in the last database timeout incident?",
        ("M3",),
    ),
    Question(
        "connection-limit",
        "Current connection limit",
        "What is the current connection limit for the orders database?",
        ("M6",),
    ),
    Question(
        "lunch-venue",
        "Friday lunch (no match)",
        "Where is the Friday lunch booked?",
        (),
    ),
)


def question(question_id: str) -> Question:
    """The fixed question with this id (KeyError when there is none)."""
    for q in QUESTIONS:
        if q.id == question_id:
            return q
    raise KeyError(question_id)


def build_bank(now: datetime = BANK_NOW) -> memcommit.Store:
    """An in-memory memcommit store holding the ten records, each committed at its age.

    Records are committed oldest first, one commit each, so every memory's creation
    time is exactly ``now - age`` and the commit log reads in time order.
    """
    store = memcommit.open(":memory:", clock=lambda: now)
    for record in sorted(RECORDS, key=lambda r: -r.age_hours):
        at = now - timedelta(hours=record.age_hours)
        with store.commit(message=f"teaching bank {record.id}", author="workbench", now=at) as tx:
            tx.add(
                record.content,
                id=record.id,
                kind=record.kind,
                tenant=record.tenant,
                session=record.session,
                key=record.key,
            )
    return store
