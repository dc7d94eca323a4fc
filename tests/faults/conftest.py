"""Fixtures of the fault tests that need a store alone in its database."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

import memcommit


@pytest.fixture
def own_store(store_backend, tmp_path, request):
    """(store, server URL or None) alone in its database (`own_postgres_store`)."""
    if store_backend == "sqlite":
        with memcommit.open(tmp_path / "erasure.db") as store:
            yield store, None
        return
    yield request.getfixturevalue("own_postgres_store")


@pytest.fixture
def own_postgres_store(postgres_server) -> Iterator[tuple[memcommit.Store, str]]:
    """(store, URL) of a PostgreSQL database of its own, since an open transaction of any
    session in the same database (other tests on a shared server) keeps dead rows alive."""
    import psycopg

    name = f"erasure_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    url = postgres_server.rsplit("/", 1)[0] + "/" + name
    try:
        with memcommit.open(url) as store:
            yield store, url
    finally:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
