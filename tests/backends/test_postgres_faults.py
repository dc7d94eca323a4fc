"""Connections dropped under the store: a commit is whole or absent, the store carries on.

The server ends the store's connection with ``pg_terminate_backend`` from an admin
connection at three moments: while the commit is being built, while its rows are
being written, and while the server runs its COMMIT.
"""

from __future__ import annotations

import threading
import time
import uuid

import psycopg
import pytest

import memcommit
from memcommit.errors import BackendError, Unavailable

pytestmark = pytest.mark.postgres


@pytest.fixture
def victim(pg_url):
    """(store, application_name, schema) of a store whose connections the admin can find."""
    name = f"victim-{uuid.uuid4().hex[:8]}"
    url = pg_url(application_name=name)
    store = memcommit.open(url)
    with store.commit(message="before") as tx:
        tx.add("already there")
    yield store, name, url.rpartition("schema=")[2].partition("&")[0]
    store.close()


def terminate(admin, name: str, *, state: str | None = None, waiting: bool = False) -> int:
    """End the store's server sessions (those matching ``state``/``waiting``); how many ended."""
    query = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s"
    params: list = [name]
    if state is not None:
        query += " AND state = %s"
        params.append(state)
    if waiting:
        query += " AND wait_event_type IN ('Lock', 'Timeout')"
    return sum(1 for r in admin.execute(query, params) if r[0])


def wait_until(condition, what: str, limit: float = 20.0) -> None:
    """Poll ``condition`` (a server-side state another thread reaches) until it holds."""
    deadline = time.monotonic() + limit
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def readable(store) -> bool:
    try:
        store.find()
    except Unavailable:
        return False
    return True


@pytest.fixture(params=["ordered", "unordered"])
def ordered(request) -> bool:
    """Whether a test's commit is ordered in its block (it asks for its seq: the writers'
    lock and a transaction open from the start) or only adds (ordered as it lands)."""
    return request.param == "ordered"


def assert_landed_once(store, message: str, content: str) -> None:
    """An unordered commit whose connection was lost was looked for, sent again, landed once."""
    assert [c.message for c in store.log()] == [message, "before"]
    assert sorted(m.content for m in store.find()) == sorted(["already there", content])
    assert store.check().ok and store.verify().ok


def assert_absent_and_recovered(store, before: int) -> None:
    assert [c.message for c in store.log()] == ["before"] * before
    assert [m.content for m in store.find()] == ["already there"]
    with store.commit(message="after") as tx:  # the store reconnected by itself
        tx.add("written after the fault")
    assert [c.seq for c in store.log()] == [2, 1]
    assert store.check().ok


def test_connection_dropped_while_building_the_commit(victim, admin, ordered):
    store, name, _ = victim
    if not ordered:  # its connection is idle until it lands: lost, then a fresh one
        with store.commit(message="built") as tx:
            tx.add("lands on a fresh connection")
            assert terminate(admin, name, state="idle") >= 1
        assert tx.result is not None and tx.result.seq == 2
        assert_landed_once(store, "built", "lands on a fresh connection")
        return
    with pytest.raises(Unavailable, match="did not land") as err, store.commit() as tx:
        assert tx.pending.seq == 2
        tx.add("never lands")
        assert terminate(admin, name, state="idle in transaction") == 1
    assert "connection lost while committing commit 2" in str(err.value)
    assert_absent_and_recovered(store, 1)


def lost_mid_write(store, name, schema, admin, server, *, ordered) -> BaseException | None:
    """Commit on ``store`` with its session ended while it writes its rows; what it raised.

    Another session holds the commits table, so the INSERT waits mid-write (the admin
    polls from outside that transaction: pg_stat_activity is a snapshot within one).
    """
    outcome: list[BaseException | None] = []

    def commit() -> None:
        try:
            with store.commit(message="blocked") as tx:
                if ordered:
                    assert tx.pending.seq == 2
                tx.add("never lands")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    with psycopg.connect(server) as holder:
        holder.execute(f'LOCK TABLE "{schema}".commits IN SHARE ROW EXCLUSIVE MODE')
        writer = threading.Thread(target=commit)
        writer.start()
        wait_until(
            lambda: terminate(admin, name, state="active", waiting=True) == 1,
            "the commit to block on its INSERT",
        )
    writer.join(30)
    return outcome[0]


