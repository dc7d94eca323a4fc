"""A store written by a newer memcommit is refused on open, naming both versions (defect 4)."""

from __future__ import annotations

import sqlite3

import pytest

import memcommit
from memcommit.errors import SchemaTooNew
from memcommit.store.backends.migrations import migrations


def _supported(backend: str) -> int:
    return max(number for number, _, _ in migrations(backend))


def _mark_future(where: str, store_backend: str, request) -> None:
    if store_backend == "sqlite":
        with sqlite3.connect(where) as conn:
            conn.execute("INSERT INTO schema_migrations VALUES (9999, 'future', '2030-01-01')")
        return
    import psycopg

    url = request.getfixturevalue("postgres_server")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'INSERT INTO "{where}".schema_migrations VALUES (9999, %s)', ("future",))


@pytest.mark.parametrize("read_only", [False, True])
def test_a_newer_schema_is_refused_on_open(make_store, store_backend, request, read_only, now):
    store = make_store("future")
    with store.commit(message="m", author="t", now=now) as tx:
        tx.add("written by today's code", tenant="acme")
    backend = store.backend
    where = backend.target if store_backend == "sqlite" else backend.schema
    store.close()
    _mark_future(where, store_backend, request)

    with pytest.raises(SchemaTooNew) as caught:
        make_store("future", **({"read_only": True} if read_only else {}))
    error = caught.value
    assert (error.found, error.supported) == (
        9999,
        _supported("sqlite" if store_backend == "sqlite" else "postgres"),
    )
    assert "9999" in str(error) and str(error.supported) in str(error)


def test_the_error_is_part_of_the_tree():
    assert issubclass(SchemaTooNew, memcommit.errors.MemcommitError)


def test_a_current_store_opens_while_a_writer_holds_the_lock(store_target):
    target, options = store_target
    writer = memcommit.open(target, **options)
    try:
        with writer.commit(message="a long commit", author="t") as tx:
            tx.add("written while the other process opens", tenant="acme")
            # the writers' lock is held until the block ends; an open must not wait for it
            opened = memcommit.open(target, **options, **_short_wait(target))
            try:
                assert opened.find() == []
                assert opened.head is None
            finally:
                opened.close()
        reopened = memcommit.open(target, **options)
        assert [m.content for m in reopened.find()] == ["written while the other process opens"]
        reopened.close()
    finally:
        writer.close()


def _short_wait(target: str) -> dict[str, float]:
    """The backend's option for how long a writer waits for the lock: one second."""
    return {"lock_timeout": 1} if target.startswith("postgresql") else {"busy_timeout": 1}


def test_a_store_opens_while_an_export_runs(store_target):
    from memcommit.store.transfer import export_jsonl

    target, options = store_target
    source = memcommit.open(target, **options)
    with source.commit(message="seed", author="t") as tx:
        tx.add("exported while a server starts", tenant="acme")

    class Sink:
        """Where the export writes; the first line it gets, another process opens the store."""

        def __init__(self) -> None:
            self.seen: list[str] | None = None

        def write(self, line: str) -> int:
            if self.seen is None:
                opened = memcommit.open(target, **options, **_short_wait(target))
                try:
                    self.seen = [m.content for m in opened.find()]
                finally:
                    opened.close()
            return len(line)

    sink = Sink()
    try:
        export_jsonl(source, sink)
    finally:
        source.close()
    assert sink.seen == ["exported while a server starts"]
