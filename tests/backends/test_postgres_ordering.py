"""Commits the server orders as they land (PostgreSQL): where a commit goes, and what it holds.

A block that only adds, at the clock's time, takes no lock: the server numbers it
after whatever landed first and completes its hashes (`postgres_sequence`). A block
that asks for its seq or time, reads the store, adds more than `UNORDERED_MOST`
memories or sets ``now=`` is ordered there and then, and holds the writers' lock.
Either way the chain verifies, and the memories a block was given carry the commit
they landed in. Two Store objects on one schema stand for two writers.
"""

from __future__ import annotations

import enum
import threading
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import memcommit
from memcommit.errors import InvalidInput
from memcommit.store.backends import postgres_sequence
from memcommit.store.pending import UNORDERED_MOST

pytestmark = pytest.mark.postgres


@pytest.fixture
def two(pg_url):
    """Two writers on one new store, the first of them having landed commit 1."""
    url = pg_url()
    first, second = memcommit.open(url), memcommit.open(url)
    with first.commit(message="one") as tx:
        tx.add("already there")
    yield first, second
    first.close()
    second.close()


def assert_carries(memory, commit) -> None:
    assert (memory.created_commit, memory.updated_commit) == (commit.seq, commit.seq)
    assert memory.created_at == memory.updated_at == commit.time


def test_a_commit_passed_by_another_lands_after_it_and_its_memories_say_so(two):
    first, second = two
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    with first.commit(message="slow") as tx:
        slow = tx.add("added before the other landed", tags=["a"], metadata={"k": "ü"})
        assert tx.unordered
        with second.commit(message="fast", now=later) as passing:
            passing.add("landed first")
    fast, landed = passing.result, tx.result
    assert (fast.seq, landed.seq) == (2, 3)
    assert landed.parent == fast.id and landed.id.startswith(f"{3:012x}")
    assert landed.time == fast.time == later  # never before the commit it follows
    assert_carries(slow, landed)
    assert first.get(slow.id) == slow
    assert [c.seq for c in first.log()] == [3, 2, 1]
    assert first.verify().ok and first.check().ok


@pytest.mark.parametrize("how", ["seq", "read", "bulk"])
def test_a_block_ordered_midway_moves_what_it_added_before(two, how):
    first, second = two
    with first.commit(message="midway") as tx:
        early = [tx.add(f"early {i}") for i in range(UNORDERED_MOST if how == "bulk" else 2)]
        with second.commit(message="passes") as passing:
            passing.add("lands while the first is unordered")
        if how == "seq":
            assert tx.pending.seq == 3
        elif how == "read":
            assert len(first.find()) == 2  # the two landed; its own adds are not written yet
        late = tx.add("after it was ordered")  # the bulk block's 65th orders it
        assert not tx.unordered
    assert passing.result.seq == 2 and tx.result.seq == 3
    for memory in (*early, late):
        assert_carries(memory, tx.result)
    assert first.verify().ok


@pytest.mark.parametrize("how", ["now", "seq", "read"])
def test_an_ordered_block_holds_the_writers_lock_until_it_lands(two, how):
    first, second = two
    seen: list[int] = []
    with first.commit(
        message="holds", now=datetime.now(timezone.utc) if how == "now" else None
    ) as tx:
        if how == "seq":
            assert tx.pending.seq == 2
        elif how == "read":
            first.find()
        assert not tx.unordered

        def other() -> None:
            with second.commit(message="waits") as waiting:
                waiting.add("after the holder")
            seen.append(waiting.result.seq)

        thread = threading.Thread(target=other)
        thread.start()
        thread.join(0.5)
        assert thread.is_alive() and not seen  # waiting for the lock this block holds
        tx.add("held")
    thread.join(10)
    assert tx.result.seq == 2 and seen == [3]
    assert first.verify().ok


def test_unordered_blocks_that_fail_or_change_nothing_land_nothing(two):
    first, _ = two
    with first.commit(message="nothing") as tx:
        pass
    assert tx.result is None
    with pytest.raises(RuntimeError), first.commit(message="fails") as tx:
        tx.add("never written")
        raise RuntimeError("the agent's own code failed")
    with first.commit(message="next") as tx:  # the connection went back clean
        tx.add("written")
    assert [c.message for c in first.log()] == ["next", "one"]
    assert tx.result.seq == 2


