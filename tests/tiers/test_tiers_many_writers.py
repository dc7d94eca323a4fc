"""Many processes on one store, tiers and compaction attached, two MCP servers among them.

The property: no writer is ever shown an error for a commit that landed, and
once they all finished, no partition is over its capacity. Both backends.
"""

from __future__ import annotations

import multiprocessing
from collections import defaultdict

import pytest
from tiers_writers import CAPACITY, MCP_CAPACITY, drive_mcp_server, write_with_tiers

import memcommit

WRITERS = 4
COMMITS_EACH = 40
SERVERS = 2
REMEMBERS_EACH = 45  # two servers: past the server's capacity of 64, so it maintains too

pytestmark = pytest.mark.slow


@pytest.fixture
def shared(store_backend, tmp_path, request):
    """(target, options) of one fresh store that separate processes can open."""
    if store_backend == "sqlite":
        return str(tmp_path / "shared.db"), {}
    return request.getfixturevalue("pg_schema_url"), {}


@pytest.fixture
def pg_schema_url(postgres_server):
    import uuid
    from urllib.parse import urlencode

    import psycopg

    schema = f"test_{uuid.uuid4().hex[:16]}"
    joiner = "&" if "?" in postgres_server else "?"
    yield postgres_server + joiner + urlencode({"schema": schema})
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_no_writer_sees_an_error_for_a_landed_commit_and_no_partition_stays_over(shared):
    target, options = shared
    memcommit.open(target, **options).close()  # made before the writers race to make it
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(WRITERS + SERVERS) as pool:
        writers = [
            pool.apply_async(write_with_tiers, (target, options, w, COMMITS_EACH))
            for w in range(WRITERS)
        ]
        servers = [
            pool.apply_async(drive_mcp_server, (target, REMEMBERS_EACH)) for _ in range(SERVERS)
        ]
        written = [w.get(timeout=600) for w in writers]
        served = [s.get(timeout=600) for s in servers]
    errors = [e for r in written + served for e in r["errors"]]
    print(
        f"\n{WRITERS} tier processes x {COMMITS_EACH} commits + {SERVERS} MCP servers x "
        f"{REMEMBERS_EACH} remembers: {len(errors)} errors"
    )
    assert errors == []
    with memcommit.open(target, **options) as store:
        authors = defaultdict(int)
        for commit in store.log():
            authors[commit.author] += 1
        assert all(authors[f"worker-{w}"] == COMMITS_EACH for w in range(WRITERS))
        assert authors["mcp"] == SERVERS * REMEMBERS_EACH
        assert sum(len(r["landed"]) for r in written) == WRITERS * COMMITS_EACH
        limits = {"default": CAPACITY, "agents": MCP_CAPACITY}
        held = store.tier_counts(tiers=["short"], always=False)
        over = {k: n for k, n in held.items() if n > limits[k[1]]}
        assert over == {}, over
        assert any(m.kind == "summary" for m in store.find(tenant="default"))
        assert store.check().ok