def test_connection_dropped_while_writing_rows(victim, admin, postgres_server, ordered):
    store, name, schema = victim
    outcome = lost_mid_write(store, name, schema, admin, postgres_server, ordered=ordered)
    if not ordered:  # its session ended before it landed, so it was sent again
        assert outcome is None
        assert_landed_once(store, "blocked", "never lands")
        return
    assert isinstance(outcome, Unavailable), outcome
    assert "did not land" in str(outcome)
    assert_absent_and_recovered(store, 1)


def test_an_ordered_commit_lost_with_a_pool_of_one_is_told_it_did_not_land(
    pg_url, admin, postgres_server
):
    """The lost connection goes back to the pool before the commit is looked for, as an
    unordered commit's does: a pool of one then has a connection to ask with, and the
    writer hears "did not land" at once, not "unknown" after connect_timeout."""
    name = f"victim-{uuid.uuid4().hex[:8]}"
    url = pg_url(application_name=name)
    schema = url.rpartition("schema=")[2].partition("&")[0]
    with memcommit.open(url, pool_size=1) as store:
        with store.commit(message="before") as tx:
            tx.add("already there")
        outcome = lost_mid_write(store, name, schema, admin, postgres_server, ordered=True)
        assert isinstance(outcome, Unavailable), outcome
        assert "commit 2; it did not land" in str(outcome)
        assert_absent_and_recovered(store, 1)


@pytest.mark.parametrize("read", ["update", "get", "find", "add-then-update"])
def test_connection_dropped_while_an_ordered_block_reads(victim, admin, read):
    """The block's own connection is lost before COMMIT was sent, so the commit did not
    land, and its writer is told so (as when the connection is lost while it writes)."""
    store, name, _ = victim
    (memory,) = store.find()
    with pytest.raises(Unavailable) as err, store.commit() as tx:
        assert tx.pending.seq == 2  # ordered: the lock and a transaction from here
        if read == "add-then-update":
            tx.add("never lands")
        (pid,) = admin.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = %s"
            " AND state = 'idle in transaction'",
            (name,),
        ).fetchone()
        admin.execute("SELECT pg_terminate_backend(%s, 10000)", (pid,))  # and it is gone
        if read in ("update", "add-then-update"):
            tx.update(memory.id, importance=0.9)
        elif read == "get":
            store.get(memory.id)
        else:
            store.find()
    assert "connection lost inside commit 2" in str(err.value)
    assert "it did not land" in str(err.value)
    assert_absent_and_recovered(store, 1)


def test_connection_dropped_during_the_server_commit(victim, admin, ordered):
    """A deferred trigger makes the server's COMMIT wait on a lock the admin holds."""
    store, name, schema = victim
    admin.execute(
        f'CREATE FUNCTION "{schema}".hold() RETURNS trigger LANGUAGE plpgsql AS'
        " $$ BEGIN PERFORM pg_advisory_lock(4242); RETURN NULL; END $$"
    )
    admin.execute(
        f'CREATE CONSTRAINT TRIGGER hold AFTER INSERT ON "{schema}".commits'
        f' DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "{schema}".hold()'
    )
    admin.execute("SELECT pg_advisory_lock(4242)")
    outcome: list[BaseException | None] = []

    def commit() -> None:
        try:
            with store.commit(message="at commit") as tx:
                if ordered:
                    assert tx.pending.seq == 2
                tx.add("never lands")
            outcome.append(None)
        except BaseException as exc:
            outcome.append(exc)

    writer = threading.Thread(target=commit)
    writer.start()
    try:
        wait_until(
            lambda: terminate(admin, name, state="active", waiting=True) == 1,
            "COMMIT to wait in the deferred trigger",
        )
    finally:
        admin.execute("SELECT pg_advisory_unlock(4242)")
    writer.join(30)
    admin.execute(f'DROP TRIGGER hold ON "{schema}".commits')
    if not ordered:  # its session ended before its COMMIT was done, so it was sent again
        assert outcome == [None]
        assert_landed_once(store, "at commit", "never lands")
        return
    assert isinstance(outcome[0], Unavailable), outcome
    assert "while committing commit 2; it did not land" in str(outcome[0])
    assert_absent_and_recovered(store, 1)