_text = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"))
_word = _text.filter(str.strip)
_fields = st.fixed_dictionaries(
    {
        "content": _word,
        "kind": st.sampled_from(memcommit.KINDS),
        "session": st.none() | _word,
        "key": st.none() | _word,
        "importance": st.floats(0, 1),
        "tags": st.lists(_word, max_size=3, unique=True),
        "always": st.booleans(),
        "metadata": st.dictionaries(
            _word, st.integers() | _text | st.floats(allow_nan=False, allow_infinity=False)
        ),
        "valid_from": st.none()
        | st.datetimes(timezones=st.just(timezone.utc), min_value=datetime(1990, 1, 1)),
    }
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(memories=st.lists(_fields, min_size=1, max_size=3))
def test_the_server_hashes_as_the_chain_is_specified_whatever_the_fields(two, memories):
    """The server completes the version digests and the commit hash; `verify` recomputes
    both from the stored fields by the specification (`seals`): they must agree."""
    first, second = two
    with first.commit(message="fields ✓") as tx:
        made = [tx.add(**fields) for fields in memories]
        with second.commit(message="passes") as passing:
            passing.add("so the server moves the first")
    for memory in made:
        assert_carries(memory, tx.result)
        assert first.get(memory.id) == memory
    assert first.verify().ok


def test_a_session_that_dropped_the_prepared_statement_prepares_it_again(pg_url):
    """`SEQUENCE` is prepared once per connection; a session reset (``DISCARD ALL``, as a
    pooler may run) drops it, and the next unordered commit prepares it again."""
    with memcommit.open(pg_url(), pool_size=1) as store:
        with store.commit(message="prepares") as tx:
            tx.add("first")
        backend = store._core.backend
        with backend._pool.connection() as conn:  # the pool's one connection
            assert conn in backend._prepared
            conn.execute("DISCARD ALL")
            conn.execute(backend._setup)  # what the pool's configure set, which DISCARD reset
        with store.commit(message="after the reset") as tx:
            tx.add("lands")
        assert tx.result.seq == 2 and store.verify().ok


@pytest.mark.parametrize("change", ["update", "invalidate", "purge", "archive", "read"])
def test_a_memory_added_then_changed_in_the_block_carries_the_final_commit(two, change):
    """Changing a memory the block added orders the block first, so the new version (and
    what `read` answers) carries the commit it lands in, even when another passed it."""
    first, second = two
    with first.commit(message="add then change") as tx:
        added = tx.add("to be changed", key="k")
        with second.commit(message="passes") as passing:
            passing.add("lands between")
        if change == "update":
            tx.update(added.id, content="changed")
        elif change == "invalidate":
            tx.invalidate(added.id)
        elif change == "purge":
            tx.purge(added.id)
        elif change == "archive":
            tx.archive(added.id)
        else:
            (read,) = tx.read([added.id])
            assert read.created_commit == 3
    assert tx.result.seq == 3
    for version in first.history(added.id):
        assert_carries(version, tx.result)
    assert first.verify().ok and first.check().ok


def test_reads_of_the_log_inside_an_unordered_block_see_what_passed_it(two):
    first, second = two
    with first.commit(message="reads the log") as tx:
        tx.add("added first")
        with second.commit(message="passes") as passing:
            passing.add("lands between")
        assert first.head.seq == 2  # the log is read under the lock: ordered first
        assert [c.message for c in first.log()] == ["passes", "one"]
        assert not tx.unordered
    assert tx.result.seq == 3


def test_pending_after_a_block_that_landed_nothing_is_its_draft(two):
    first, _ = two
    with first.commit(message="nothing") as tx:
        pass
    assert tx.pending.seq == 2 and tx.result is None
    with pytest.raises(RuntimeError), first.commit(message="fails") as tx:
        tx.add("never written")
        raise RuntimeError("the agent's own code failed")
    assert tx.pending.seq == 2


def test_writers_ignore_a_sessions_default_isolation(pg_url):
    """A session defaulting to REPEATABLE READ would read the tip from a snapshot taken
    before the lock: every writer's transaction is READ COMMITTED, on either path."""
    url = pg_url(options="-c default_transaction_isolation=repeatable\\ read")
    with memcommit.open(url) as first, memcommit.open(url) as second:
        for ordered in (False, True):

            def commit(store, message, ordered=ordered) -> None:
                with store.commit(message=message) as tx:
                    if ordered:
                        assert tx.pending.seq > 0
                    tx.add(message)

            threads = [
                threading.Thread(target=commit, args=(store, f"{name}-{ordered}-{i}"))
                for i in range(5)
                for name, store in (("a", first), ("b", second))
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join(30)
        assert len(first.log()) == 20 and first.verify().ok


def test_an_agents_answers_name_the_commit_they_landed_in(two):
    """`remember` without a request id stays unordered until it lands (its answer takes
    the seq after); with one, the answer is kept in the commit, so the seq is asked for."""
    from memcommit.interfaces.agent import AgentMemory

    first, second = two
    agent = AgentMemory(first, "agent")
    plain = agent.remember("the deploy window is Tuesday")
    assert plain["commit"] == first.head.seq == first.get(plain["id"]).created_commit
    kept = agent.remember("the editor is vim", request_id="r-1")
    assert kept["commit"] == first.head.seq == first.get(kept["id"]).created_commit
    with second.commit(message="passes") as passing:
        passing.add("another writer")
    assert agent.remember("the editor is vim", request_id="r-1") == kept  # a retry: no commit
    assert first.head.seq == passing.result.seq


_AWKWARD = [
    "it's",
    "''",
    "back\\slash \\' and \\\\",
    "'); DROP TABLE commits; --",
    "$$dollar$$ quoted $tag$",
    "100% of %s and %(name)s",
    "E'\\x41' ünïcödé ✓ 🧠",
    "line\nbreak\ttab\r",
]


@pytest.mark.parametrize(
    ("conforming", "encoding"), [("on", "UTF8"), ("off", "UTF8"), ("on", "LATIN1")]
)
def test_what_a_commit_quotes_in_lands_as_it_was_given(pg_url, conforming, encoding):
    """An unordered commit's values go to the server quoted in by hand on a UTF-8
    connection (`postgres_sequence._quoted`), whatever ``standard_conforming_strings``,
    and by psycopg's client cursor on any other: quotes, backslashes, dollars and SQL in
    a message, an author or a memory land exactly as given, and the chain verifies."""
    with memcommit.open(pg_url(client_encoding=encoding), pool_size=1) as store:
        backend = store._core.backend
        with backend._pool.connection() as conn:
            conn.execute(f"SET standard_conforming_strings = {conforming}")
        for text in _AWKWARD if encoding == "UTF8" else ["café ü", "it's \\ é"]:
            with store.commit(message=text, author=text) as tx:
                added = tx.add(text, key=text, tags=[text], metadata={text: text})
                assert tx.unordered
            assert tx.result.message == text
            assert store.get(added.id) == added and added.content == text
            assert [(c.message, c.author) for c in store.log(limit=1)] == [(text, text)]
        assert store.verify().ok and store.check().ok


@pytest.mark.parametrize("how", ["unordered", "unordered-two", "ordered", "big", "read"])
def test_text_a_connections_encoding_cannot_carry_is_bad_input(pg_url, how):
    """On a LATIN1 connection an emoji cannot be sent: whichever way a commit goes (or a
    read's parameter), the caller gets `InvalidInput` naming ``client_encoding``, nothing
    lands, and the store goes on. An unordered commit of two adds or more sends its
    versions as one JSON text, which must carry the emoji as it is, not ``\\u`` escaped."""
    with memcommit.open(pg_url(client_encoding="LATIN1"), pool_size=1) as store:
        with store.commit() as tx:
            tx.add("café")
        with pytest.raises(InvalidInput) as err:
            if how == "read":
                store.find(key="brain 🧠")
            when = None if how.startswith("unordered") else datetime.now(timezone.utc)
            with store.commit(now=when) as tx:
                for n in range({"big": UNORDERED_MOST + 1, "unordered-two": 2}.get(how, 1)):
                    tx.add(f"brain {n} 🧠")
        assert err.value.field == "client_encoding" and "🧠" in err.value.reason
        assert [c.seq for c in store.log()] == [1]
        with store.commit() as tx:
            tx.add("still café")
        assert store.verify().ok and store.check().ok


def test_hand_quoting_reads_the_same_whatever_the_server_was_last_heard_to_say(pg_url):
    """`_quoted` writes literals that read as given with ``standard_conforming_strings``
    on and off, so a reload the client has not heard of yet changes nothing; it leaves
    a connection in another encoding than UTF-8, and a NUL, to the client cursor."""
    with (
        memcommit.open(pg_url(), pool_size=1) as store,
        store._core.backend._pool.connection() as conn,
    ):
        for conforming in ("on", "off"):
            conn.execute(f"SET standard_conforming_strings = {conforming}")
            for text in _AWKWARD:
                quoted = postgres_sequence._quoted(conn, [text, None])
                assert quoted is not None
                assert conn.execute(f"SELECT {quoted}".encode()).fetchone() == (text, None)
        assert postgres_sequence._quoted(conn, ["a\x00b"]) is None
        conn.execute("SET client_encoding = 'LATIN1'")
        assert postgres_sequence._quoted(conn, ["plain"]) is None


def test_values_go_to_the_server_as_the_text_of_their_value():
    """`_texts`: what a one-memory commit quotes in, column by column (`_quoted`)."""

    class Level(enum.IntEnum):
        HIGH = 3

    class Share(float):
        def __repr__(self) -> str:
            return "Share(...)"

    class Markup(str):  # as markupsafe's: escapes what is added to it
        def __add__(self, other: str) -> str:
            return str.__add__(self, other.replace("'", "&#39;"))

    class Nanos(datetime):  # as pandas' Timestamp: nanoseconds unless told a timespec
        def isoformat(self, sep: str = "T", timespec: str = "auto") -> str:
            text = super().isoformat(sep, timespec)
            return text if timespec != "auto" else text[:26] + "789" + text[26:]

    when = datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=timezone.utc)
    later = Nanos(2026, 1, 2, 4, 4, 5, 7, tzinfo=timezone(timedelta(hours=1)))
    values = ["text", Markup("it's"), None, True, False, 7, Level.HIGH, 0.1, Share(0.25)]
    texts = postgres_sequence._texts([*values, when, later])
    assert texts == [
        "text", "it's", None, "true", "false", "7", "3", "0.1", "0.25",
        "2026-01-02T03:04:05.000006+00:00", "2026-01-02T03:04:05.000007+00:00",
    ]  # fmt: skip
    assert all(type(t) is str for t in texts if t is not None)


def test_text_of_a_str_subclass_lands_as_its_value(pg_url):
    """A str subclass that changes ``+`` (markupsafe's Markup escapes what is added to
    it) lands as its value in a one-memory commit, quoted in like any text."""

    def escaped(text: str) -> str:
        return text if isinstance(text, Markup) else str.replace(text, "'", "&#39;")

    class Markup(str):  # as markupsafe's: what is added or replaced in is escaped
        def replace(self, old: str, new: str, count: int = -1) -> Markup:  # type: ignore[override]
            return Markup(str.replace(self, escaped(old), escaped(new), count))

        def __add__(self, other: str) -> Markup:
            return Markup(str.__add__(self, escaped(other)))

        def __radd__(self, other: str) -> Markup:
            return Markup(str.__add__(escaped(other), self))

    with memcommit.open(pg_url(), pool_size=1) as store:
        with store.commit(message=Markup("m's")) as tx:
            added = tx.add(Markup("it's <b>"), key=Markup("k'"), tags=[Markup("t'")])
            assert tx.unordered
        assert store.get(added.id).content == "it's <b>" == added.content
        assert tx.result.message == "m's" and store.verify().ok


def test_the_commit_statements_run_their_generic_plans_from_the_first_commit(pg_url):
    """Neither commit statement (one version, or several as JSON) is planned for its
    values: PostgreSQL would plan their first five executions one by one before
    settling on the generic plan."""
    with memcommit.open(pg_url(), pool_size=1) as store:
        for n in range(3):
            with store.commit(message=f"c{n}") as tx:
                tx.add(f"memory {n}")
            with store.commit(message=f"two {n}") as tx:
                tx.add(f"memory {n}a")
                tx.add(f"memory {n}b")
        with store._core.backend._pool.connection() as conn:
            plans = conn.execute(
                "SELECT name, generic_plans, custom_plans FROM pg_prepared_statements"
                " WHERE name LIKE 'memcommit_sequence%' ORDER BY name"
            ).fetchall()
        assert store.verify().ok
    assert plans == [("memcommit_sequence", 3, 0), ("memcommit_sequence_one", 3, 0)]


def test_the_ordering_statement_is_prepared_again_when_it_alone_is_dropped(pg_url):
    """A session that lost only some of what an unordered commit executes (a DEALLOCATE)
    has just that prepared again; the commit lands once."""
    with memcommit.open(pg_url(), pool_size=1) as store:
        with store.commit(message="prepares") as tx:
            tx.add("first")
        backend = store._core.backend
        with backend._pool.connection() as conn:
            conn.execute("DEALLOCATE memcommit_order")
        with store.commit(message="after the deallocate") as tx:
            tx.add("lands")
        assert tx.result.seq == 2 and [c.seq for c in store.log()] == [2, 1]
        assert store.verify().ok
