"""Migration 0005: memory versions partitioned by tenant, and a purge that rewrites one partition.

A store at the layout before it (migrations 0001-0003, as written) is upgraded on
open and keeps every memory, commit and hash; a purge rewrites only the
partitions of its tenants (their files change, the others' stay), and a rewrite
that cannot have its lock gives up instead of queueing every reader behind it.
"""

from __future__ import annotations

import io
import re
import threading
import uuid

import psycopg
import pytest
from click.testing import CliRunner

import memcommit
from memcommit.cli import main
from memcommit.store.backends.migrations import migrations
from memcommit.store.backends.postgres import LEDGER
from memcommit.store.transfer import export_jsonl

pytestmark = pytest.mark.postgres

TABLES = ("commits", "versions", "traces", "usage", "state")


def history(store) -> dict[str, str]:
    """Memories in four tenants: updates, a purge, a trace, a bulk commit of 100."""
    ids = {}
    with store.commit(message="first", author="t") as tx:
        for tenant in ("acme", "globex", "initech", "umbrella"):
            ids[tenant] = tx.add(f"{tenant} keeps the invoices", tenant=tenant, key="k").id
    with store.commit(message="second", author="t") as tx:
        tx.update(ids["acme"], content="acme keeps the receipts")
        doomed = tx.add("the vault code is 4417", tenant="globex").id
    with store.commit(message="purge", author="t") as tx:
        tx.purge(doomed)
    with store.commit(message="bulk", author="t") as tx:
        for i in range(100):
            tx.add(f"bulk note {i}", tenant="initech")
    with store.commit(message="trace", author="t") as tx:
        trace = tx.begin_trace("rotate keys", tenant="umbrella")
        tx.step(trace, "rotated")
    return ids


def kind_of_versions(conn, schema: str) -> tuple[str, int]:
    """(relkind of versions, how many partitions it has) in ``schema``."""
    kind = conn.execute(
        "SELECT c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = %s AND c.relname = 'versions'",
        (schema,),
    ).fetchone()[0]
    parts = conn.execute(
        "SELECT count(*) FROM pg_inherits WHERE inhparent = %s::regclass",
        (f'"{schema}".versions',),
    ).fetchone()[0]
    return kind, parts


def at_layout_before_partitions(admin, source: str, schema: str) -> None:
    """Schema ``schema`` made by migrations 0001-0003 as written, holding ``source``'s rows."""
    admin.execute(f'CREATE SCHEMA "{schema}"')
    with admin.transaction():
        admin.execute(f'SET LOCAL search_path TO "{schema}"')
        admin.execute(LEDGER)
        for number, name, script in migrations("postgres")[:3]:
            admin.execute(script.encode())
            admin.execute(
                "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)", (number, name)
            )
        for table in TABLES:
            columns = ", ".join(
                name
                for (name,) in admin.execute(
                    "SELECT column_name FROM information_schema.columns"
                    " WHERE table_schema = %s AND table_name = %s ORDER BY ordinal_position",
                    (schema, table),
                )
            )
            admin.execute(
                f'INSERT INTO "{schema}".{table} ({columns})'
                f' SELECT {columns} FROM "{source}".{table}'
            )


@pytest.fixture
def schemas(admin):
    made: list[str] = []

    def new() -> str:
        made.append(f"test_{uuid.uuid4().hex[:16]}")
        return made[-1]

    yield new
    for schema in made:
        admin.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def test_a_store_before_partitions_migrates_and_keeps_every_memory_and_hash(
    postgres_server, admin, schemas
):
    source, old = schemas(), schemas()
    with memcommit.open(postgres_server, schema=source) as store:
        history(store)
        exported = io.StringIO()
        export_jsonl(store, exported)
        log = store.log()
    at_layout_before_partitions(admin, source, old)
    assert kind_of_versions(admin, old) == ("r", 0)

    with memcommit.open(postgres_server, schema=old, partitions=64) as store:
        assert kind_of_versions(admin, old) == ("p", 64)
        again = io.StringIO()
        export_jsonl(store, again)
        assert again.getvalue() == exported.getvalue()
        assert store.log() == log
        report = store.verify()
        assert report.ok and report.commits == len(log)
        assert store.check(full=True).ok
        with store.commit(message="after", author="t") as tx:  # writes go on, chained
            tx.add("written after the migration", tenant="acme")
        assert store.verify().ok
    spread = admin.execute(
        f'SELECT count(DISTINCT tableoid) FROM "{old}".versions'
        " WHERE tenant IN ('acme', 'globex', 'initech', 'umbrella')"
    ).fetchone()[0]
    assert spread > 1  # the tenants landed in partitions of their own


