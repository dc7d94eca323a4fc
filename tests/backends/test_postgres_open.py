"""Opening a PostgreSQL store: schemas, idempotent migrations, options and clear errors."""

from __future__ import annotations

import time

import pytest

import memcommit
from memcommit.errors import InvalidInput, Unavailable
from memcommit.store.backends.migrations import migrations
from memcommit.store.backends.postgres import DEFAULT_SCHEMA, split_target

pytestmark = pytest.mark.postgres


def tables(admin, schema: str) -> set[str]:
    """The tables of ``schema``, a partitioned one by its own name (not its partitions')."""
    rows = admin.execute(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relkind IN ('r', 'p') AND NOT c.relispartition",
        (schema,),
    )
    return {r[0] for r in rows}


def schema_of(url: str) -> str:
    return url.rpartition("schema=")[2].partition("&")[0]


def test_open_creates_the_schema_and_migrates_once(pg_url, admin):
    url = pg_url()
    with memcommit.open(url) as store, store.commit() as tx:
        tx.add("kept across opens")
    assert tables(admin, schema_of(url)) == {
        "schema_migrations", "commits", "versions", "traces", "usage", "state", "vectors",
    }  # fmt: skip
    with memcommit.open(url) as again:  # second open: nothing to apply, nothing lost
        assert again.backend.applied_migrations() == [n for n, _, _ in migrations("postgres")]
        assert [m.content for m in again.find()] == ["kept across opens"]
        assert again.check().ok
    count = admin.execute(f'SELECT count(*) FROM "{schema_of(url)}".schema_migrations')
    assert count.fetchone()[0] == len(migrations("postgres"))


def test_concurrent_first_opens_migrate_once(pg_url, admin):
    from concurrent.futures import ThreadPoolExecutor

    url = pg_url()
    with ThreadPoolExecutor(4) as pool:
        stores = list(pool.map(lambda _: memcommit.open(url), range(4)))
    for store in stores:
        store.close()
    rows = admin.execute(f'SELECT version FROM "{schema_of(url)}".schema_migrations')
    assert [r[0] for r in rows] == [n for n, _, _ in migrations("postgres")]


def test_schemas_keep_stores_apart(pg_url):
    a, b = pg_url(), pg_url()
    with memcommit.open(a) as one, memcommit.open(b) as two:
        with one.commit() as tx:
            tx.add("only in a")
        assert two.find() == [] and two.head is None
        with two.commit() as tx:
            tx.add("only in b")
        assert [c.seq for c in one.log()] == [1] and [c.seq for c in two.log()] == [1]


def test_schema_option_and_postgres_alias(pg_url, postgres_server, admin):
    schema = schema_of(pg_url())
    alias = postgres_server.replace("postgresql://", "postgres://", 1)
    with memcommit.open(alias, schema=schema) as store, store.commit() as tx:
        tx.add("x")
    assert "commits" in tables(admin, schema)


def test_split_target_defaults_and_refusals():
    url, schema = split_target("postgresql://u@h/db", None, 5)
    assert schema == DEFAULT_SCHEMA and url == "postgresql://u@h/db?connect_timeout=5"
    url, schema = split_target("postgresql://u@h/db?schema=s1&sslmode=disable", None, 2)
    assert schema == "s1" and url == "postgresql://u@h/db?sslmode=disable&connect_timeout=2"
    assert split_target("postgresql://u@h/db?connect_timeout=9", "s2", 2)[0].endswith("=9")
    kept = split_target("postgresql://u@h/db?options=-c%20work_mem%3D8MB", None, 5)[0]
    assert "options=-c%20work_mem%3D8MB" in kept  # libpq reads %20, not "+", as a space
    with pytest.raises(InvalidInput, match="schema"):
        split_target("postgresql://u@h/db?schema=a", "b", 5)
    for bad in ("1abc", "a-b", "x" * 64, "", 'a"; drop'):
        with pytest.raises(InvalidInput) as err:
            split_target("postgresql://u@h/db", bad, 5)
        assert err.value.field == "schema"
    with pytest.raises(InvalidInput) as err:
        split_target("postgresql://u@h/db", None, 0)
    assert err.value.field == "connect_timeout"


