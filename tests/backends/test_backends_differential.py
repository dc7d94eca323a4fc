"""Same inputs, same store: SQLite and PostgreSQL give the same commits, versions and recall.

One history touching every operation is replayed on both backends; everything
the public API can read is compared after renaming generated ids (memory, trace
and commit ids are random by design) to their order of appearance.
"""

from __future__ import annotations

import math
import uuid
from dataclasses import asdict
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg
import pytest
from backends_scenario import everything, renamer, scenario

import memcommit
from memcommit.recall import Words, recall
from memcommit.store.backends.base import MemoryQuery
from memcommit.store.backends.postgres import POSTGRES
from memcommit.store.backends.sql import memories_sql

pytestmark = pytest.mark.postgres

TENANTS = ("team-a", "team-b")
NOW = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


def close(a: Any, b: Any, path: str = "") -> None:
    """Assert two JSON-like values equal, floats to a relative 1e-9."""
    if isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12), (path, a, b)
    elif isinstance(a, dict) and isinstance(b, dict):
        assert a.keys() == b.keys(), path
        for k in a:
            close(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            close(x, y, f"{path}[{i}]")
    else:
        assert a == b, (path, a, b)


@pytest.fixture(scope="module")
def pair(tmp_path_factory, postgres_server):
    """The scenario on SQLite and on PostgreSQL (read-only for the tests of this module)."""
    schema = f"test_{uuid.uuid4().hex[:16]}"
    lite = memcommit.open(tmp_path_factory.mktemp("differential") / "same.db")
    pg = memcommit.open(postgres_server, schema=schema)
    for store in (lite, pg):
        scenario(store, NOW)
    yield lite, pg
    lite.close()
    pg.close()
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA "{schema}" CASCADE')


def test_same_commits_versions_traces_and_state(pair):
    lite, pg = pair
    assert everything(lite) == everything(pg)
    assert lite.check().ok and pg.check().ok


FINDS = [
    {},
    {"live": False},
    {"tenant": "team-a", "kinds": ["fact", "procedure"]},
    {"scopes": ["planner"], "live": False},
    {"sessions": ["s1", "s2"]},
    {"sessions": []},
    {"tiers": ["mid", "long"]},
    {"key": "db.timeout", "live": False},
    {"since": "at(48)", "until": "at(2)", "live": False},
    {"limit": 2, "live": False},
    {"as_of": 3},
]


@pytest.mark.parametrize("kw", FINDS, ids=[str(k) for k in FINDS])
def test_find_filters_agree(pair, now, kw):
    lite, pg = pair
    kw = {
        k: now - timedelta(hours=int(v[3:-1])) if isinstance(v, str) and v.startswith("at(") else v
        for k, v in kw.items()
    }
    found = [renamer(s)([asdict(m) for m in s.find(**kw)]) for s in (lite, pg)]
    assert found[0] == found[1]


def test_every_filter_is_part_of_the_sql(now):
    text, params = memories_sql(
        MemoryQuery(
            tenant="t", kinds=("fact", "event"), scopes=("s",), sessions=("a", "b"),
            tiers=("short",), since=now, until=now, live_at=now, key="k", limit=5,
        ),
        POSTGRES,
    )  # fmt: skip
    where = text.partition(" WHERE ")[2]
    for clause in (
        "tenant = %s", "kind = ANY(%s)", "scope = %s", "session = ANY(%s)", "tier = %s",
        "created_at >= %s", "created_at <= %s", "status = 'active'", "valid_to > %s",
        "mkey = %s", "end_seq IS NULL", "LIMIT 5",
    ):  # fmt: skip
        assert clause in where, clause
    assert params.count(now) == 4


RECALLS = [
    {"query": "database timeout"},
    {"query": "database timeout", "recency_weight": 0.3, "half_life": timedelta(hours=12)},
    {"query": "restart the database", "kinds": ["procedure", "event"], "budget": Words(12)},
    {"query": "database timeout", "latest_per_key": True, "session": "s2",
     "include_previous_sessions": False},
    {"query": "database logs", "max_age": timedelta(hours=48), "live": False,
     "tiers": ["short", "mid", "long", "archive"]},
    {"query": "timeout", "as_of": 2},
]  # fmt: skip


@pytest.mark.parametrize("kw", RECALLS, ids=[str(i) for i in range(len(RECALLS))])
@pytest.mark.parametrize("tenant", TENANTS)
def test_recall_context_is_identical(pair, now, kw, tenant):
    lite, pg = pair
    kw = dict(kw)
    query = kw.pop("query")
    contexts = [
        renamer(s)(recall(s, query, tenant=tenant, now=now, **kw).to_dict()) for s in (lite, pg)
    ]
    close(*contexts)
    assert any(row["cosine"] for row in contexts[0]["rows"]) or tenant == "team-b"


def test_bulk_commits_agree(tmp_path, pg_url):
    """Big commits take PostgreSQL's COPY path; the rows must come out the same."""
    stores = [memcommit.open(tmp_path / "bulk.db"), memcommit.open(pg_url())]
    for store in stores:
        with store.commit(message="bulk", now=NOW) as tx:
            for i in range(300):
                tx.add(
                    f"bulk memory {i} with \t tab, \\ backslash and \n newline",
                    id=f"b{i:03d}",
                    tenant=TENANTS[i % 2],
                    tags=("t",) * (i % 2),
                    metadata={"i": i, "s": "x\ty"} if i % 3 else None,
                    always=i % 7 == 0,
                    valid_from=NOW - timedelta(days=i),
                    session=None if i % 5 else "s",
                )
        with store.commit(message="touch all", now=NOW + timedelta(seconds=1)) as tx:
            for i in range(0, 300, 2):
                tx.update(f"b{i:03d}", importance=0.25)
    try:
        assert everything(stores[0]) == everything(stores[1])
        assert all(s.check().ok for s in stores)
    finally:
        for store in stores:
            store.close()


def test_traces_begun_in_one_commit_list_in_the_same_order(tmp_path, pg_url):
    stores = [memcommit.open(tmp_path / "traces.db"), memcommit.open(pg_url())]
    try:
        listed = []
        for store in stores:
            with store.commit(now=NOW) as tx:
                for task in ("first", "second", "third"):
                    tx.begin_trace(task, tenant="team-a")
            listed.append([t.root.content for t in store.traces(tenant="team-a")])
            listed.append([t.root.content for t in store.traces()])
        assert listed == [["first", "second", "third"]] * 4
    finally:
        for store in stores:
            store.close()
