"""Fixtures of the fault tests that need a store alone in its database."""

from __future__ import annotations

import uuid

import pytest

import memcommit


@pytest.fixture
def own_store(store_backend, tmp_path, request):
    """(store, server URL or None) alone in its database.

    PostgreSQL: a database of its own, since an open transaction of any session
    in the same database (other tests on a shared server) keeps dead rows alive.
    """
    if store_backend == "sqlite":
        with memcommit.open(tmp_path / "erasure.db") as store:
            yield store, None
        return
    import psycopg

    server = request.getfixturevalue("postgres_server")
    name = f"erasure_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = server.rsplit("/", 1)[0] + "/" + name
    try:
        with memcommit.open(url) as store:
            yield store, url
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
