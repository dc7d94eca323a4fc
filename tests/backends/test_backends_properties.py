"""Property: any sequence of operations leaves SQLite and PostgreSQL in the same state."""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from backends_scenario import everything
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.errors import MemcommitError

pytestmark = pytest.mark.postgres

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)
IDS = [f"m{i}" for i in range(6)]
TEXT = st.sampled_from(["tea", "coffee at nine", "the database timeout", "ünïcode ✓", ""])

OPS = st.one_of(
    st.tuples(st.just("add"), st.sampled_from(IDS), TEXT, st.sampled_from(["t1", "t2"])),
    st.tuples(st.just("update"), st.sampled_from(IDS), TEXT, st.integers(1, 4)),
    st.tuples(st.just("invalidate"), st.sampled_from(IDS)),
    st.tuples(st.just("supersede"), st.sampled_from(IDS), st.sampled_from(IDS)),
    st.tuples(st.just("move"), st.sampled_from(IDS), st.sampled_from(["short", "mid", "long"])),
    st.tuples(st.just("archive"), st.sampled_from(IDS)),
    st.tuples(st.just("page_in"), st.sampled_from(IDS)),
    st.tuples(st.just("purge"), st.sampled_from(IDS)),
    st.tuples(st.just("uses"), st.lists(st.sampled_from(IDS), min_size=1, max_size=4)),
)
HISTORY = st.lists(st.lists(OPS, min_size=1, max_size=4), min_size=1, max_size=6)


def play(store, history) -> list[str]:
    """Apply each group of operations as one commit; the outcome of every operation."""
    outcomes = []
    for n, ops in enumerate(history):
        with store.commit(message=f"c{n}", now=NOW + timedelta(minutes=n)) as tx:
            for op, *args in ops:
                try:
                    if op == "add":
                        tx.add(args[1], id=args[0], tenant=args[2])
                    elif op == "update":
                        tx.update(args[0], content=args[1], expected_version=args[2])
                    elif op == "uses":
                        continue
                    else:
                        getattr(tx, op)(*args)
                    outcomes.append(op)
                except MemcommitError as exc:
                    outcomes.append(f"{op}: {type(exc).__name__}")
        for op, *args in ops:
            if op == "uses":
                try:
                    store.record_uses(args[0])
                    outcomes.append("uses")
                except MemcommitError as exc:
                    outcomes.append(f"uses: {type(exc).__name__}")
    return outcomes


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(history=HISTORY)
def test_any_history_gives_the_same_store(tmp_path_factory, postgres_server, history):
    schema = f"test_{uuid.uuid4().hex[:16]}"
    lite = memcommit.open(tmp_path_factory.mktemp("prop") / "p.db")
    pg = memcommit.open(postgres_server, schema=schema)
    try:
        assert play(lite, history) == play(pg, history)
        assert everything(lite) == everything(pg)
        assert lite.check().ok and pg.check().ok
    finally:
        lite.close()
        pg.close()
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP SCHEMA "{schema}" CASCADE')
