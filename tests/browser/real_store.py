"""A store as a user's agent leaves it: generated ids, several kinds and tiers, long texts.

The teaching bank's ids are M1..M10 and its texts one line each, so a page that only
ever met the bank never met a 32-character id, a 90-word note, an unbroken URL or a
memory six months old. This store has all of them, in two tenants, with keys that
have several versions (one of them invalidated) and corrections that always load.
Imported by name (tests/ is no package); deterministic: same path, same store.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import memcommit

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)

#: The question the page is asked, and which most of the store shares words with.
QUESTION = "How do we deploy the billing service after a database migration?"

TOPICS = (
    "billing service deploy",
    "database migration rollout",
    "checkout latency incident",
    "payment webhook retries",
    "search index rebuild",
    "staging environment drift",
)

KINDS = ("fact", "event", "procedure", "decision", "working", "summary", "note")
TIERS = ("short", "mid", "long", "archive")

LONG = (
    "When the {topic} runs during business hours the on-call engineer first checks the "
    "runbook at https://wiki.internal.example.com/engineering/runbooks/{slug}/"
    "step-by-step-procedure-for-the-{slug}-with-rollback-and-verification, then posts in "
    "the release channel, waits for the canary to report healthy for fifteen minutes, "
    "compares error rates against the previous release, and only then promotes the "
    "change to every region; if anything looks wrong the rollback script "
    "scripts/{slug}_rollback_with_verification_and_notification.sh restores the last good "
    "version and pages the owning team."
)


def text(i: int, topic: str) -> str:
    """A memory's text: every fourth one long, with an unbroken URL and path."""
    slug = topic.replace(" ", "-")
    if i % 4 == 0:
        return LONG.format(topic=topic, slug=slug.replace("-", "_") if i % 8 else slug)
    return f"Note {i} on the {topic}: owner team {i % 5}, last reviewed after release {i}."


def age_of(i: int) -> timedelta:
    """Memory ``i``'s age: from three hours to six months."""
    return timedelta(hours=3 + (i * 67) % 4400)


def build(path: Path) -> memcommit.Store:
    """Write the store at ``path`` and return it open (the caller closes it).

    Tenant ``acme`` holds 66 memories over six months, ``globex`` 14; ids are the
    store's own (32 hex characters).
    """
    store = memcommit.open(str(path), clock=lambda: NOW)
    ids: dict[str, list[str]] = {"acme": [], "globex": []}
    plan = [(tenant, i) for tenant, count in (("acme", 66), ("globex", 14)) for i in range(count)]
    # commit times never go backwards: the oldest memory is written first
    for tenant, i in sorted(plan, key=lambda p: -age_of(p[1])):
        topic = TOPICS[i % len(TOPICS)]
        with store.commit(message=f"{tenant} note {i}", author="agent", now=NOW - age_of(i)) as tx:
            memory = tx.add(
                text(i, topic) if tenant == "acme" else f"{tenant} {text(i, topic)}",
                tenant=tenant,
                kind=KINDS[i % len(KINDS)],
                scope="planner" if i % 3 == 0 else "shared",
                session=f"s{i // 10}",
                key=f"{topic.split()[0]}.owner" if i % 9 == 0 else None,
                tier=TIERS[i % len(TIERS)],
            )
            ids[tenant].append(memory.id)
    with store.commit(message="rules", author="user", now=NOW - timedelta(hours=2)) as tx:
        for tenant in ("acme", "globex"):
            tx.add(
                "Always run the database migration before you deploy the billing service.",
                tenant=tenant,
                kind="correction",
                always=True,
            )
    with store.commit(message="wrong owner", author="user", now=NOW - timedelta(hours=1)) as tx:
        tx.invalidate(ids["acme"][0])
    return store
