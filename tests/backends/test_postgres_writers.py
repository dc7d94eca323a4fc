"""Many writer processes on one PostgreSQL store: each rule of a commit holds under the race.

Real processes (spawned), the real server with its default durability (each commit
flushed before its writer hears it landed), on distinct tenants and on one:
gap-free order with each commit's parent the one before it, expected versions
refused when they moved, nothing a writer was told landed missing, nothing
landed that no writer was told of, and connections ended by the server (or
writer processes killed) at any moment leaving each commit whole or absent, as
its writer was told.
"""

from __future__ import annotations

import itertools
import multiprocessing
import os
import random
import signal
import threading
import time
import uuid

import pytest
from writers_workers import commit_outcomes, race_updates

import memcommit
from memcommit.errors import Unavailable

pytestmark = pytest.mark.postgres

WRITERS = 4
EACH = 30


def spawn():
    return multiprocessing.get_context("spawn")


def run_writers(target: str, tenants: list[str], each: int) -> list[list[tuple]]:
    """Every writer's outcomes, writer ``w`` committing ``each`` times on ``tenants[w]``.

    Odd writers order their commits in the block (the writers' lock from the start),
    even ones only add (ordered by the server as they land): both kinds race.
    """
    memcommit.open(target).close()  # the schema exists before the race
    ctx = spawn()
    with ctx.Manager() as manager, ctx.Pool(len(tenants)) as pool:
        barrier = manager.Barrier(len(tenants))
        jobs = [
            (target, w, tenant, each, barrier, None, 0.0, w % 2 == 1)
            for w, tenant in enumerate(tenants)
        ]
        return pool.starmap(commit_outcomes, jobs)


def assert_store_agrees(target: str, outcomes: list[list[tuple]], tenants: list[str]) -> None:
    """The store holds exactly what the writers were told landed, in a gap-free chain."""
    landed = {key: seq for out in outcomes for key, what, seq in out if what == "landed"}
    absent = {key for out in outcomes for key, what, _ in out if what == "absent"}
    others = [o for out in outcomes for o in out if o[1] not in ("landed", "absent")]
    assert others == [], others
    with memcommit.open(target) as store:
        log = store.log()[::-1]
        assert [c.seq for c in log] == list(range(1, len(log) + 1))  # gap-free
        for prev, cur in itertools.pairwise(log):
            assert cur.parent == prev.id and cur.time >= prev.time
        assert {c.message: c.seq for c in log} == landed  # nothing lost, nothing unheard of
        found = {m.key: m for m in store.find()}
        assert set(found) == set(landed) and not absent & set(found)
        for key, m in found.items():
            assert m.created_commit == landed[key]
        for w, tenant in enumerate(tenants):  # each writer's commits in the order it made them
            mine = [int(c.message.split("-")[1]) for c in log if c.message.startswith(f"w{w}-")]
            assert mine == sorted(mine)
            assert all(m.tenant == tenant for k, m in found.items() if k.startswith(f"w{w}-"))
        assert store.check().ok
        assert store.verify().ok


def test_writers_on_distinct_tenants_land_every_commit_in_one_gap_free_chain(pg_url):
    target = pg_url()
    tenants = [f"tenant-{w}" for w in range(WRITERS)]
    outcomes = run_writers(target, tenants, EACH)
    assert all(what == "landed" for out in outcomes for _, what, _ in out)
    assert_store_agrees(target, outcomes, tenants)
    with memcommit.open(target) as store:  # each tenant sees its own commits only
        for tenant in tenants:
            seen = store.tenant(tenant).log()
            assert len(seen) == EACH
            assert {m.tenant for m in store.tenant(tenant).find()} == {tenant}


def test_writers_on_one_tenant_land_every_commit_in_one_gap_free_chain(pg_url):
    target = pg_url()
    tenants = ["shared"] * WRITERS
    outcomes = run_writers(target, tenants, EACH)
    assert all(what == "landed" for out in outcomes for _, what, _ in out)
    assert_store_agrees(target, outcomes, tenants)


