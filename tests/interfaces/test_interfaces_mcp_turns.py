"""One tenant's slow tool call never stalls another tenant's server in the same process.

The servers of one process (``--tokens``) answer on one event loop over one Store.
Tenant a's ``remember`` waits for the writers' lock another writer holds; tenant
b's ``recall`` and ``log`` must be answered meanwhile (PostgreSQL: reads run beside
commits), and a's call lands once the lock is let go.
"""

from __future__ import annotations

import threading
import uuid

import anyio
import psycopg
import pytest
from interfaces_mcp_client import call, connect, run_async

import memcommit
from memcommit.interfaces.mcp import create_server

pytestmark = pytest.mark.postgres


@pytest.fixture
def url(postgres_server):
    """A new store schema's URL on the test server, dropped after the test."""
    schema = f"test_{uuid.uuid4().hex[:16]}"
    yield f"{postgres_server}{'&' if '?' in postgres_server else '?'}schema={schema}"
    with psycopg.connect(postgres_server, autocommit=True) as conn:
        conn.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


def _hold_the_writers_lock(url: str, entered: threading.Event, release: threading.Event):
    """Another writer (its own Store, its own connections) holding an ordered commit."""
    holder = memcommit.open(url)

    def hold() -> None:
        with holder.tenant("z").commit(message="slow") as tx:
            tx.add("held")
            holder.tenant("z").find()  # a read inside the block orders it: the lock is held
            entered.set()
            release.wait(20)
        holder.close()

    thread = threading.Thread(target=hold)
    thread.start()
    assert entered.wait(20)
    return thread


def test_a_tenant_waiting_for_the_lock_stalls_no_other_tenant(url):
    store = memcommit.open(url)
    with store.tenant("b").commit(message="seed") as tx:
        tx.add("The office is in Lyon.")
    entered, release = threading.Event(), threading.Event()
    holder = _hold_the_writers_lock(url, entered, release)
    threading.Timer(5, release.set).start()  # lets a land even if b is never answered first
    answered: list[str] = []

    async def session() -> None:
        async with connect(create_server(store, "a")) as a, connect(create_server(store, "b")) as b:

            async def remember() -> None:
                await call(a, "remember", content="Written while z held the lock.")
                answered.append("a")

            async def read() -> None:
                await anyio.sleep(0.3)  # a is waiting for the lock by now
                found = await call(b, "recall", query="office")
                assert "Lyon" in found["context"]
                assert len((await call(b, "log"))["commits"]) == 1
                answered.append("b")
                release.set()

            async with anyio.create_task_group() as group:
                group.start_soon(remember)
                group.start_soon(read)

    try:
        run_async(session)
    finally:
        release.set()
        holder.join(20)
    assert answered == ["b", "a"]
    assert [m.content for m in store.tenant("a").find()] == ["Written while z held the lock."]
    store.close()


def test_a_call_cancelled_while_its_commit_lands_is_still_announced(url):
    """The client gives up on a remember waiting for the lock; its thread goes on and
    commits, and a subscriber of working memory hears of it all the same."""
    from mcp import Client

    store = memcommit.open(url)
    with store.tenant("a").commit(message="seed") as tx:
        tx.add("seed")
    entered, release = threading.Event(), threading.Event()
    holder = _hold_the_writers_lock(url, entered, release)
    server = create_server(store, "a")
    updates: list[str] = []

    async def heard(message) -> None:
        root = getattr(message, "root", message)
        if getattr(root, "method", None) == "notifications/resources/updated":
            updates.append(str(root.params.uri))

    async def session() -> None:
        async with (
            Client(server, mode="legacy", cache=None, message_handler=heard) as watcher,
            Client(server, mode="legacy", cache=None) as writer,
        ):
            await watcher.subscribe_resource("memcommit://working")
            with anyio.move_on_after(0.5) as waiting:
                await writer.call_tool("remember", {"content": "written after a cancel"})
            assert waiting.cancelled_caught
            release.set()
            with anyio.fail_after(20):
                while not updates:
                    await anyio.sleep(0.05)

    try:
        run_async(session)
    finally:
        release.set()
        holder.join(20)
    assert updates == ["memcommit://working"]
    assert [m.content for m in store.tenant("a").find()] == ["seed", "written after a cancel"]
    store.close()
