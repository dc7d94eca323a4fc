"""Fixtures of the PostgreSQL-specific tests: fresh schemas, an admin connection, workers.

Each test gets schemas of its own on the test server (``postgres_server``, from the
root conftest: skipped when unreachable, failed under MEMCOMMIT_REQUIRE_POSTGRES=1),
dropped after the test.
"""

from __future__ import annotations

import uuid
from urllib.parse import quote, urlencode

import psycopg
import pytest


@pytest.fixture
def pg_url(postgres_server):
    """``pg_url()`` -> the URL of a new store schema (``?schema=...``), dropped after the test."""
    made: list[str] = []

    def new(**params: str) -> str:
        schema = f"test_{uuid.uuid4().hex[:16]}"
        made.append(schema)
        joiner = "&" if "?" in postgres_server else "?"
        return postgres_server + joiner + urlencode({"schema": schema, **params}, quote_via=quote)

    yield new
    if made:
        with psycopg.connect(postgres_server, autocommit=True) as conn:
            for schema in made:
                conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def admin(postgres_server):
    """A plain autocommit connection to the test server, for looking behind the store."""
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        yield conn