def test_expected_versions_race_across_processes_one_winner_per_version(pg_url):
    target = pg_url()
    with memcommit.open(target) as store, store.commit() as tx:
        memory_id = tx.add("version 1").id
    rounds = 15
    ctx = spawn()
    with ctx.Manager() as manager, ctx.Pool(WRITERS) as pool:
        barrier = manager.Barrier(WRITERS)
        jobs = [(target, memory_id, w, rounds, barrier) for w in range(WRITERS)]
        results = [r for out in pool.starmap(race_updates, jobs) for r in out]
    won = sorted(r[1] for r in results if r[0] == "won")
    conflicts = [r for r in results if r[0] == "conflict"]
    assert len(won) + len(conflicts) == WRITERS * rounds
    assert won == list(range(2, len(won) + 2))  # each version written by exactly one winner
    assert all(actual > expected for _, expected, actual in conflicts)  # it had really moved
    with memcommit.open(target) as store:
        history = store.history(memory_id)
        assert [m.version for m in history] == list(range(1, len(won) + 2))
        assert [c.seq for c in store.log()[::-1]] == list(range(1, len(won) + 2))
        assert store.check().ok and store.verify().ok


def _terminator(
    admin_url: str, names: list[str], barrier, stop: threading.Event, seed: int, idle: bool
) -> int:
    """Once the writers are ready, end a random writer's server sessions every few
    milliseconds until ``stop``; how many it ended. ``idle``: idle ones too (an
    unordered writer's session is idle but for the one round trip that lands it)."""
    import psycopg

    rng = random.Random(seed)
    ended = 0
    barrier.wait(60)
    with psycopg.connect(admin_url, autocommit=True) as admin:
        while not stop.is_set():
            time.sleep(rng.uniform(0.005, 0.05))
            found = admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND (%s OR state <> 'idle')",
                (rng.choice(names), idle),
            )
            ended += sum(1 for (r,) in found if r)
    return ended


@pytest.mark.parametrize("ordered", [True, False], ids=["ordered", "unordered"])
@pytest.mark.parametrize("shared_tenant", [False, True], ids=["distinct", "one"])
def test_connections_ended_mid_commit_leave_each_commit_whole_or_absent_as_told(
    pg_url, postgres_server, shared_tenant, ordered
):
    """The server ends writers' sessions at random moments. Each commit's block runs
    5 ms, as an agent's own code would. An ordered block holds its transaction open
    throughout, so some sessions end inside a block (told "absent": 7-10 of 120 in a
    run) and the rest land; an unordered block's session is idle until it lands, and
    one ended as it lands is looked for and sent again: it lands once, or is told."""
    tag = uuid.uuid4().hex[:8]
    names = [f"writer-{tag}-{w}" for w in range(3)]
    schema_url = pg_url()
    memcommit.open(schema_url).close()
    stop = threading.Event()
    ended: list[int] = []
    ctx = spawn()
    tenants = ["shared" if shared_tenant else f"t{w}" for w in range(len(names))]
    after = (None, 0.005, ordered)  # no acked counter, a 5 ms block, ordered or not
    with ctx.Manager() as manager, ctx.Pool(len(names)) as pool:
        barrier = manager.Barrier(len(names) + 1)  # the writers and the terminator
        killer = threading.Thread(
            target=lambda: ended.append(
                _terminator(postgres_server, names, barrier, stop, 7, idle=not ordered)
            )
        )
        killer.start()
        try:
            jobs = [
                (f"{schema_url}&application_name={name}", w, tenants[w], 40, barrier, *after)
                for w, name in enumerate(names)
            ]
            outcomes = pool.starmap(commit_outcomes, jobs)
        finally:
            stop.set()
            killer.join()
    assert ended[0] > 0  # sessions were really ended under the writers
    told = [what for out in outcomes for _, what, _ in out]
    assert "landed" in told and ("absent" in told or not ordered)
    assert_store_agrees(schema_url, outcomes, tenants)


def test_writer_processes_killed_mid_commit_leave_whole_commits(pg_url):
    """SIGKILL to writer processes at random moments: every stored commit is whole."""
    target = pg_url()
    memcommit.open(target).close()
    ctx = spawn()
    barrier = ctx.Barrier(3)
    acked = [ctx.Value("i", 0) for _ in range(2)]
    procs = [
        ctx.Process(target=commit_outcomes, args=(target, w, f"t{w}", 10_000, barrier, acked[w]))
        for w in range(2)
    ]
    for p in procs:
        p.start()
    barrier.wait()
    time.sleep(random.uniform(0.5, 1.0))
    for p in procs:
        os.kill(p.pid, signal.SIGKILL)
        p.join()
    with memcommit.open(target) as store:
        log = store.log()[::-1]
        assert [c.seq for c in log] == list(range(1, len(log) + 1))
        keys = {m.key for m in store.find()}
        assert keys == {c.message for c in log}  # each commit with its memory, or neither
        for w in range(2):  # every commit the writer heard of is there (and at most one more)
            mine = sum(1 for c in log if c.message.startswith(f"w{w}-"))
            assert acked[w].value <= mine <= acked[w].value + 1
        assert store.check().ok and store.verify().ok
        with store.commit() as tx:  # the killed writers' locks went with their sessions
            tx.add("after the kills")