def test_unknown_option_is_refused(pg_url):
    with pytest.raises(InvalidInput) as err:
        memcommit.open(pg_url(), synchronous="FULL")
    assert err.value.field == "synchronous"


def test_refused_connection_is_a_clear_error_at_once():
    started = time.monotonic()
    with pytest.raises(
        Unavailable, match=r"cannot open postgresql://nobody:\*\*\*@127.0.0.1:1/none"
    ):
        memcommit.open("postgresql://nobody:secret@127.0.0.1:1/none")
    assert time.monotonic() - started < 5


def test_silent_server_fails_within_connect_timeout():
    """A host that never answers (a listening socket nobody accepts on) must not hang open()."""
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(0)
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(Unavailable, match="cannot open"):
            memcommit.open(f"postgresql://u@127.0.0.1:{port}/db", connect_timeout=1)
        assert time.monotonic() - started < 10


def test_password_never_shows_in_errors_or_repr():
    with pytest.raises(Unavailable) as err:
        memcommit.open("postgresql://nobody:hunter2@127.0.0.1:1/none")
    assert "hunter2" not in str(err.value)


def test_a_read_only_open_refuses_a_schema_it_would_have_to_write(pg_url, admin):
    url = pg_url()
    with pytest.raises(InvalidInput, match="holds no memcommit store yet: `memcommit init"):
        memcommit.open(url, read_only=True)
    memcommit.open(url).close()
    undone = 2  # 0002_trace_order: undone by hand, dropping its index
    assert migrations("postgres")[undone - 1][1] == "trace_order"
    admin.execute(f'DELETE FROM "{schema_of(url)}".schema_migrations WHERE version = %s', (undone,))
    admin.execute(f'DROP INDEX "{schema_of(url)}".traces_order')
    with pytest.raises(InvalidInput, match=rf"needs migrations \[{undone}\]"):
        memcommit.open(url, read_only=True)
    memcommit.open(url).close()  # a read-write open applies it again
    with memcommit.open(url, read_only=True) as reader:
        assert undone in reader.backend.applied_migrations() and reader.check().ok


@pytest.mark.parametrize("column", ["seq", "end_seq"])
def test_check_finds_a_version_that_names_no_stored_commit(pg_url, admin, column):
    """No foreign key checks a version's commits on every write (migration 0006): the
    writers keep the rule, and `check` finds a version that breaks it, as on SQLite."""
    url = pg_url()
    with memcommit.open(url) as store:
        with store.commit() as tx:
            kept = tx.add("kept")
        with store.commit() as tx:
            tx.update(kept.id, content="changed")  # version 1 ends at commit 2
        schema = schema_of(url)
        links = admin.execute(
            "SELECT count(*) FROM pg_constraint WHERE contype = 'f' AND conrelid = %s::regclass",
            (f'"{schema}".versions',),
        )
        assert links.fetchone() == (0,)
        assert store.check().ok
        admin.execute(
            f'UPDATE "{schema}".versions SET {column} = 99 WHERE id = %s AND version = 1',
            (kept.id,),
        )
        report = store.check()
    assert not report.ok
    assert any("not written, or ended, by a stored commit" in p for p in report.problems)


def test_repr_echoes_the_url_as_typed_with_the_password_masked(pg_url, postgres_server):
    url = pg_url()
    with memcommit.open(url) as store:
        assert repr(store) == f"<memcommit.Store {url!r} open>"  # no connect_timeout added
    schema = schema_of(url)
    with memcommit.open(postgres_server, schema=schema) as store:
        assert repr(store) == f"<memcommit.Store '{postgres_server} (schema {schema})' open>"
    secret = "postgresql://agent:hunter2@db.example:5432/mem?password=hunter3&schema=s"
    shown = split_target.__globals__["shown"](secret)
    assert "hunter" not in shown
    assert shown == "postgresql://agent:***@db.example:5432/mem?password=***&schema=s"