def files(admin, schema: str) -> dict[str, int]:
    """Each versions partition's file number in ``schema`` (a rewrite gives it a new one)."""
    return dict(
        admin.execute(
            "SELECT c.relname, c.relfilenode FROM pg_inherits i JOIN pg_class c"
            " ON c.oid = i.inhrelid WHERE i.inhparent = %s::regclass",
            (f'"{schema}".versions',),
        ).fetchall()
    )


def partition_of(admin, schema: str, tenant: str) -> str:
    return (
        admin.execute(
            f'SELECT DISTINCT tableoid::regclass::text FROM "{schema}".versions WHERE tenant = %s',
            (tenant,),
        )
        .fetchone()[0]
        .rpartition(".")[2]
    )


def test_a_purge_rewrites_only_the_partition_of_its_tenant(postgres_server, admin, schemas):
    schema = schemas()
    with memcommit.open(postgres_server, schema=schema) as store:
        ids = history(store)
        before = files(admin, schema)
        with store.commit(message="purge acme", author="t") as tx:
            tx.purge(ids["acme"])
        after = files(admin, schema)
        rewritten = {name for name in before if before[name] != after[name]}
        assert rewritten == {partition_of(admin, schema, "acme")}

        assert store.scrub() is True  # by hand: every partition
        assert all(files(admin, schema)[name] != after[name] for name in after)


def test_a_rewrite_that_cannot_have_its_lock_gives_up_and_blocks_no_reader(
    postgres_server, admin, schemas
):
    schema = schemas()
    url = f"{postgres_server}?schema={schema}"
    with memcommit.open(url, lock_timeout=1) as store:
        ids = history(store)
        part = partition_of(admin, schema, "acme")
        holder = psycopg.connect(postgres_server)  # a long transaction reading acme's rows
        holder.execute(f'SELECT count(*) FROM "{schema}".{part}')
        try:
            done: list[bool] = []
            scrubbing = threading.Thread(target=lambda: done.append(store.scrub({"acme"})))
            scrubbing.start()
            with memcommit.open(url, lock_timeout=1) as other:  # reads acme meanwhile
                for _ in range(20):
                    assert other.get(ids["acme"]).tenant == "acme"
            scrubbing.join()
            assert done == [False]
        finally:
            holder.close()
        assert store.scrub({"acme"}) is True


@pytest.mark.parametrize("bad", [0, 101, True, "8", 2.5])
def test_a_bad_partition_count_is_refused_naming_it_and_creates_nothing(
    postgres_server, admin, bad
):
    schema = f"test_{uuid.uuid4().hex[:16]}"
    with pytest.raises(memcommit.errors.InvalidInput, match="partitions") as refused:
        memcommit.open(postgres_server, schema=schema, partitions=bad)
    assert refused.value.field == "partitions" and refused.value.value == bad
    assert admin.execute(
        "SELECT count(*) FROM pg_namespace WHERE nspname = %s", (schema,)
    ).fetchone() == (0,)


def test_a_new_store_gets_the_partitions_it_asks_for(postgres_server, admin, schemas):
    schema = schemas()
    with memcommit.open(postgres_server, schema=schema, partitions=3) as store:
        with store.tenant("acme").commit(message="one") as tx:
            tx.add("a fact")
        assert kind_of_versions(admin, schema) == ("p", 3)
        assert store.check().ok


def test_a_read_command_on_an_old_store_names_the_command_that_upgrades_it(
    postgres_server, admin, schemas
):
    """Read commands open PostgreSQL read-only: the refusal names a command that upgrades the
    store, and running it does."""
    source, old = schemas(), schemas()
    with memcommit.open(postgres_server, schema=source) as store:
        history(store)
    at_layout_before_partitions(admin, source, old)
    target = f"{postgres_server}{'&' if '?' in postgres_server else '?'}schema={old}"
    refused = CliRunner().invoke(main, ["find", "--store", target, "--tenant", "acme"])
    advice = re.search(r"\(e\.g\. `memcommit (\w+) --store \.\.\.`\)", refused.output)
    assert refused.exit_code == 1 and "needs migrations" in refused.output and advice
    upgraded = CliRunner().invoke(main, [advice.group(1), "--store", target])
    assert upgraded.exit_code == 0, upgraded.output
    found = CliRunner().invoke(main, ["find", "--store", target, "--tenant", "acme", "--json"])
    assert found.exit_code == 0 and "acme keeps the receipts" in found.output