def test_connection_ended_after_the_server_commit_reports_landed(pg_url, admin):
    """Ended after its COMMIT ran but before the flush that makes it durable was confirmed."""
    name = f"flush-{uuid.uuid4().hex[:8]}"
    with memcommit.open(pg_url(application_name=name)) as store:
        with store.commit(message="before") as tx:
            tx.add("already there")
        backend = store.backend
        # the durability step waits on a lock the admin holds, so the session can be ended there
        backend._flush = ("BEGIN", "SELECT pg_advisory_xact_lock(4243)", *backend._flush[1:])
        admin.execute("SELECT pg_advisory_lock(4243)")
        outcome: list[BaseException | None] = []

        def commit() -> None:
            try:
                with store.commit(message="landed") as tx:
                    tx.add("it landed")
                outcome.append(None)
            except BaseException as exc:
                outcome.append(exc)

        writer = threading.Thread(target=commit)
        writer.start()
        try:
            wait_for_lock_wait(admin, name)
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE application_name = %s AND wait_event_type = 'Lock'",
                (name,),
            )
        finally:
            admin.execute("SELECT pg_advisory_unlock(4243)")
        writer.join(30)
        assert outcome == [None]  # told it landed: it did
        assert [c.message for c in store.log()] == ["landed", "before"]
        assert store.check().ok and store.verify().ok


def test_a_lost_connection_with_the_server_refusing_says_unknown_not_failed(pg_url, admin):
    """Ended after its COMMIT, and no new session allowed: the writer is told it cannot know."""
    role = f"flushgone_{uuid.uuid4().hex[:8]}"
    admin.execute(f"CREATE ROLE {role} LOGIN")
    admin.execute(f"GRANT CREATE ON DATABASE test TO {role}")
    try:
        url = pg_url(application_name=role).replace("postgres@", f"{role}@", 1)
        with memcommit.open(url, connect_timeout=2) as store:
            with store.commit(message="before") as tx:
                tx.add("already there")
            backend = store.backend
            backend._flush = ("BEGIN", "SELECT pg_advisory_xact_lock(4244)", *backend._flush[1:])
            admin.execute("SELECT pg_advisory_lock(4244)")
            outcome: list[BaseException | None] = []

            def commit() -> None:
                try:
                    with store.commit(message="maybe") as tx:
                        tx.add("it landed")
                    outcome.append(None)
                except BaseException as exc:
                    outcome.append(exc)

            writer = threading.Thread(target=commit)
            writer.start()
            try:
                wait_for_lock_wait(admin, role)
                admin.execute(f"ALTER ROLE {role} CONNECTION LIMIT 0")
                admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s",
                    (role,),
                )
            finally:
                admin.execute("SELECT pg_advisory_unlock(4244)")
            writer.join(60)
            assert isinstance(outcome[0], Unavailable), outcome
            assert "whether it landed is unknown" in str(outcome[0])
            admin.execute(f"ALTER ROLE {role} CONNECTION LIMIT -1")
            deadline = time.monotonic() + 60
            while True:  # the pool backs off before it reconnects
                try:
                    messages = [c.message for c in store.log()]
                    break
                except Unavailable:
                    assert time.monotonic() < deadline
                    time.sleep(0.2)
            assert messages == ["maybe", "before"]  # it had landed
    finally:
        admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = %s", (role,)
        )
        admin.execute(f"DROP OWNED BY {role} CASCADE")
        admin.execute(f"DROP ROLE {role}")


def wait_for_lock_wait(admin, name: str) -> None:
    """Until a session of ``name`` (application name) waits on a lock."""
    deadline = time.monotonic() + 20
    while not admin.execute(
        "SELECT 1 FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'",
        (name,),
    ).fetchall():
        assert time.monotonic() < deadline, "the flush never waited"
        time.sleep(0.01)