def test_idle_pooled_connections_dropped_between_calls(victim, admin):
    store, name, _ = victim
    assert store.find()  # the pool has an idle connection now
    assert terminate(admin, name, state="idle") >= 1
    assert [m.content for m in store.find()] == ["already there"]  # read retried on a fresh one
    assert terminate(admin, name, state="idle") >= 1
    with store.commit(message="after") as tx:  # begin retried on a fresh one
        tx.add("still writable")
    assert store.check().ok


def test_server_refusing_everyone_is_unavailable_within_the_timeout(pg_url, admin):
    """Sessions ended and new ones refused: calls fail with Unavailable, and no call hangs."""
    role = f"refused_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE ROLE {role} LOGIN")
    admin.execute(f"GRANT CREATE ON DATABASE test TO {role}")
    try:
        url = pg_url(application_name=role).replace("postgres@", f"{role}@", 1)
        with memcommit.open(url, connect_timeout=2) as store:
            with store.commit() as tx:
                tx.add("landed before the outage")
            admin.execute(f"ALTER ROLE {role} CONNECTION LIMIT 0")
            terminate(admin, role)
            started = time.monotonic()
            with pytest.raises(Unavailable):
                store.find()
            with pytest.raises(Unavailable), store.commit() as tx:
                tx.add("nowhere to go")
            assert time.monotonic() - started < 30
            admin.execute(f"ALTER ROLE {role} CONNECTION LIMIT -1")
            wait_until(lambda: readable(store), "the pool to reconnect (it backs off)", 60)
            assert [m.content for m in store.find()] == ["landed before the outage"]
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        admin.execute(f"DROP OWNED BY {role} CASCADE")
        admin.execute(f"DROP ROLE {role}")


def test_writer_waits_at_most_lock_timeout(pg_url, admin):
    """A writer stuck behind another one for too long gets a clear error; nothing lands."""
    with memcommit.open(pg_url(), lock_timeout=0.2) as store:
        with admin.transaction():  # another writer holding the store's lock
            admin.execute(store.backend._lock_sql)
            with pytest.raises(BackendError, match=r"lock_timeout=0\.2s"), store.commit() as tx:
                tx.add("waited too long")
        assert store.find() == [] and store.head is None
        with store.commit() as tx:  # the lock is free again
            tx.add("now it lands")
        assert [c.seq for c in store.log()] == [1]


def test_an_unordered_commit_outlives_its_dead_connection_with_a_pool_of_one(pg_url, admin):
    """The connection it was sent on goes back to the pool before the commit is looked
    for, so even a pool of one has a connection to ask with, and to send it again on."""
    name = f"victim-{uuid.uuid4().hex[:8]}"
    with memcommit.open(pg_url(application_name=name), pool_size=1) as store:
        with store.commit(message="before") as tx:
            tx.add("already there")
        assert terminate(admin, name, state="idle") == 1
        with store.commit(message="after") as tx:
            tx.add("lands on a fresh connection")
        assert tx.result is not None and tx.result.seq == 2
        assert [c.message for c in store.log()] == ["after", "before"]
        assert store.verify().ok
