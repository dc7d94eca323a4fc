"""MemcommitMemoryService judged against ADK's own InMemoryMemoryService, on both backends.

google-adk's published packages carry no tests (its sdist holds src/ and the
CLI's conformance runner, no memory tests), so the judge is ADK's reference
implementation of the same seam: one scenario of sessions re-added, event
deltas, deletes, several users and apps, CJK text and more matches than a search
returns, run against ``InMemoryMemoryService`` and against memcommit ranking by
``keyword_overlap`` (ADK's rule as a recall scorer); every answer must be equal.
The default path (recall's own scorer), direct memories, tenants and bad input
are tested on their own.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from dataclasses import dataclass

import pytest
from upstream import require

from memcommit.errors import InvalidInput
from memcommit.model import Memory

adk = require("memcommit.integrations.google_adk")
from google.adk.events.event import Event  # noqa: E402
from google.adk.memory import InMemoryMemoryService  # noqa: E402
from google.adk.memory.memory_entry import MemoryEntry  # noqa: E402
from google.adk.sessions.session import Session  # noqa: E402
from google.genai import types  # noqa: E402

APP, USER = "travel", "ada"


@dataclass
class Asked:
    """What a scorer reads of a query: its text."""

    text: str


T0 = 1_790_000_000.0


def event(author, text=None, *, n=0, call=None):
    """An ADK event of ``text`` (or of a function call, or of no content at all)."""
    parts = [types.Part(text=text)] if text is not None else []
    if call is not None:
        parts.append(types.Part(function_call=types.FunctionCall(name=call, args={"q": 1})))
    content = types.Content(role=author, parts=parts) if parts else None
    return Event(author=author, content=content, timestamp=T0 + n, invocation_id="inv")


def session(events, *, id="s1", app=APP, user=USER):
    return Session(id=id, app_name=app, user_id=user, events=list(events))


def dumped(response):
    return [m.model_dump(mode="json") for m in response.memories]


def tied(answer, query):
    """An answer as its runs of equally matching entries, each run in id order.

    Both services rank by matched words and keep ties in the order they hold
    events; ADK holds them by session (the order sessions were first added),
    memcommit by when each event was first stored. Only the order inside a run
    can differ, and only across sessions.
    """
    runs: dict = {}
    for entry in answer:
        text = " ".join(p["text"] for p in entry["content"]["parts"] if p.get("text"))
        words = adk.keyword_overlap(
            Memory(id="-", content=text, metadata={"adk": {"text": text}}), Asked(query)
        )
        runs.setdefault(words, []).append(entry)
    return [(words, sorted(run, key=lambda e: e["id"])) for words, run in runs.items()]


@pytest.fixture
def memory(make_store):
    return make_store()


@pytest.fixture
def service(memory):
    return adk.MemcommitMemoryService(memory)


def story() -> dict:
    """The events of the scenario, made once so that both services see the same ids."""
    return {
        "s1": [
            event("user", "I want to fly to Lisbon in May", n=1),
            event("travel_agent", "Lisbon in May is lovely. Shall I look at flights?", n=2),
            event("user", "Yes please, and a window seat", n=3),
            event("travel_agent", call="search_flights", n=4),
            event("travel_agent", n=5),
            event("travel_agent", "I found three flights to Lisbon", call="book", n=6),
        ],
        "s2": [
            event("user", "Book me a hotel in Lisbon near the river", n=10),
            event("travel_agent", "The hotel by the river is booked", n=11),
        ],
        "later": [
            event("user", "Change the window seat to an aisle seat", n=12),
            event("user", "Add breakfast to the hotel", n=13),
            event("user", "Remember: I am vegetarian", n=14),
            event("user", "Lisbon for me too", n=20),
            event("user", "Lisbon ops", n=21),
        ],
        "cjk": [event("user", "私はPythonを使う", n=30), event("user", "東京に行きたい", n=31)],
        "many": [event("user", f"note {n} about the trip budget", n=40 + n) for n in range(14)],
    }


async def scenario(service, events: dict) -> list:
    """Every search answer of one memory service through sessions, deltas and deletes."""
    seen: list = []

    async def look(*queries, app=APP, user=USER):
        for query in queries:
            found = await service.search_memory(app_name=app, user_id=user, query=query)
            seen.append((query, dumped(found)))

    s1, s2 = list(events["s1"]), events["s2"]
    seat, breakfast, vegetarian, bob, ops = events["later"]
    await look("Lisbon flights")
    await service.add_session_to_memory(session(s1))
    await look("Lisbon flights", "window seat", "Tokyo", "", "LISBON, may!", "search_flights")
    await service.add_session_to_memory(session(s2, id="s2"))
    await look("Lisbon hotel river", "booked flights")
    s1.append(seat)
    await service.add_session_to_memory(session(s1))  # re-added: one more event
    await look("seat", "window seat")
    await service.add_session_to_memory(session(s1[:2] + s1[3:]))  # an event dropped
    await look("window seat", "Lisbon")
    delta = [s2[0], breakfast]
    await service.add_events_to_memory(app_name=APP, user_id=USER, events=delta, session_id="s2")
    await service.add_events_to_memory(app_name=APP, user_id=USER, events=[vegetarian])
    await look("hotel breakfast", "vegetarian breakfast")
    found = await service.search_memory(app_name=APP, user_id=USER, query="vegetarian")
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=found.memories[0].id)
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=s1[0].id)
    await service.delete_memory(app_name=APP, user_id=USER, memory_id="no-such-memory")
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=None)
    await service.add_session_to_memory(session(s1))  # the deleted event is not ingested again
    await look("vegetarian", "I want to fly to Lisbon", "Lisbon")
    await service.add_session_to_memory(session([bob], user="bob"))
    await service.add_session_to_memory(session([ops], app="ops"))
    await look("Lisbon", user="bob")
    await look("Lisbon", app="ops")
    await look("Lisbon", app="ops", user="bob")
    await service.add_session_to_memory(session(events["cjk"], id="s3", user="ken"))
    await look("Python", "東京", "thon", user="ken")
    await service.add_session_to_memory(session(events["many"], id="s4", user="max"))
    await look("trip budget", "note 3 trip", user="max")
    return seen


async def test_every_search_answers_as_adk_own_memory_service(memory):
    mine = adk.MemcommitMemoryService(
        memory, explain=False, recall_options={"scorer": adk.keyword_overlap}
    )
    events = story()
    theirs = await scenario(InMemoryMemoryService(), events)
    assert sum(1 for _, answer in theirs if answer) >= 15  # the scenario finds things
    ours = await scenario(mine, events)
    assert [tied(a, q) for q, a in ours] == [tied(a, q) for q, a in theirs]
    same = sum(1 for one, other in zip(ours, theirs, strict=True) if one == other)
    assert same >= len(theirs) - 1  # one answer has a tie spanning two sessions


async def test_search_is_recall_with_its_explanation(memory, now):
    service = adk.MemcommitMemoryService(memory, k=2, clock=lambda: now)
    events = [
        event("user", "Deploys run on Tuesdays after the standup", n=1),
        event("ops", "The office plant needs water on Mondays", n=2),
        event("user", "The deploy on Tuesday failed on a missing migration", n=3),
    ]
    await service.add_session_to_memory(session(events))
    found = await service.search_memory(app_name=APP, user_id=USER, query="deploys run")
    ctx = service.recall(app_name=APP, user_id=USER, query="deploys run")
    ids = [row.memory.id for row in ctx.rows if row.reason is None]
    assert [m.custom_metadata["memcommit"]["id"] for m in found.memories] == ids
    assert found.memories[0].content.parts[0].text == "Deploys run on Tuesdays after the standup"
    assert found.memories[0].author == "user"
    assert found.memories[0].custom_metadata["memcommit"]["score"] > 0
    reasons = {row.memory.content: row.reason for row in ctx.rows}
    assert reasons["ops: The office plant needs water on Mondays"] == "over_record_limit"
    assert reasons["adk session s1"] == "archived"  # the trace's root is never an answer
    wider = service.recall(app_name=APP, user_id=USER, query="deploy", max_records=5)
    assert len([r for r in wider.rows if r.reason is None]) == 3  # the call lifts k=2


async def test_a_session_is_a_trace_and_deletes_keep_history(memory, service):
    events = [event("user", "one", n=1), event("model", "two", n=2), event("user", call="f", n=3)]
    await service.add_session_to_memory(session(events))
    await service.add_session_to_memory(session(events))  # again: nothing changes
    head = memory.head_seq
    await service.add_session_to_memory(session(events))
    assert memory.head_seq == head
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=events[0].id)
    (trace,) = service.view(APP).traces()
    assert trace.root.tier == "archive" and trace.root.session == "s1"
    steps = [
        (s.content, s.status, s.scope) for s in service.view(APP).find(trace=trace.id, live=False)
    ]
    assert steps[1:] == [("user: one", "invalidated", USER), ("model: two", "active", USER)]
    assert memory.tenant(APP).log()[0].message == f"adk: delete {events[0].id} of {USER}"


async def test_a_session_added_at_once_from_many_threads_is_one_trace(memory, service):
    events = [event("user", f"line {n}", n=n) for n in range(3)]
    await asyncio.gather(*(service.add_session_to_memory(session(events)) for _ in range(6)))
    (trace,) = service.view(APP).traces()
    assert [step.content for step in trace.steps] == [
        "user: line 0",
        "user: line 1",
        "user: line 2",
    ]


async def test_direct_memories_consolidate_by_id(memory, service):
    fact = types.Content(role="user", parts=[types.Part(text="Ada prefers aisle seats")])
    entries = [MemoryEntry(id="seat", content=fact, author="extractor", custom_metadata={"a": 1})]
    await service.add_memory(app_name=APP, user_id=USER, memories=entries, custom_metadata={"b": 2})
    newer = types.Content(role="user", parts=[types.Part(text="Ada now prefers window seats")])
    await service.add_memory(
        app_name=APP, user_id=USER, memories=[MemoryEntry(id="seat", content=newer)]
    )
    await service.add_memory(
        app_name=APP, user_id=USER, memories=[MemoryEntry(content=fact, author="x")]
    )
    found = await service.search_memory(app_name=APP, user_id=USER, query="window seats")
    first = found.memories[0]
    assert (first.id, first.content.parts[0].text) == ("seat", "Ada now prefers window seats")
    assert {k: v for k, v in first.custom_metadata.items() if k != "memcommit"} == {}
    (held,) = [m for m in service.view(APP).find() if m.metadata["adk"]["id"] == "seat"]
    assert [v.content for v in service.view(APP).history(held.id)] == [
        "Ada prefers aisle seats",
        "Ada now prefers window seats",
    ]
    anonymous = next(m for m in found.memories if m.id != "seat")
    await service.delete_memory(app_name=APP, user_id=USER, memory_id=anonymous.id)
    again = await service.search_memory(app_name=APP, user_id=USER, query="seats")
    assert [m.id for m in again.memories] == ["seat"]


async def test_apps_are_tenants_and_users_scopes(memory, service):
    secret = event("user", "The vault code is 4711", n=1)
    await service.add_session_to_memory(session([secret]))
    await service.add_memory(
        app_name=APP,
        user_id=USER,
        memories=[
            MemoryEntry(id="v", content=types.Content(parts=[types.Part(text="vault 4711")]))
        ],
    )
    for app, user in (("other", USER), (APP, "eve"), ("other", "eve")):
        found = await service.search_memory(app_name=app, user_id=user, query="vault code 4711")
        assert found.memories == []
        await service.delete_memory(app_name=app, user_id=user, memory_id=secret.id)
        await service.delete_memory(app_name=app, user_id=user, memory_id="v")
        ctx = service.recall(app_name=app, user_id=user, query="vault")
        assert ctx.selected == [] and all(row.memory.tenant == app for row in ctx.rows)
    assert memory.tenant("other").find() == []
    found = await service.search_memory(app_name=APP, user_id=USER, query="vault code 4711")
    assert {m.id for m in found.memories} == {secret.id, "v"}


def fact(text, id=None):
    """A direct memory of ``text``, as an agent hands one to ``add_memory``."""
    return MemoryEntry(id=id, content=types.Content(parts=[types.Part(text=text)]))


async def test_scopes_are_the_services_to_bind(memory, service):
    """No recall option reaches past the user: ``scopes`` is refused, as another tenant is."""
    await service.add_memory(app_name=APP, user_id="bob", memories=[fact("bob's trains plan")])
    for scopes in (None, ["bob"]):
        with pytest.raises(InvalidInput) as raised:
            adk.MemcommitMemoryService(memory, recall_options={"scopes": scopes})
        assert raised.value.field == "scopes"
        with pytest.raises(InvalidInput) as raised:
            service.recall(app_name=APP, user_id=USER, query="trains", scopes=scopes)
        assert raised.value.field == "scopes"
    with pytest.raises(InvalidInput) as raised:
        service.recall(app_name=APP, user_id=USER, query="trains", tenant="other")
    assert raised.value.field == "tenant"
    assert (await service.search_memory(app_name=APP, user_id=USER, query="trains")).memories == []


async def test_memories_the_service_did_not_write_never_break_it(memory, service):
    """Memories of the user's scope with metadata named "adk" that are not the service's own."""
    await service.add_memory(app_name=APP, user_id=USER, memories=[fact("ada likes trains")])
    with memory.tenant(APP).commit(message="remember, through MCP") as tx:
        tx.add("a note on trains", kind="fact", scope=USER, metadata={"adk": {"id": "n1"}})
        bad = {"text": "trains", "content": {"parts": "no list of parts"}}
        tx.add("trains, trains", kind="fact", scope=USER, metadata={"adk": bad})
    found = await service.search_memory(app_name=APP, user_id=USER, query="trains")
    assert [m.content.parts[0].text for m in found.memories] == ["ada likes trains"]
    await service.delete_memory(app_name=APP, user_id=USER, memory_id="n1")
    await service.add_memory(app_name=APP, user_id=USER, memories=[fact("a new note", id="n1")])
    held = memory.tenant(APP).find(scopes=[USER])
    assert sorted(m.content for m in held) == [
        "a new note",
        "a note on trains",
        "ada likes trains",
        "trains, trains",
    ]


@pytest.mark.parametrize(
    ("scorer", "outranking"), [(None, 9), (adk.keyword_overlap, 4)], ids=["default", "keywords"]
)
async def test_a_search_returns_k_entries_past_memories_the_service_did_not_write(
    memory, scorer, outranking
):
    """Memories of the user's scope the service did not write outrank its entries (all nine
    by recall's scorer; by ADK's word count, the four whose "adk" text matches two words)."""
    options = {} if scorer is None else {"scorer": scorer}
    service = adk.MemcommitMemoryService(memory, k=3, recall_options=options)
    notes = [f"trains note {n}" for n in range(4)]
    await service.add_memory(app_name=APP, user_id=USER, memories=[fact(t) for t in notes])
    with memory.tenant(APP).commit(message="remember, through MCP") as tx:
        for n in range(9):
            foreign = {"adk": {"text": "trains plan"}} if n % 2 else {}
            tx.add(f"trains plan, trains plan {n}", kind="fact", scope=USER, metadata=foreign)
    found = await service.search_memory(app_name=APP, user_id=USER, query="trains plan")
    assert len(found.memories) == 3 and {m.content.parts[0].text for m in found.memories} < set(
        notes
    )
    ctx = service.recall(app_name=APP, user_id=USER, query="trains plan")
    assert len(ctx.selected) == outranking + 3  # the cap ends at the third entry
    assert [m.custom_metadata["memcommit"]["id"] for m in found.memories] == [
        m.id for m in ctx.selected if m.content in notes
    ]
    every = adk.MemcommitMemoryService(memory, k=10, recall_options=options)
    found = await every.search_memory(app_name=APP, user_id=USER, query="trains plan")
    assert sorted(m.content.parts[0].text for m in found.memories) == notes  # all there are


async def test_bad_input_is_a_typed_error_and_lands_nothing(memory, service):
    await service.add_session_to_memory(session([event("user", "hello", n=1)]))
    head = memory.head_seq
    good = [event("user", "fine", n=2)]
    text = types.Content(parts=[types.Part(text="x")])
    for call, field in (
        (service.add_session_to_memory({"id": "s1"}), "session"),
        (service.add_events_to_memory(app_name=APP, user_id=USER, events="e"), "events"),
        (service.add_events_to_memory(app_name=APP, user_id=USER, events=[*good, "e"]), "events"),
        (service.add_events_to_memory(app_name="", user_id=USER, events=good), "app_name"),
        (service.add_events_to_memory(app_name=APP, user_id=7, events=good), "user_id"),
        (
            service.add_events_to_memory(app_name=APP, user_id=USER, events=good, session_id=3),
            "session_id",
        ),
        (
            service.add_events_to_memory(
                app_name=APP, user_id=USER, events=good, custom_metadata={"t": object()}
            ),
            "custom_metadata",
        ),
        (service.add_memory(app_name=APP, user_id=USER, memories=[text]), "memories"),
        (
            service.add_memory(
                app_name=APP, user_id=USER, memories=[MemoryEntry(content=types.Content())]
            ),
            "memories",
        ),
        (service.search_memory(app_name=APP, user_id=USER, query=None), "query"),
        (service.delete_memory(app_name=APP, user_id=USER, memory_id=5), "memory_id"),
    ):
        with pytest.raises(InvalidInput) as raised:
            await call
        assert raised.value.field == field
    assert memory.head_seq == head
    with pytest.raises(InvalidInput) as raised:
        service.recall(app_name=APP, user_id=USER, query="x", max_record=3)
    assert raised.value.field == "max_record"
    for bad in ({"k": -1}, {"recall_options": {"scorer_name": "x"}}):
        with pytest.raises(InvalidInput):
            adk.MemcommitMemoryService(memory, **bad)
    with pytest.raises(InvalidInput):
        adk.MemcommitMemoryService(42)


@pytest.mark.parametrize("app", [" travel", "travel\t", "tra\u200bvel", "travel\u00a0", "a\nb"])
async def test_an_app_name_that_prints_as_another_is_refused_as_a_tenant(memory, service, app):
    """The app is the tenant: a name the store refuses to write is InvalidInput naming it."""
    writes = (
        service.add_session_to_memory(session([event("user", "hello", n=1)], app=app)),
        service.add_events_to_memory(app_name=app, user_id=USER, events=[event("user", "hi")]),
        service.add_memory(app_name=app, user_id=USER, memories=[fact("a fact")]),
    )
    for write in writes:
        with pytest.raises(InvalidInput) as raised:
            await write
        assert (raised.value.field, raised.value.value) == ("tenant", app)
    assert (await service.search_memory(app_name=app, user_id=USER, query="hello")).memories == []
    await service.delete_memory(app_name=app, user_id=USER, memory_id="x")
    assert memory.head_seq == 0 and memory.tenants() == []


async def test_a_path_opens_a_store_that_close_closes(tmp_path):
    service = adk.MemcommitMemoryService(tmp_path / "adk.db")
    await service.add_session_to_memory(session([event("user", "kept on disk", n=1)]))
    service.close()
    again = adk.MemcommitMemoryService(str(tmp_path / "adk.db"))
    found = await again.search_memory(app_name=APP, user_id=USER, query="disk")
    assert [m.content.parts[0].text for m in found.memories] == ["kept on disk"]
    again.close()


def test_a_missing_adk_is_a_typed_error_naming_the_extra():
    code = textwrap.dedent(
        """
        import sys
        sys.modules["google.adk"] = None  # as if google-adk were not installed
        from memcommit.errors import MissingExtra
        try:
            import memcommit.integrations.google_adk
        except MissingExtra as exc:
            print(exc.field, exc.value, isinstance(exc, ImportError), exc)
        """
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.startswith("extra google-adk True ")
    assert "pip install 'memcommit[google-adk]'" in done.stdout
